/**
 * Baseline for a recoverable delete and its restore with GNU tar: `tar -czf` (gzip's default
 * level 6) then `rm -rf`; `tar -xzf` to bring the tree back. Run as child processes, so the event
 * loop stays free, the way a Node host would shell out.
 */
import { execFile } from 'node:child_process'
import { open } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Archives `dir` into `archive` (.tar.gz) and removes it. */
export async function trashTree(dir, archive) {
  await run('tar', ['-czf', archive, '-C', dirname(dir), basename(dir)])
  await run('rm', ['-rf', '--', dir])
}

/**
 * Archives `dir` into `archive` (.tar, not compressed) and removes it: the copy limit of a
 * recoverable delete, which a trash that compresses is measured against. `durable`: the archive
 * is fsynced before the tree goes, as ours is; without it, the copy may still be only in the
 * page cache when the tree is gone.
 */
export async function trashTreeUncompressed(dir, archive, { durable = false } = {}) {
  await run('tar', ['-cf', archive, '-C', dirname(dir), basename(dir)])
  if (durable) {
    const handle = await open(archive, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  }
  await run('rm', ['-rf', '--', dir])
}

/** Extracts `archive` into `parentDir` (the tree's parent), keeping modes and mtimes. */
export async function restoreTree(archive, parentDir) {
  await run('tar', ['-xzf', archive, '-C', parentDir])
}
