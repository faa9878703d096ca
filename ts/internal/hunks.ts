/**
 * Unified-diff helpers for hosts that render hunks only.
 *
 * @internal
 */

/**
 * The diff from its first `@@` hunk header on, without the `---`/`+++` file header and without
 * trailing newlines; `undefined` when the diff has no hunk (e.g. nothing changed).
 */
export function hunksOnly(diff: string): string | undefined {
  const start = diff.startsWith('@@') ? 0 : diff.indexOf('\n@@') + 1
  if (start === 0 && !diff.startsWith('@@')) return undefined
  return diff.slice(start).replace(/\n+$/, '')
}

/** `-l,n +l,n` of a hunk header: how many old and new lines its body holds. */
const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/

/** The name a file header pair stands for: `a.txt`, `b.txt (new file)`, `a.txt → b.txt`. */
function fileLabel(oldHeader: string, newHeader: string): string {
  const name = (header: string, side: string) => {
    const path = header.slice(4).split('\t')[0]!
    return path.startsWith(side) ? path.slice(side.length) : path
  }
  const [from, to] = [name(oldHeader, 'a/'), name(newHeader, 'b/')]
  if (from === '/dev/null') return `${to} (new file)`
  if (to === '/dev/null') return `${from} (deleted)`
  return from === to ? to : `${from} → ${to}`
}

/**
 * A diff for a viewer that colours each line by its first character (Tomo's DiffView): one
 * file's diff as its hunks only ({@link hunksOnly}); a diff of several files with each
 * `---`/`+++` header pair replaced by one plain line naming the file, so no header is drawn as
 * a removed or added line. Hunk bodies are walked by their counts, so a removed line that reads
 * `-- x` is never taken for a header. `undefined` when the diff has no hunk.
 */
export function forDiffView(diff: string): string | undefined {
  const lines = diff.replace(/\n+$/, '').split('\n')
  const out: string[] = []
  let files = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const hunk = HUNK.exec(line)
    if (hunk) {
      out.push(line)
      let [old, added] = [Number(hunk[1] ?? 1), Number(hunk[2] ?? 1)]
      while ((old > 0 || added > 0) && i + 1 < lines.length) {
        const body = lines[++i]!
        out.push(body)
        if (body.startsWith('-')) old--
        else if (body.startsWith('+')) added--
        else if (!body.startsWith('\\')) {
          old--
          added--
        }
      }
      // A "\ No newline at end of file" after the last line of the hunk.
      while (lines[i + 1]?.startsWith('\\')) out.push(lines[++i]!)
    } else if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      files++
      out.push(fileLabel(line, lines[++i]!))
    }
  }
  if (!out.some((line) => HUNK.test(line))) return undefined
  return files > 1 ? out.join('\n') : hunksOnly(diff)
}
