/**
 * Baseline for `apply_patch`: what a TypeScript agent does without it — parse the unified diff
 * with jsdiff, then per file read it, `applyPatch` the hunks, write it back. It keeps nothing,
 * asks nothing, records nothing, and a failure halfway leaves the files before it changed.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { applyPatch, parsePatch } from 'diff'

/**
 * Applies the unified diff `patch` (paths `a/…` `b/…` from `root`); throws if a hunk misses.
 * `durable`: each file is written as npm's `write-file-atomic` writes it (a temp file beside it,
 * fsynced, renamed over it), so each file is whole and on disk, though the change as a whole is
 * still not atomic. Without it, `writeFileSync` in place.
 */
export function applyUnified(root, patch, { durable = false } = {}) {
  for (const index of parsePatch(patch)) {
    const file = join(root, index.newFileName.replace(/^b\//, ''))
    const result = applyPatch(readFileSync(file, 'utf8'), index)
    if (result === false) throw new Error(`a hunk of ${file} did not apply`)
    if (durable) writeDurably(file, result)
    else writeFileSync(file, result)
  }
}

/** `write-file-atomic`'s way, without its ownership and mode copying: nothing left on failure. */
function writeDurably(file, text) {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`)
  const fd = openSync(temp, 'wx')
  try {
    try {
      writeFileSync(fd, text)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(temp, file)
  } catch (error) {
    rmSync(temp, { force: true })
    throw error
  }
}
