// Loads the native addon (CommonJS). Written for this package, not generated: `napi build` runs
// with `--no-js`, so a rebuild rewrites `index.d.ts` and leaves this file alone. The exports at the
// end must name what `index.d.ts` declares (`__test__/loader.test.ts` checks it).
//
// Where the binary comes from, first match wins:
//   1. `NAPI_RS_NATIVE_LIBRARY_PATH`, an explicit `.node` file (bundles, single executables);
//   2. `agent-fs-tools.<platform>.node` beside this file (a built checkout, `npm pack`), or, from
//      a bundle that inlined this file, beside the installed package the bundle's `require` finds;
//   3. the per-platform package `agent-fs-tools-<platform>` (the published layout, an optional
//      dependency of this package).
// The paths of 2 and 3 are named at run time (see `loadInstalled`): a bundle leaves the binary
// where it is installed, so it runs from beside its `node_modules` (or with the variable of 1).
'use strict'

const { readFileSync } = require('node:fs')
const { createRequire } = require('node:module')
const { dirname, join, resolve } = require('node:path')

const SUPPORTED = 'Linux x64 and arm64 (glibc and musl), macOS arm64 and x64, Windows x64 and arm64'

/** This file; undefined in an ES module bundle, whose `require` comes from its own `createRequire`. */
const here = typeof __filename === 'string' ? __filename : undefined

/** The supported platforms, by napi-rs name: one per `napi.targets` entry and `npm/` package. */
const PLATFORMS = ['linux-x64-gnu', 'linux-x64-musl', 'linux-arm64-gnu', 'linux-arm64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc', 'win32-arm64-msvc']

/** Whether this Linux runs on musl libc (Alpine) rather than glibc. */
function isMusl() {
  try {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {
    // No ldd (distroless images): ask Node's diagnostic report which libc it linked.
  }
  const report = process.report
  if (!report || typeof report.getReport !== 'function') return false
  const excludeNetwork = report.excludeNetwork
  report.excludeNetwork = true
  try {
    const { header, sharedObjects } = report.getReport()
    if (header && header.glibcVersionRuntime) return false
    return Array.isArray(sharedObjects) && sharedObjects.some((f) => f.includes('libc.musl-') || f.includes('ld-musl-'))
  } finally {
    report.excludeNetwork = excludeNetwork
  }
}

/** This platform's napi-rs name (`linux-x64-gnu`, `darwin-arm64`, …); throws where unsupported. */
function platformName() {
  const { platform, arch } = process
  let name = null
  if (platform === 'linux') name = `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  else if (platform === 'darwin') name = `darwin-${arch}`
  // Node for Windows is built with MSVC, and so are the published binaries; a binary built with
  // mingw (x86_64-pc-windows-gnu, how this repository tests Windows under Wine) loads in its place.
  else if (platform === 'win32') name = `win32-${arch}-msvc`
  if (name !== null && PLATFORMS.includes(name)) return name
  throw new Error(
    `agent-fs-tools does not run on ${platform} ${arch} yet. Supported: ${SUPPORTED}.`,
  )
}

/** This package's name: the binary is `<name>.<platform>.node`, the per-platform package `<name>-<platform>`. */
const NAME = 'agent-fs-tools'

/**
 * Where this package is installed, seen from a bundle that inlined this file (so `here` is the
 * bundle, or unknown): its `package.json` resolved by the bundle's `require`, from the bundle's
 * own `node_modules`. The specifier is built at run time, so a bundler leaves it alone.
 */
function installedDir() {
  try {
    return dirname(require.resolve([NAME, 'package.json'].join('/')))
  } catch {
    return undefined
  }
}

/**
 * The binary beside this file (or beside the installed package, from a bundle), else the
 * per-platform package; throws with every failure. The paths are named at run time, never
 * spelled out as string literals: a bundler that follows every literal `.node` require (tsup's
 * `native-node-modules` plugin under `noExternal`, which Tomo's build uses) would otherwise fail
 * on the other platforms' binaries, which are not installed.
 */
function loadInstalled(platform) {
  const file = `${NAME}.${platform}.node`
  const dirs = [here === undefined ? undefined : dirname(here), installedDir()].filter((dir, i, all) => dir !== undefined && all.indexOf(dir) === i)
  const errors = []
  for (const candidate of [...dirs.map((dir) => join(dir, file)), `${NAME}-${platform}`]) {
    try {
      return require(candidate)
    } catch (error) {
      errors.push(error)
    }
  }
  throw new Error(
    `agent-fs-tools: no native addon for ${platform}: neither ${file} beside ${dirs.length > 0 ? dirs.join(' or ') : 'the bundle'} ` +
      `nor the package ${NAME}-${platform} could be loaded (${errors.map((e) => e.message.split('\n')[0]).join('; ')}). ` +
      `Reinstall without omitting optional dependencies, or set NAPI_RS_NATIVE_LIBRARY_PATH to the .node file.`,
    { cause: new AggregateError(errors) },
  )
}

/** The addon's exports. */
function loadBinding() {
  const platform = platformName()
  const explicit = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
  if (explicit) {
    // `createRequire`, not `require`: in a Node single executable application the main script's
    // `require` loads only built-in modules.
    const path = resolve(explicit)
    try {
      return createRequire(here ?? join(process.cwd(), 'index.js'))(path)
    } catch (error) {
      throw new Error(`agent-fs-tools: cannot load NAPI_RS_NATIVE_LIBRARY_PATH=${path}: ${error.message}`, { cause: error })
    }
  }
  if (typeof require.resolve !== 'function') {
    throw new Error(
      'agent-fs-tools: this require() loads only built-in modules (a Node single executable application?), ' +
        'so the native addon cannot be found: set NAPI_RS_NATIVE_LIBRARY_PATH to its .node file ' +
        '(README, "Bundles and single executables").',
    )
  }
  return loadInstalled(platform)
}

const binding = loadBinding()
module.exports = binding
module.exports.NativeWorkspace = binding.NativeWorkspace
