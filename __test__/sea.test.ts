/**
 * Bundles and single executables (../docs/platforms.md#bundles-and-single-executables): a host bundled with esbuild the way that page says
 * (`--bundle --platform=node --format=cjs --external:*.node`), run as a bundle and as a real Node
 * single executable application (`--experimental-sea-config`, postject) that carries the addon as
 * an asset and extracts it with `agent-fs-tools/sea`, then makes tool calls; the helper's refusals
 * (a directory others could change on the way, an extracted file others could write). Then the
 * same as Tomo builds it: an ES module bundle made into an executable by `node --build-sea` of
 * Node 26. Runs against the built package (`npm run build`); the postject part is skipped only
 * when this `node` binary has no SEA fuse.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { buildSync } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pinnedVersion, runtimeAvailable, runtimePath } from '../scripts/lib/runtimes.mjs'
import { scaled } from './helpers/time.js'

const root = resolve(__dirname, '..')
const addon = join(root, readdirSync(root).find((name) => /^agent-fs-tools\.[\w-]+\.node$/.test(name)) ?? 'missing.node')
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
const hasFuse = readFileSync(process.execPath).includes(`${FUSE}:0`)

/**
 * The host, in TypeScript as docs/platforms.md shows it: a first module extracts the addon (in a SEA),
 * then the package is imported; the bundle keeps that order. `ADDON_DIR` stands in for the
 * default cache directory. Prints one JSON line of what its tool calls returned.
 */
const SEA_SETUP = `
import { extractSeaAddon } from 'agent-fs-tools/sea'
export const extracted = extractSeaAddon({ dir: process.env.ADDON_DIR })
`
const HOST = `
import { extracted } from './sea-setup.js'
import { Workspace } from 'agent-fs-tools'

const [root, dataDir] = process.argv.slice(2) as [string, string]
async function main(): Promise<void> {
  const ws = new Workspace({ root, permissions: { cwdWriteFile: true, cwdRemoveFile: true }, trash: { dataDir } })
  const write = await ws.call('write_file', { path: 'notes.txt', content: 'from a single executable\\n' })
  const read = await ws.call('read_file', { path: 'notes.txt' })
  const remove = await ws.call('delete_file', { path: 'notes.txt' })
  const trash = await ws.trashList()
  console.log(JSON.stringify({ node: process.version, extracted: extracted ?? null, loadedFrom: process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? null, write, read, remove, trash }))
}
main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
`

/** What docs/platforms.md gives ES module bundles: the loader is CommonJS and calls `require`. */
const ESM_BANNER = "import { createRequire as topLevelCreateRequire } from 'node:module'; const require = topLevelCreateRequire(import.meta.url);"

interface HostOutput {
  node: string
  extracted: string | null
  loadedFrom: string | null
  write: { status: string }
  read: { status: string; output: string }
  remove: { status: string }
  trash: Array<{ originalPath: string }>
}

let work: string
let bundle: string

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'afs-sea-'))
  // The host project depends on the package (here: this checkout).
  mkdirSync(join(work, 'node_modules'))
  symlinkSync(root, join(work, 'node_modules', 'agent-fs-tools'), 'dir')
  writeFileSync(join(work, 'sea-setup.ts'), SEA_SETUP)
  writeFileSync(join(work, 'host.ts'), HOST)
  bundle = join(work, 'dist', 'host.cjs')
  const result = buildSync({
    entryPoints: [join(work, 'host.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    external: ['*.node'],
    outfile: bundle,
    logLevel: 'silent',
  })
  expect(result.errors).toEqual([])
})

afterAll(() => {
  rmSync(work, { recursive: true, force: true })
})

/** A fresh workspace root and trash directory; a clean environment without the override. */
function run(command: string, args: string[], env: Record<string, string> = {}) {
  const dirs = mkdtempSync(join(work, 'ws-'))
  mkdirSync(join(dirs, 'root'))
  const base = { ...process.env }
  delete base.NAPI_RS_NATIVE_LIBRARY_PATH
  const child = spawnSync(command, [...args, join(dirs, 'root'), join(dirs, 'data')], {
    cwd: work,
    encoding: 'utf8',
    env: { ...base, ...env },
    timeout: scaled(60_000),
  })
  return { ...child, root: join(dirs, 'root') }
}

/** The tool calls went through: written, read back, deleted into the trash. */
function expectToolCalls(out: HostOutput, workspaceRoot: string): void {
  expect(out.write.status).toBe('ok')
  expect(out.read.status).toBe('ok')
  expect(out.read.output).toContain('from a single executable')
  expect(out.remove.status).toBe('ok')
  expect(out.trash.map((entry) => entry.originalPath)).toEqual([join(workspaceRoot, 'notes.txt')])
  expect(readdirSync(workspaceRoot)).toEqual([])
}

describe('an esbuild bundle', () => {
  it('loads the addon named by NAPI_RS_NATIVE_LIBRARY_PATH and makes tool calls', () => {
    const child = run(process.execPath, [bundle], { NAPI_RS_NATIVE_LIBRARY_PATH: addon })
    expect(child.stderr).toBe('')
    const out = JSON.parse(child.stdout) as HostOutput
    expect(out.extracted).toBeNull() // not a single executable: the helper does nothing
    expect(out.loadedFrom).toBe(addon)
    expectToolCalls(out, child.root)
  })

  it('in ES module format (with a `require` from createRequire in the banner), loads and makes tool calls', () => {
    const esm = join(work, 'dist', 'host.mjs')
    const result = buildSync({
      entryPoints: [join(work, 'host.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      external: ['*.node'],
      banner: { js: ESM_BANNER },
      outfile: esm,
      logLevel: 'silent',
    })
    expect(result.errors).toEqual([])
    const child = run(process.execPath, [esm], { NAPI_RS_NATIVE_LIBRARY_PATH: addon })
    expect(child.stderr).toBe('')
    expectToolCalls(JSON.parse(child.stdout) as HostOutput, child.root)
  })

  it('without the variable, loads the .node of the installed package the bundle finds, else the one beside the bundle', () => {
    // The host project's node_modules has the package: the bundle finds it there.
    const installed = run(process.execPath, [bundle])
    expect(installed.stderr).toBe('')
    expectToolCalls(JSON.parse(installed.stdout) as HostOutput, installed.root)

    const modules = join(work, 'node_modules')
    renameSync(modules, `${modules}.away`)
    try {
      const missing = run(process.execPath, [bundle])
      expect(missing.status).not.toBe(0)
      expect(missing.stderr).toMatch(/agent-fs-tools: no native addon for [\w-]+: neither agent-fs-tools\.[\w-]+\.node beside/)

      const beside = join(work, 'dist', addon.slice(addon.lastIndexOf('/') + 1))
      symlinkSync(addon, beside)
      try {
        const child = run(process.execPath, [bundle])
        expect(child.stderr).toBe('')
        expectToolCalls(JSON.parse(child.stdout) as HostOutput, child.root)
      } finally {
        rmSync(beside)
      }
    } finally {
      renameSync(`${modules}.away`, modules)
    }
  })
})

describe.skipIf(!hasFuse)(`a single executable application${hasFuse ? '' : ' (skipped: this node binary has no SEA fuse)'}`, () => {
  let app: string
  const addonHash = createHash('sha256').update(readFileSync(addon)).digest('hex')

  beforeAll(() => {
    const blob = join(work, 'sea-prep.blob')
    const config = join(work, 'sea-config.json')
    writeFileSync(
      config,
      JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, assets: { 'agent-fs-tools.node': addon } }),
    )
    execFileSync(process.execPath, ['--experimental-sea-config', config], { cwd: work, stdio: 'pipe' })
    app = join(work, 'host-app')
    copyFileSync(process.execPath, app)
    chmodSync(app, 0o755)
    const postject = createRequire(join(root, 'x.js')).resolve('postject/dist/cli.js')
    const macho = process.platform === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : []
    if (process.platform === 'darwin') execFileSync('codesign', ['--remove-signature', app])
    execFileSync(process.execPath, [postject, app, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE, ...macho], { stdio: 'pipe' })
    if (process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', app])
  }, scaled(120_000))

  it('extracts the addon asset to a private file named by its hash, loads it and makes tool calls', () => {
    const addonDir = join(work, 'cache-1', 'agent-fs-tools')
    const child = run(app, [], { ADDON_DIR: addonDir })
    expect(child.stderr).toBe('')
    const out = JSON.parse(child.stdout) as HostOutput
    const expected = join(addonDir, `agent-fs-tools-${addonHash.slice(0, 32)}.node`)
    expect(out.extracted).toBe(expected)
    expect(out.loadedFrom).toBe(expected)
    expect(readFileSync(expected).equals(readFileSync(addon))).toBe(true)
    expect(statSync(addonDir).mode & 0o777).toBe(0o700)
    expect(statSync(expected).mode & 0o777).toBe(0o600)
    expect(readdirSync(addonDir)).toEqual([`agent-fs-tools-${addonHash.slice(0, 32)}.node`])
    expectToolCalls(out, child.root)

    // A second start reuses the file; one whose content was altered is replaced.
    const inode = statSync(expected).ino
    const again = run(app, [], { ADDON_DIR: addonDir })
    expect(again.stderr).toBe('')
    expect(statSync(expected).ino).toBe(inode)
    writeFileSync(expected, 'not the addon')
    const repaired = run(app, [], { ADDON_DIR: addonDir })
    expect(repaired.stderr).toBe('')
    expectToolCalls(JSON.parse(repaired.stdout) as HostOutput, repaired.root)
    expect(readFileSync(expected).equals(readFileSync(addon))).toBe(true)
    expect(readdirSync(addonDir)).toEqual([`agent-fs-tools-${addonHash.slice(0, 32)}.node`])
  })

  it('refuses a directory other users can write to', () => {
    const shared = join(work, 'shared')
    mkdirSync(shared)
    chmodSync(shared, 0o777)
    const child = run(app, [], { ADDON_DIR: shared })
    expect(child.status).not.toBe(0)
    expect(child.stderr).toContain(`agent-fs-tools: ${shared} is not a private directory`)
    expect(readdirSync(shared)).toEqual([])
  })

  it('refuses a directory below one other users can write to, as written or through a link (issue 26)', () => {
    // Such a parent lets another user swap the directory between the hash check and the load.
    const open = join(work, 'open')
    mkdirSync(open)
    chmodSync(open, 0o777)
    const below = run(app, [], { ADDON_DIR: join(open, 'cache', 'agent-fs-tools') })
    expect(below.status).not.toBe(0)
    expect(below.stderr).toContain(`is not a private directory (${open}: other users can write to it (mode 0777))`)
    const link = join(work, 'looks-private')
    symlinkSync(open, link)
    const throughLink = run(app, [], { ADDON_DIR: join(link, 'cache') })
    expect(throughLink.status).not.toBe(0)
    expect(throughLink.stderr).toContain(`is not a private directory (${open}: other users can write to it (mode 0777))`)
    expect(readdirSync(open)).toEqual([]) // refused before anything was created there

    // A sticky directory (as /tmp) is fine: others cannot rename or remove what they do not own.
    const sticky = join(work, 'sticky')
    mkdirSync(sticky)
    chmodSync(sticky, 0o1777)
    const inSticky = run(app, [], { ADDON_DIR: join(sticky, 'agent-fs-tools') })
    expect(inSticky.stderr).toBe('')
    expectToolCalls(JSON.parse(inSticky.stdout) as HostOutput, inSticky.root)
  })

  it('replaces an extracted file others can write to, though its content is right (issue 26)', () => {
    const addonDir = join(work, 'cache-3')
    const expected = join(addonDir, `agent-fs-tools-${addonHash.slice(0, 32)}.node`)
    expect(run(app, [], { ADDON_DIR: addonDir }).status).toBe(0)
    chmodSync(expected, 0o666)
    const again = run(app, [], { ADDON_DIR: addonDir })
    expect(again.stderr).toBe('')
    expect(statSync(expected).mode & 0o777).toBe(0o600)
    expect(readFileSync(expected).equals(readFileSync(addon))).toBe(true)
  })

  it.skipIf(process.getuid?.() !== 0)('replaces an extracted file of another user, though its content is right (issue 26; needs root to chown)', () => {
    const addonDir = join(work, 'cache-4')
    const expected = join(addonDir, `agent-fs-tools-${addonHash.slice(0, 32)}.node`)
    expect(run(app, [], { ADDON_DIR: addonDir }).status).toBe(0)
    chownSync(expected, 65534, 65534)
    const again = run(app, [], { ADDON_DIR: addonDir })
    expect(again.stderr).toBe('')
    expect(statSync(expected).uid).toBe(process.getuid?.())
    expect(readFileSync(expected).equals(readFileSync(addon))).toBe(true)
  })

  it('a NAPI_RS_NATIVE_LIBRARY_PATH already set wins over the asset', () => {
    const addonDir = join(work, 'cache-2')
    const child = run(app, [], { ADDON_DIR: addonDir, NAPI_RS_NATIVE_LIBRARY_PATH: addon })
    expect(child.stderr).toBe('')
    const out = JSON.parse(child.stdout) as HostOutput
    expect(out.extracted).toBe(addon)
    expect(out.loadedFrom).toBe(addon)
    expectToolCalls(out, child.root)
    expect(existsSync(addonDir)).toBe(false)
  })
})

/**
 * The other way to build one, Tomo's (Node 25.5 and later): an ES module bundle with everything
 * inlined and a `require` from `createRequire` (Tomo's tsup configuration, done with esbuild, which
 * tsup drives), made into an executable by `node --build-sea` of a Node 26 binary from the npm
 * registry (`scripts/lib/runtimes.mjs`).
 */
const node26 = runtimeAvailable('node') ? pinnedVersion('node', '26') : undefined
describe.skipIf(node26 === undefined)(
  `a single executable built with node --build-sea${node26 ? ` (Node ${node26})` : ' (skipped: no pinned Node 26 package for this platform)'}`,
  () => {
    let app: string
    const addonHash = createHash('sha256').update(readFileSync(addon)).digest('hex')
    /** Tomo's tsup banner, as it writes it. */
    const TOMO_BANNER = 'import { createRequire as __banner_cjsRequire__ } from "module"; const require = __banner_cjsRequire__(import.meta.url);'

    beforeAll(async () => {
      const node = await runtimePath('node', '26')
      const result = buildSync({
        entryPoints: [join(work, 'host.ts')],
        bundle: true,
        platform: 'node',
        format: 'esm',
        external: ['*.node'],
        banner: { js: TOMO_BANNER },
        outfile: join(work, 'dist', 'tomo-like.mjs'),
        logLevel: 'silent',
      })
      expect(result.errors).toEqual([])
      app = join(work, 'host-app-26')
      const config = join(work, 'sea-config-26.json')
      writeFileSync(
        config,
        JSON.stringify({
          main: join(work, 'dist', 'tomo-like.mjs'),
          mainFormat: 'module',
          executable: node,
          output: app,
          disableExperimentalSEAWarning: true,
          assets: { 'agent-fs-tools.node': addon },
        }),
      )
      execFileSync(node, ['--build-sea', config], { cwd: work, stdio: 'pipe' })
    }, scaled(300_000))

    it('extracts the addon asset, loads it and makes tool calls', () => {
      const addonDir = join(work, 'cache-26', 'agent-fs-tools')
      const child = run(app, [], { ADDON_DIR: addonDir })
      expect(child.stderr).toBe('')
      const out = JSON.parse(child.stdout) as HostOutput
      const expected = join(addonDir, `agent-fs-tools-${addonHash.slice(0, 32)}.node`)
      expect(out.node).toBe(`v${node26}`)
      expect(out.extracted).toBe(expected)
      expect(out.loadedFrom).toBe(expected)
      expect(readFileSync(expected).equals(readFileSync(addon))).toBe(true)
      expect(statSync(expected).mode & 0o777).toBe(0o600)
      expectToolCalls(out, child.root)
    })
  },
)
