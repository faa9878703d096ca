/**
 * Word wrapping for text Ink would otherwise wrap itself: Ink keeps the space a line was broken at
 * as the first character of the next line, so a wrapped description starts its lines with a stray
 * space. Text wrapped here to the width it is shown in is left alone by Ink.
 */

/** Wraps each line of `text` at spaces to at most `width` columns; a longer word is cut. */
export function wrapWords(text: string, width: number): string {
  const columns = Math.max(1, width)
  return text
    .split('\n')
    .map((line) => wrapLine(line, columns))
    .join('\n')
}

function wrapLine(line: string, width: number): string {
  const indent = /^ */.exec(line)![0]
  const lines: string[] = []
  let current = indent
  for (const word of line.slice(indent.length).split(/ +/)) {
    if (word === '') continue
    const joined = current.trim() === '' ? current + word : `${current} ${word}`
    if (joined.length <= width) {
      current = joined
      continue
    }
    if (current.trim() !== '') lines.push(current)
    current = word
    while (current.length > width) {
      lines.push(current.slice(0, width))
      current = current.slice(width)
    }
  }
  lines.push(current)
  return lines.join('\n')
}
