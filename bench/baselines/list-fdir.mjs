/**
 * Baseline for a recursive, gitignore-aware `list_directory`: `fdir` crawls, `ignore` applies the
 * root `.gitignore` (directories it ignores are pruned, not crawled), `.git` is skipped.
 * `listPaths` returns the sorted relative paths only; `listEntries` also `lstat`s every entry to
 * give `list_directory`'s lines (`dir/`, `file (N bytes, YYYY-MM-DD)`, `link -> target`).
 */
import { readFile, lstat, readlink } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fdir } from 'fdir'
import ignore from 'ignore'

async function crawl(dir) {
  const ig = ignore()
  try {
    ig.add(await readFile(join(dir, '.gitignore'), 'utf8'))
  } catch {}
  const paths = await new fdir()
    .withRelativePaths()
    .withDirs()
    .exclude((name, path) => name === '.git' || ig.ignores(`${relative(dir, path)}/`))
    .filter((path, isDirectory) => path !== '' && path !== '.' && path !== './' && (isDirectory || !ig.ignores(path)))
    .crawl(dir)
    .withPromise()
  return paths.sort()
}

/** Sorted relative paths of the tree's non-ignored entries (directories end with `/`). */
export async function listPaths(dir) {
  return crawl(dir)
}

/** `list_directory`-style lines for the tree's non-ignored entries. */
export async function listEntries(dir) {
  const paths = await crawl(dir)
  return Promise.all(
    paths.map(async (path) => {
      if (path.endsWith('/')) return path
      const abs = join(dir, path)
      const stat = await lstat(abs)
      if (stat.isSymbolicLink()) return `${path} -> ${await readlink(abs)}`
      return `${path} (${stat.size === 1 ? '1 byte' : `${stat.size} bytes`}, ${stat.mtime.toISOString().slice(0, 10)})`
    }),
  )
}
