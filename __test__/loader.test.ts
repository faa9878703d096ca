/**
 * The addon loader (`index.js`, ../docs/platforms.md): what it exports, the platforms it refuses, an explicit
 * `NAPI_RS_NATIVE_LIBRARY_PATH`, and a Node single executable application's `require` (built-in
 * modules only, no `require.resolve`), simulated here in a child process (`sea.test.ts` builds a
 * real one). Runs against the built addon (`npm run build`).
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(__dirname, '..')
const loader = join(root, 'index.js')
const addon = join(root, readdirSync(root).find((name) => /^agent-fs-tools\.[\w-]+\.node$/.test(name)) ?? 'missing.node')

/** Runs `script` (CommonJS) in a fresh Node; `env` is merged over this process's, minus the override. */
function node(script: string, env: Record<string, string> = {}, cwd = root) {
  const base = { ...process.env }
  delete base.NAPI_RS_NATIVE_LIBRARY_PATH
  return spawnSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8', env: { ...base, ...env } })
}

/** The message of the error a child printed as its last stdout line (`JSON.stringify`'d). */
function thrown(script: string, env: Record<string, string> = {}): string {
  const run = node(`try { ${script}; console.log(JSON.stringify('no error')) } catch (e) { console.log(JSON.stringify(e instanceof Error ? e.message : 'not an Error: ' + e)) }`, env)
  expect(run.stderr).toBe('')
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as string
}

/** Sets `process.platform`/`process.arch` before requiring the loader. */
const pretend = (platform: string, arch: string) =>
  `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} }); Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} }); require(${JSON.stringify(loader)})`

/**
 * Evaluates the loader the way a single executable application's main script runs: `require` loads
 * built-in modules only and has no `resolve`; `__filename` is the executable.
 */
const asInSea = `
  const Module = require('node:module')
  const seaRequire = (id) => {
    if (!Module.isBuiltin(id)) throw new Error('No such built-in module: ' + id)
    return require(id)
  }
  const module = { exports: {} }
  const source = require('node:fs').readFileSync(${JSON.stringify(loader)}, 'utf8')
  new Function('exports', 'require', 'module', '__filename', '__dirname', source)(
    module.exports, seaRequire, module, process.execPath, require('node:path').dirname(process.execPath))
  const ws = new module.exports.NativeWorkspace(JSON.stringify({ root: process.cwd() }))
  console.log(JSON.parse(ws.definitions()).length)
`

describe('exports', () => {
  it('index.js names every export of the addon and of index.d.ts, and nothing else', () => {
    const named = [...readFileSync(loader, 'utf8').matchAll(/^module\.exports\.(\w+) = binding\.(\w+)$/gm)].map((m) => {
      expect(m[1]).toBe(m[2])
      return m[1]!
    })
    const declared = [...readFileSync(join(root, 'index.d.ts'), 'utf8').matchAll(/^export declare (?:class|function|const|enum) (\w+)/gm)].map(
      (m) => m[1]!,
    )
    const run = node(`const m = { exports: {} }; process.dlopen(m, ${JSON.stringify(addon)}); console.log(JSON.stringify(Object.keys(m.exports)))`)
    expect(run.stderr).toBe('')
    const actual = JSON.parse(run.stdout) as string[]
    expect(actual.length).toBeGreaterThan(0)
    expect(named.sort()).toEqual(actual.sort())
    expect(declared.sort()).toEqual(actual.sort())
  })
})

describe('unsupported platforms', () => {
  it.each([
    ['win32', 'ia32'],
    ['freebsd', 'x64'],
    ['linux', 'ia32'],
    ['darwin', 'ppc64'],
  ])('%s %s: one Error naming the platform and the supported list', (platform, arch) => {
    const message = thrown(pretend(platform, arch))
    expect(message).toBe(
      `agent-fs-tools does not run on ${platform} ${arch} yet. Supported: Linux x64 and arm64 (glibc and musl), macOS arm64 and x64, Windows x64 and arm64.`,
    )
  })

  it('is refused even with NAPI_RS_NATIVE_LIBRARY_PATH set', () => {
    expect(thrown(pretend('freebsd', 'x64'), { NAPI_RS_NATIVE_LIBRARY_PATH: addon })).toMatch(/^agent-fs-tools does not run on freebsd x64 yet\./)
  })
})

describe('the installed binary, named at run time', () => {
  /** This machine's platform, by napi-rs name (the binary built here). */
  const host = /^agent-fs-tools\.([\w-]+)\.node$/.exec(basename(addon))?.[1]

  it.each(['linux-x64-gnu', 'linux-arm64-gnu', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc', 'win32-arm64-msvc'])(
    '%s: the binary beside the loader, then the per-platform package',
    (platform) => {
      const [os, arch] = platform.split('-') as [string, string]
      const message = thrown(pretend(os, arch))
      if (platform === host) {
        expect(message).toBe('no error')
        return
      }
      expect(message).toContain(
        `agent-fs-tools: no native addon for ${platform}: neither agent-fs-tools.${platform}.node beside ${root} nor the package agent-fs-tools-${platform} could be loaded`,
      )
    },
  )

  it('has no literal require of a .node file or a per-platform package (a bundler following those fails on the absent platforms)', () => {
    const source = readFileSync(loader, 'utf8')
    expect(source).not.toMatch(/require\(\s*['"`][^'"`]*\.node['"`]\s*\)/)
    expect(source).not.toMatch(/require\(\s*['"`]agent-fs-tools-/)
  })
})

describe('NAPI_RS_NATIVE_LIBRARY_PATH', () => {
  it('loads the file it names, relative to the working directory', () => {
    const script = `const m = require(${JSON.stringify(loader)}); console.log(typeof m.NativeWorkspace)`
    expect(node(script, { NAPI_RS_NATIVE_LIBRARY_PATH: relative(join(root, 'ts'), addon) }, join(root, 'ts')).stdout.trim()).toBe('function')
  })

  it('a file that does not load is an error naming it, with no fallback to the installed addon', () => {
    const missing = join(root, 'no-such-addon.node')
    expect(thrown(`require(${JSON.stringify(loader)})`, { NAPI_RS_NATIVE_LIBRARY_PATH: missing })).toMatch(
      new RegExp(`^agent-fs-tools: cannot load NAPI_RS_NATIVE_LIBRARY_PATH=${missing.replace(/[.\\]/g, '\\$&')}: Cannot find module`),
    )
  })
})

describe('a require that loads only built-in modules (single executable application)', () => {
  it('loads the addon named by NAPI_RS_NATIVE_LIBRARY_PATH and runs it', () => {
    const run = node(asInSea, { NAPI_RS_NATIVE_LIBRARY_PATH: addon })
    expect(run.stderr).toBe('')
    expect(Number(run.stdout.trim())).toBeGreaterThan(0)
  })

  it('without the variable, says to set it', () => {
    const run = node(asInSea)
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain(
      'agent-fs-tools: this require() loads only built-in modules (a Node single executable application?), so the native addon cannot be found: set NAPI_RS_NATIVE_LIBRARY_PATH to its .node file',
    )
  })
})
