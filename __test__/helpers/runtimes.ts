/**
 * Runtime binaries and host trees the host tests need, downloaded once from the npm registry
 * (through `npm pack`, so the registry npm is configured with is used) and cached under
 * `~/.cache/agent-fs-tools/` (see {@link cacheRoot}), never in the repository:
 *
 * - `runtimePath('node', '22.23.3')`: `node-<platform>-<arch>@<version>`'s `bin/node`;
 * - `runtimePath('opencode', '1.18.33')`: `opencode-<platform>-<arch>@<version>`'s `bin/opencode`
 *   (what `npm i opencode-ai` installs for this machine);
 * - `cachedTree(key, build)`: a directory built once (Tomo's `node_modules`).
 *
 * Each entry is built in a temporary directory beside its final place and renamed there, so a
 * crash or a concurrent run never leaves a half-written entry under the final name.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join } from 'node:path'

/** `$AGENT_FS_TOOLS_CACHE_DIR`, else `~/.cache/agent-fs-tools` (or under `$XDG_CACHE_HOME`). */
export function cacheRoot(): string {
  const own = process.env.AGENT_FS_TOOLS_CACHE_DIR
  if (own && isAbsolute(own)) return own
  const xdg = process.env.XDG_CACHE_HOME
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'agent-fs-tools')
}

/**
 * The directory `key` in the cache, made by `build(dir)` the first time (into a fresh empty
 * directory); later calls return it at once.
 */
export function cachedTree(key: string, build: (dir: string) => void): string {
  const root = cacheRoot()
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

/** Each runtime's npm package for this machine, and where its binary is in the package. */
const RUNTIMES = {
  node: { pkg: (platform: string) => `node-${platform}`, file: 'package/bin/node' },
  opencode: { pkg: (platform: string) => `opencode-${platform}`, file: 'package/bin/opencode' },
} as const

/**
 * The path of the `version` of `name`'s binary for this machine, fetched once. The cache layout
 * (`runtimes/<name>-<version>-<platform>-<arch>/package/…`) and the signature are those of the
 * shared `scripts/lib/runtimes.mjs`'s `runtimePath`, which can replace this function as it is.
 */
export async function runtimePath(name: keyof typeof RUNTIMES, version: string): Promise<string> {
  const runtime = RUNTIMES[name]
  const platform = `${process.platform}-${process.arch}`
  const spec = `${runtime.pkg(platform)}@${version}`
  const dir = cachedTree(`runtimes/${name}-${version}-${platform}`, (dir) => {
    execFileSync('npm', ['pack', spec, '--pack-destination', dir, '--silent'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
    const tarball = readdirSync(dir).find((file) => file.endsWith('.tgz'))
    if (tarball === undefined) throw new Error(`npm pack ${spec} wrote no tarball`)
    execFileSync('tar', ['xzf', tarball, runtime.file], { cwd: dir })
    rmSync(join(dir, tarball))
  })
  return join(dir, runtime.file)
}
