/**
 * Runtime binaries and host trees the host tests need, downloaded once from the npm registry
 * (through `npm pack`, so the registry npm is configured with is used) and cached under
 * `~/.cache/agent-fs-tools/` (`cacheDir` of `scripts/lib/runtimes.mjs`), never in the repository:
 *
 * - `runtimePath('node', '22.23.3')`: `node-<platform>-<arch>@<version>`'s `bin/node`, and
 *   `runtimePath('opencode', '1.18.33')`, what `npm i opencode-ai` installs for this machine
 *   (both from `scripts/lib/runtimes.mjs`, which pins the versions);
 * - `cachedTree(key, build)`: a directory built once (Tomo's `node_modules`).
 *
 * Each entry is built in a temporary directory beside its final place and renamed there, so a
 * crash or a concurrent run never leaves a half-written entry under the final name.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { cacheDir } from '../../scripts/lib/runtimes.mjs'

/**
 * The directory `key` in the cache, made by `build(dir)` the first time (into a fresh empty
 * directory); later calls return it at once.
 */
export function cachedTree(key: string, build: (dir: string) => void): string {
  const root = cacheDir()
  const final = join(root, key)
  if (existsSync(final)) return final
  mkdirSync(dirname(final), { recursive: true })
  const partial = mkdtempSync(join(root, `.${key.replace(/[/@]/g, '_')}-`))
  try {
    build(partial)
    try {
      renameSync(partial, final)
    } catch (error) {
      // Another run finished first: use its entry.
      if (!existsSync(final)) throw error
    }
  } finally {
    rmSync(partial, { recursive: true, force: true })
  }
  return final
}

/**
 * The path of the pinned `version` of `name`'s binary for this machine, fetched once: the one
 * shared fetcher (`scripts/lib/runtimes.mjs`), so that the host tests and the runtime matrix fill
 * the same cache entries the same way (a second fetcher without the entries' completion marker
 * left directories the other took for leftovers it could not replace).
 */
export { runtimePath } from '../../scripts/lib/runtimes.mjs'
