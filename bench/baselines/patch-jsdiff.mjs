/**
 * Baseline for `apply_patch`: what a TypeScript agent does without it — parse the unified diff
 * with jsdiff, then per file read it, `applyPatch` the hunks, write it back. It keeps nothing,
 * asks nothing, records nothing, and a failure halfway leaves the files before it changed.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { applyPatch, parsePatch } from 'diff'

/** Applies the unified diff `patch` (paths `a/…` `b/…` from `root`); throws if a hunk misses. */
export function applyUnified(root, patch) {
  for (const index of parsePatch(patch)) {
    const file = join(root, index.newFileName.replace(/^b\//, ''))
    const result = applyPatch(readFileSync(file, 'utf8'), index)
    if (result === false) throw new Error(`a hunk of ${file} did not apply`)
    writeFileSync(file, result)
  }
}
