/**
 * Baseline for the call overhead of `read_file` on a small file: `fs.promises.readFile` and line
 * numbering in JS.
 */
import { readFile } from 'node:fs/promises'

/** The whole of `path`, numbered like `read_file`. */
export async function readNumbered(path) {
  const text = await readFile(path, 'utf8')
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines.map((line, i) => `${String(i + 1).padStart(4)} | ${line}`).join('\n')
}
