/**
 * Just enough Markdown for checking the docs: fenced code blocks, the links outside them, and the
 * anchors GitHub gives headings.
 */

/** A fenced code block: its info string (` ```ts check ` → `ts check`), its text, its first line (1-based). */
export interface CodeBlock {
  info: string
  code: string
  line: number
}

/** A link target written in the text, with the line it is on (1-based). */
export interface Link {
  target: string
  line: number
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/

/** The fenced code blocks of `markdown`, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  let open: { fence: string; info: string; line: number; lines: string[] } | undefined
  markdown.split('\n').forEach((text, index) => {
    const fence = FENCE.exec(text)
    if (open === undefined) {
      if (fence) open = { fence: fence[1]!, info: fence[2]!.trim(), line: index + 1, lines: [] }
    } else if (fence && fence[1]!.startsWith(open.fence) && fence[1]![0] === open.fence[0] && fence[2]!.trim() === '') {
      blocks.push({ info: open.info, code: open.lines.join('\n'), line: open.line })
      open = undefined
    } else {
      open.lines.push(text)
    }
  })
  return blocks
}

/** The lines of `markdown`, those of fenced code blocks (fences included) emptied. */
function outsideFences(markdown: string): string[] {
  let fence: string | undefined
  return markdown.split('\n').map((text) => {
    const match = FENCE.exec(text)
    if (fence === undefined) {
      if (!match) return text
      fence = match[1]
    } else if (match && match[1]!.startsWith(fence) && match[1]![0] === fence[0] && match[2]!.trim() === '') {
      fence = undefined
    }
    return ''
  })
}

/** The lines of `markdown` outside fenced blocks, with inline code spans blanked. */
function prose(markdown: string): string[] {
  return outsideFences(markdown).map((text) => text.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (span) => ' '.repeat(span.length)))
}

/** The targets of inline links and images, and of reference definitions, outside code. */
export function links(markdown: string): Link[] {
  const found: Link[] = []
  prose(markdown).forEach((text, index) => {
    for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      found.push({ target: match[1]!, line: index + 1 })
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(text)
    if (definition) found.push({ target: definition[1]!, line: index + 1 })
  })
  return found
}

/** The anchor GitHub gives a heading's text (github-slugger): lower case, punctuation dropped, spaces as `-`. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link: its text
    .replace(/`/g, '')
    .replace(/\*/g, '')
    .trim()
    .toLowerCase()
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-')
}

/** Every anchor of the headings of `markdown` (a repeated one gets `-1`, `-2`, … as on GitHub). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const text of outsideFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text)
    if (!heading) continue
    const base = slug(heading[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}
