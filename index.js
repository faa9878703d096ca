// Loads the native addon (CommonJS). Written for this package, not generated: `napi build` runs
// with `--no-js`, so a rebuild rewrites `index.d.ts` and leaves this file alone. The exports at the
// end must name what `index.d.ts` declares (`__test__/loader.test.ts` checks it).
//
// Where the binary comes from, first match wins:
//   1. `NAPI_RS_NATIVE_LIBRARY_PATH`, an explicit `.node` file (bundles, single executables);
//   2. `agent-fs-tools.<platform>.node` beside this file (a built checkout, `npm pack`);
//   3. the per-platform package `agent-fs-tools-<platform>` (the published layout, an optional
//      dependency of this package).
// The `require` calls of 2 and 3 are spelled out so bundlers and file tracers can see them.
'use strict'

const { readFileSync } = require('node:fs')
const { createRequire } = require('node:module')
const { join, resolve } = require('node:path')

const SUPPORTED = 'Linux x64 and arm64 (glibc and musl), macOS arm64 and x64'

/** This file; undefined in an ES module bundle, whose `require` comes from its own `createRequire`. */
const here = typeof __filename === 'string' ? __filename : undefined

/** The supported platforms, by napi-rs name: one per `napi.targets` entry and `npm/` package. */
const PLATFORMS = ['linux-x64-gnu', 'linux-x64-musl', 'linux-arm64-gnu', 'linux-arm64-musl', 'darwin-x64', 'darwin-arm64']

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
  if (name !== null && PLATFORMS.includes(name)) return name
  throw new Error(
    `agent-fs-tools does not run on ${platform} ${arch} yet. Supported: ${SUPPORTED}.` +
      (platform === 'win32' ? ' On Windows, run it under WSL.' : ''),
  )
}

/**
 * The binary beside this file, else the per-platform package; throws with both failures. Each
 * `require` sits in its own `try` so that bundlers leave a missing one to run time (esbuild).
 */
function loadInstalled(platform) {
  const errors = []
  switch (platform) {
    case 'linux-x64-gnu':
      try {
        return require('./agent-fs-tools.linux-x64-gnu.node')
      } catch (error) {
        errors.push(error)
      }
      try {
        return require('agent-fs-tools-linux-x64-gnu')
      } catch (error) {
        errors.push(error)
      }
      break
    case 'linux-x64-musl':
      try {
        return require('./agent-fs-tools.linux-x64-musl.node')
      } catch (error) {
        errors.push(error)
      }
      try {
        return require('agent-fs-tools-linux-x64-musl')
      } catch (error) {
        errors.push(error)
      }
      break
    case 'linux-arm64-gnu':
      try {
        return require('./agent-fs-tools.linux-arm64-gnu.node')
      } catch (error) {
        errors.push(error)
      }
      try {
        return require('agent-fs-tools-linux-arm64-gnu')
      } catch (error) {
        errors.push(error)
      }
      break
    case 'linux-arm64-musl':
      try {
        return require('./agent-fs-tools.linux-arm64-musl.node')
      } catch (error) {
        errors.push(error)
      }
      try {
        return require('agent-fs-tools-linux-arm64-musl')
      } catch (error) {
        errors.push(error)
      }
      break
    case 'darwin-x64':
      try {
        return require('./agent-fs-tools.darwin-x64.node')
      } catch (error) {
        errors.push(error)
      }
      try {
        return require('agent-fs-tools-darwin-x64')
      } catch (error) {
        errors.push(error)
      }
      break
    case 'darwin-arm64':
      try {
        return require('./agent-fs-tools.darwin-arm64.node')
      } catch (error) {
        errors.push(error)
      }
      try {
        return require('agent-fs-tools-darwin-arm64')
      } catch (error) {
        errors.push(error)
      }
      break
  }
  throw new Error(
    `agent-fs-tools: no native addon for ${platform}: neither agent-fs-tools.${platform}.node beside ${here ?? 'the bundle'} ` +
      `nor the package agent-fs-tools-${platform} could be loaded (${errors.map((e) => e.message.split('\n')[0]).join('; ')}). ` +
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
