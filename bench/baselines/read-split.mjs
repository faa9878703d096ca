/**
 * Baseline for `read_file`: `fs.readFile` the whole file, split it into lines and number the
 * requested range, as a JS host's own read tool does.
 */
import { readFile } from 'node:fs/promises'

/** Lines `start`…`end` (1-based, inclusive) of `path`, numbered like `read_file`. */
export async function readLines(path, start = 1, end = Infinity) {
  const text = await readFile(path, 'utf8')
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
    .slice(start - 1, end)
    .map((line, i) => `${String(start + i).padStart(4)} | ${line}`)
    .join('\n')
}
