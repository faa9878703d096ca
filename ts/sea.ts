/**
 * `agent-fs-tools/sea`: the addon inside a Node single executable application (SEA).
 *
 * A SEA cannot load a `.node` from inside itself. The addon travels as a SEA asset; at start
 * {@link extractSeaAddon} writes it once to a private file named by its hash and points the loader
 * at it through `NAPI_RS_NATIVE_LIBRARY_PATH`. This module loads nothing native, so it runs before
 * the package is first required.
 *
 * @packageDocumentation
 */
import { createHash, randomBytes } from 'node:crypto'
import { lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, type Stats, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import type * as NodeSea from 'node:sea'

/** Options of {@link extractSeaAddon}. */
export interface SeaAddonOptions {
  /** The asset's key in the SEA configuration's `assets`. Default `agent-fs-tools.node`. */
  asset?: string
  /**
   * Where the addon is written: a directory owned by the current user that no one else can write
   * to (created with mode 0700 when missing). Default: the user's cache directory,
   * `~/Library/Caches/agent-fs-tools` on macOS, `$XDG_CACHE_HOME/agent-fs-tools` or
   * `~/.cache/agent-fs-tools` elsewhere.
   */
  dir?: string
}

/** `node:sea` where this Node has it (20.12 and later), loaded without `import` so older Nodes load this module. */
function seaModule(): typeof NodeSea | undefined {
  try {
    return createRequire(process.execPath)('node:sea') as typeof NodeSea
  } catch {
    return undefined
  }
}

function defaultDir(): string {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'agent-fs-tools')
  const xdg = process.env.XDG_CACHE_HOME
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'agent-fs-tools')
}

/** What is wrong with `stat` as a directory on the way to the addon, or undefined when nothing is. */
function unsafeBecause(stat: Stats, uid: number | undefined): string | undefined {
  if (uid === undefined) return undefined // no owners to check (not a POSIX system)
  if (stat.uid !== uid && stat.uid !== 0) return `it belongs to another user (uid ${stat.uid})`
  // A link cannot be changed in place (only replaced, which its directory's check covers); others
  // may write a directory with the sticky bit (/tmp) but not rename or remove what they do not own.
  if (stat.isSymbolicLink() || (stat.mode & 0o022) === 0 || (stat.isDirectory() && (stat.mode & 0o1000) !== 0)) return undefined
  return `other users can write to it (mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')})`
}

/** `path` with links resolved, as far as it exists (the missing rest appended as written). */
function realPath(path: string): string {
  const missing: string[] = []
  for (let at = resolve(path); ; at = dirname(at)) {
    try {
      return join(realpathSync(at), ...missing)
    } catch {
      if (dirname(at) === at) return resolve(path)
      missing.unshift(basename(at))
    }
  }
}

/**
 * The first directory on the way to `dir` (each ancestor as written and, links resolved, as it
 * is) that someone other than this user and root could change, with why; undefined when none.
 * Such a directory lets another user swap what lies below it between the hash check and the load.
 */
function unsafeAncestor(dir: string, uid: number | undefined): string | undefined {
  for (const chain of [resolve(dir), realPath(dir)]) {
    for (let at = dirname(chain), below = chain; at !== below; below = at, at = dirname(at)) {
      let stat: Stats
      try {
        stat = lstatSync(at)
      } catch {
        continue // a missing ancestor is created below (0700) and checked then
      }
      const why = unsafeBecause(stat, uid)
      if (why !== undefined) return `${at}: ${why}`
    }
  }
  return undefined
}

/**
 * Creates `dir` (0700) when missing; throws unless it is a directory of this user that others
 * cannot write and every directory on the way to it is this user's or root's and not writable by
 * others (sticky directories such as /tmp excepted).
 */
function privateDir(dir: string): string {
  const uid = process.getuid?.()
  const refuse = (why: string): never => {
    throw new Error(
      `agent-fs-tools: ${dir} is not a private directory (${why}), so the addon is not extracted there. ` +
        `Fix the owner or mode of that directory (chmod go-w), or pass another \`dir\` whose every parent only you or root can change.`,
    )
  }
  const before = unsafeAncestor(dir, uid)
  if (before !== undefined) refuse(before)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const after = unsafeAncestor(dir, uid)
  if (after !== undefined) refuse(after)
  const stat = lstatSync(dir)
  if (!stat.isDirectory()) refuse('it is not a directory')
  if ((uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) refuse('it must be a directory of this user that no one else can write to')
  return dir
}

/** Whether `file` is a regular file of this user that others cannot write, whose SHA-256 is `hash`. */
function holds(file: string, hash: string): boolean {
  try {
    const stat = lstatSync(file)
    const uid = process.getuid?.()
    if (!stat.isFile() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return false
    return createHash('sha256').update(readFileSync(file)).digest('hex') === hash
  } catch {
    return false
  }
}

/**
 * In a single executable application: writes the addon asset to
 * `<dir>/agent-fs-tools-<sha256 prefix>.node` unless a file of that content is already there,
 * sets `NAPI_RS_NATIVE_LIBRARY_PATH` to it and returns the path. Call it before the package is
 * first loaded (`require('agent-fs-tools')` after it, or `await import()` in ESM).
 *
 * Outside a SEA it does nothing and returns `undefined`, so the same host code runs unbundled. A
 * `NAPI_RS_NATIVE_LIBRARY_PATH` already set wins: it is returned unchanged.
 */
export function extractSeaAddon(options: SeaAddonOptions = {}): string | undefined {
  const sea = seaModule()
  if (sea === undefined || !sea.isSea()) return undefined
  const preset = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
  if (preset) return preset

  const asset = options.asset ?? 'agent-fs-tools.node'
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(sea.getAsset(asset))
  } catch (error) {
    throw new Error(
      `agent-fs-tools: this executable has no asset "${asset}". Add the addon's .node file to the "assets" of the SEA configuration under that key.`,
      { cause: error },
    )
  }
  const hash = createHash('sha256').update(bytes).digest('hex')
  const dir = privateDir(options.dir ?? defaultDir())
  const file = join(dir, `agent-fs-tools-${hash.slice(0, 32)}.node`)
  if (!holds(file, hash)) {
    // Written beside, then renamed over: a concurrent start or a crash never leaves a torn file
    // under the final name (and a torn or altered one is replaced, since its hash differs).
    const partial = join(dir, `.agent-fs-tools-${hash.slice(0, 32)}.${process.pid}.${randomBytes(4).toString('hex')}.partial`)
    try {
      writeFileSync(partial, bytes, { flag: 'wx', mode: 0o600 })
      renameSync(partial, file)
    } finally {
      rmSync(partial, { force: true })
    }
  }
  process.env.NAPI_RS_NATIVE_LIBRARY_PATH = file
  return file
}
