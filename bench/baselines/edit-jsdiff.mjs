/**
 * Baseline for `edit_file`: what TypeScript agents do today — read the file, apply each edit with
 * string operations (checking that a single-occurrence edit matches exactly once), build the
 * unified diff with jsdiff's `createPatch`, write the file.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { createPatch } from 'diff'

/** Applies `edits` ({ oldString, newString, replaceAll? }) to `path`; returns the unified diff. */
export async function editFile(path, edits) {
  const original = await readFile(path, 'utf8')
  let content = original
  for (const [i, { oldString, newString, replaceAll }] of edits.entries()) {
    if (oldString === newString) throw new Error(`edit ${i + 1}: oldString and newString are identical`)
    const first = content.indexOf(oldString)
    if (first < 0) throw new Error(`edit ${i + 1}: oldString not found in file`)
    if (replaceAll) {
      content = content.replaceAll(oldString, () => newString)
    } else {
      if (content.indexOf(oldString, first + 1) >= 0) throw new Error(`edit ${i + 1}: oldString found more than once`)
      content = content.slice(0, first) + newString + content.slice(first + oldString.length)
    }
  }
  const patch = createPatch(path, original, content)
  await writeFile(path, content)
  return patch
}

/** The worst-case diff baseline: jsdiff's unified diff of two texts. */
export function diffTexts(name, before, after) {
  return createPatch(name, before, after)
}
