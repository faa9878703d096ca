/**
 * A copy of this checkout for another platform's Node (`test:arm64` under qemu-user,
 * `test:windows` under Wine): its files as they are now, `dist/`, `node_modules` with the other
 * platform's twin of each of this machine's native packages (esbuild, vitest's bundler), and the
 * addon built for that platform under the name the package's own loader looks for. The checkout
 * itself never holds a foreign binary.
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { npmPackageDir } from './runtimes.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The installed packages of Linux x64 native code (esbuild's, rolldown's binding, …): `{ name, version }`. */
function linuxX64NativePackages(nodeModules) {
  const dirs = readdirSync(nodeModules).flatMap((entry) =>
    entry.startsWith('@') ? readdirSync(join(nodeModules, entry)).map((name) => `${entry}/${name}`) : [entry],
  )
  return dirs.flatMap((name) => {
    try {
      const pkg = JSON.parse(readFileSync(join(nodeModules, name, 'package.json'), 'utf8'))
      return pkg.cpu?.includes('x64') && pkg.os?.includes('linux') ? [{ name: pkg.name, version: pkg.version }] : []
    } catch {
      return []
    }
  })
}

/**
 * `node_modules` for the other platform: the installed tree hard-linked (`cp -al`: instant, no
 * space), plus `twinOf(name)` of each Linux x64 native package (same version, from the npm
 * registry, cached).
 */
async function foreignNodeModules(checkout, twinOf) {
  const nodeModules = join(checkout, 'node_modules')
  execFileSync('cp', ['-al', join(root, 'node_modules'), nodeModules])
  for (const { name, version } of linuxX64NativePackages(nodeModules)) {
    const twin = twinOf(name)
    const dir = await npmPackageDir(twin, version)
    mkdirSync(dirname(join(nodeModules, twin)), { recursive: true })
    rmSync(join(nodeModules, twin), { recursive: true, force: true })
    execFileSync('cp', ['-al', dir, join(nodeModules, twin)])
  }
}

/**
 * Makes the copy in `dir` (emptied first) and returns `dir`. `addon` is copied in last as
 * `agent-fs-tools.<platform>.node`, so it is newer than every source (the demo's staleness
 * check); `besideAddon` lists files copied next to it (a DLL the addon needs under Wine).
 */
export async function foreignCheckout({ dir, addon, platform, twinOf, besideAddon = [] }) {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  for (const file of listed.split('\0').filter(Boolean)) {
    if (!existsSync(join(root, file))) continue // deleted, not yet committed
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    copyFileSync(join(root, file), join(dir, file))
  }
  // A repository of its own, every copied file in its index, so tests that list the sources
  // with `git ls-files` (docs.test.ts) see them. It has no history: replay-history.test.ts
  // replays the real repository's (`AFS_REPLAY_REPO`).
  execFileSync('git', ['init', '-q'], { cwd: dir })
  execFileSync('git', ['add', '-A'], { cwd: dir })
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true })
  await foreignNodeModules(dir, twinOf)
  // Tests that look for ../shared/ (the host snapshots kept beside the repository) find it beside the copy too.
  rmSync(join(dir, '..', 'shared'), { force: true })
  if (existsSync(join(root, '..', 'shared'))) symlinkSync(join(root, '..', 'shared'), join(dir, '..', 'shared'), 'dir')
  for (const file of besideAddon) copyFileSync(file, join(dir, basename(file)))
  copyFileSync(addon, join(dir, `agent-fs-tools.${platform}.node`))
  return dir
}
