/**
 * What of a checkout needs building before it can run: the native addon (when there is none for
 * this machine, or a Rust source, `Cargo.toml`, `Cargo.lock` or `build.rs` is newer than it) and the
 * JS (when `dist/` is missing, or a file in `ts/`, `index.js` or `index.d.ts` is newer than it). An
 * addon built any other way (a release build) is kept while the sources are older than it.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** This machine's napi-rs platform name (`linux-x64-gnu`, `darwin-arm64`, …). */
export function hostPlatform() {
  // As index.js names them: Windows binaries are the MSVC builds.
  if (process.platform === 'win32') return `win32-${process.arch}-msvc`
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`
  const glibc = process.report?.getReport()?.header?.glibcVersionRuntime
  return `linux-${process.arch}-${glibc ? 'gnu' : 'musl'}`
}

/** The newest modification time (ms) of `path`, or of any file below it; 0 when absent. */
function newest(path) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = 0
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)))
  return latest
}

/** The oldest modification time (ms) of the files `paths`; 0 when one is missing. */
function oldest(paths) {
  let earliest = Infinity
  for (const path of paths) {
    if (!existsSync(path)) return 0
    earliest = Math.min(earliest, statSync(path).mtimeMs)
  }
  return earliest
}

/**
 * What `root` needs: `{ native, js }`, each `undefined` (up to date) or the reason to build,
 * in words for the user.
 */
export function staleParts(root, platform = hostPlatform()) {
  const addon = join(root, `agent-fs-tools.${platform}.node`)
  const rust = Math.max(...['src', 'Cargo.toml', 'Cargo.lock', 'build.rs'].map((p) => newest(join(root, p))))
  const native = !existsSync(addon)
    ? `there is no native addon for ${platform} yet`
    : rust > statSync(addon).mtimeMs
      ? 'the Rust sources changed since the addon was built'
      : undefined
  const built = oldest(['esm', 'cjs'].map((format) => join(root, 'dist', format, 'index.js')))
  const sources = Math.max(newest(join(root, 'ts')), newest(join(root, 'index.js')), newest(join(root, 'index.d.ts')))
  const js = built === 0 ? 'dist/ is not built yet' : sources > built ? 'the TypeScript sources changed since dist/ was built' : undefined
  return { native, js }
}
