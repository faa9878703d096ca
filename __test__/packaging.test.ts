/**
 * Packaging (../docs/platforms.md#installing-and-loading): the exports map, runtime resolution from CJS and ESM through the package's
 * self-reference, TypeScript resolution per `moduleResolution`, the bin, and `npm pack` → install
 * in another project. Runs against the built package (`npm run build`).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, posix, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scaled } from './helpers/time.js'

const root = resolve(__dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>
  bin: Record<string, string>
  files: string[]
  version: string
}
const pkgVersion = pkg.version
const ENTRIES = ['.', './zod', './tomo', './ai-sdk', './opencode', './sea'] as const
const EXPECTED_EXPORTS: Record<(typeof ENTRIES)[number], string[]> = {
  '.': ['Workspace', 'ERROR_CODES'],
  './zod': ['zodSchemas', 'zodSchemaOf'],
  './tomo': ['createTomoTools', 'toTomoResult', 'displayNameOf'],
  './ai-sdk': ['createAiSdkTools', 'toModelOutput'],
  './opencode': ['createOpencodePlugin', 'createOpencodeTools', 'prefixedTools', 'toOpencodeOutput', 'OpencodeToolError'],
  './sea': ['extractSeaAddon'],
}

interface EntryConditions {
  types: { import: string; require: string }
  import: string
  require: string
}

/** The `type` of the package scope a file is in (nearest package.json). */
function scopeType(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: string }).type ?? 'commonjs'
    if (dirname(dir) === dir) throw new Error(`no package.json above ${file}`)
  }
}

function node(args: string[], cwd = root): string {
  return execFileSync(process.execPath, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

describe('exports map', () => {
  it.each(ENTRIES)('%s has types/import/require conditions pointing at files of the right format', (entry) => {
    const conditions = pkg.exports[entry] as EntryConditions
    expect(Object.keys(conditions)).toEqual(['types', 'import', 'require'])
    const files = {
      typesImport: join(root, conditions.types.import),
      typesRequire: join(root, conditions.types.require),
      import: join(root, conditions.import),
      require: join(root, conditions.require),
    }
    for (const file of Object.values(files)) expect(existsSync(file), file).toBe(true)
    // No "masquerading" types: each declaration file has the module format of the JS it describes.
    expect(scopeType(files.typesImport)).toBe('module')
    expect(scopeType(files.import)).toBe('module')
    expect(scopeType(files.typesRequire)).toBe('commonjs')
    expect(scopeType(files.require)).toBe('commonjs')
  })
})

describe('runtime resolution (self-reference)', () => {
  it.each(ENTRIES)('require("agent-fs-tools%s") gives the CJS build', (entry) => {
    const specifier = `agent-fs-tools${entry.slice(1)}`
    const out = node(['-e', `const m = require(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m)))`])
    expect(JSON.parse(out)).toEqual(expect.arrayContaining(EXPECTED_EXPORTS[entry]))
    expect(createRequire(join(root, 'x.js')).resolve(specifier)).toContain(`${join('dist', 'cjs')}`)
  })

  it.each(ENTRIES)('import("agent-fs-tools%s") gives the ESM build', (entry) => {
    const specifier = `agent-fs-tools${entry.slice(1)}`
    const out = node([
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify([Object.keys(m), import.meta.resolve(${JSON.stringify(specifier)})]))`,
    ])
    const [keys, url] = JSON.parse(out) as [string[], string]
    expect(keys).toEqual(expect.arrayContaining(EXPECTED_EXPORTS[entry]))
    expect(url).toContain('/dist/esm/')
  })

  it('the ESM and CJS builds both load the same native addon and work', () => {
    const script = (load: string) =>
      `${load}; const ws = new m.Workspace({ root: ${JSON.stringify(root)} }); console.log(ws.definitions().length > 0 && ws.cwd().cwd === ${JSON.stringify(root)})`
    expect(node(['-e', script('const m = require("agent-fs-tools")')]).trim()).toBe('true')
    expect(node(['--input-type=module', '-e', script('const m = await import("agent-fs-tools")')]).trim()).toBe('true')
  })
})

describe('TypeScript resolution', () => {
  const tsc = createRequire(join(root, 'x.js')).resolve('typescript/bin/tsc')
  const fixtures = join(root, '__test__', 'fixtures', 'types')
  const cases: Array<[string, Record<string, 'esm' | 'cjs'>]> = [
    ['bundler', { 'main.ts': 'esm' }],
    ['node16', { 'esm.mts': 'esm', 'cjs.cts': 'cjs' }],
    ['nodenext', { 'esm.mts': 'esm', 'cjs.cts': 'cjs' }],
  ]

  it.each(cases)('moduleResolution %s type-checks and resolves every entry to the matching build', (mode, expected) => {
    const run = spawnSync(process.execPath, [tsc, '-p', join(fixtures, mode), '--traceResolution'], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    })
    const errors = run.stdout.split('\n').filter((line) => /error TS\d+/.test(line))
    expect(errors).toEqual([])
    expect(run.status).toBe(0)
    // Pair each "Resolving module X from F" with the following "resolved to R".
    const resolved = new Map<string, string>()
    let pending: string | undefined
    for (const line of run.stdout.split('\n')) {
      const from = /^======== Resolving module '(agent-fs-tools[^']*)' from '([^']+)'/.exec(line)
      if (from) pending = `${from[1]} from ${relative(join(fixtures, mode), from[2]!)}`
      const to = /^======== Module name '(agent-fs-tools[^']*)' was successfully resolved to '([^']+)'/.exec(line)
      if (to && pending) {
        resolved.set(pending, relative(root, to[2]!))
        pending = undefined
      }
    }
    for (const [file, format] of Object.entries(expected)) {
      for (const entry of ENTRIES) {
        const specifier = `agent-fs-tools${entry.slice(1)}`
        const name = entry === '.' ? 'index' : entry.slice(2)
        expect(resolved.get(`${specifier} from ${file}`), `${specifier} from ${file}`).toBe(join('dist', format, `${name}.d.ts`))
      }
    }
  })
})

describe('bin', () => {
  it('agent-fs-tools --help prints usage', () => {
    const bin = join(root, pkg.bin['agent-fs-tools']!)
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
    expect(node([bin, '--help'])).toMatch(/^Usage: agent-fs-tools/)
    expect(node([bin, '--help'])).toContain('-v, --version')
    expect(node([bin, '--version'])).toBe(`${pkgVersion}\n`)
    expect(node([bin, '-v'])).toBe(`${pkgVersion}\n`)
    const unknown = spawnSync(process.execPath, [bin, 'frobnicate'], { encoding: 'utf8' })
    expect(unknown.status).not.toBe(0)
  })
})

/** This checkout's `.node` (the one `npm run build` made) and its napi-rs platform name. */
const builtAddon = readdirSync(root).find((name) => /^agent-fs-tools\.[\w-]+\.node$/.test(name))!
const platform = builtAddon.slice('agent-fs-tools.'.length, -'.node'.length)

/**
 * npm. On Windows `npm` is a `.cmd`, which Node starts only through a shell: there npm's own
 * script is run instead, as npm names it to the scripts it runs (`npm test`).
 */
function npm(args: string[], cwd: string): string {
  const script = process.platform === 'win32' ? process.env.npm_execpath : undefined
  const [command, first] = script?.endsWith('.js') ? [process.execPath, [script]] : ['npm', []]
  return execFileSync(command, [...first, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Installs a tarball into `project`, from the npm cache where it can (npm 11 asks the registry about an optional peer it has not cached). */
function install(tarball: string, project: string): void {
  npm(['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'], project)
}

/** `npm pack` of `dir` into `destination`: the tarball's path and the paths it holds. */
function pack(dir: string, destination: string): { tarball: string; paths: string[] } {
  const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', destination], dir)) as Array<{
    filename: string
    files: Array<{ path: string }>
  }>
  return { tarball: join(destination, info!.filename), paths: info!.files.map((f) => f.path) }
}

const runsCheck = `const ws = new m.Workspace({ root: process.cwd() }); console.log(ws.cwd().depth === 0 && ws.definitions().length > 0)`

describe('npm pack', () => {
  let work: string
  let paths: string[]
  let project: string

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'afs-pack-'))
    const packed = pack(root, work)
    paths = packed.paths
    project = join(work, 'project')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
    install(packed.tarball, project)
  }, scaled(120_000))

  afterAll(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('packs every file a relative link in its Markdown points at (links work on the npm page and in node_modules)', () => {
    const markdown = paths.filter((p) => p.endsWith('.md'))
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'docs/tools.md']))
    const missing: string[] = []
    for (const file of markdown) {
      for (const [, link] of readFileSync(join(root, file), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (link ?? '').split('#')[0]
        if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue
        const packed = posix.normalize(posix.join(posix.dirname(file), target)).replace(/\/$/, '')
        if (!paths.some((p) => p === packed || p.startsWith(`${packed}/`))) missing.push(`${file} → ${target}`)
      }
    }
    expect(missing).toEqual([])
  })

  it("packs the loader, this platform's .node and no other, both builds, their declarations, the docs and the LICENSE", () => {
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'LICENSE',
        'README.md',
        // The contract of this version, where the README's relative links find it.
        'CHANGELOG.md',
        'docs/tools.md',
        'index.js',
        'index.d.ts',
        'dist/esm/package.json',
        'dist/cjs/package.json',
        'dist/esm/cli/main.js',
        ...ENTRIES.flatMap((entry) => {
          const name = entry === '.' ? 'index' : entry.slice(2)
          return [`dist/esm/${name}.js`, `dist/esm/${name}.d.ts`, `dist/cjs/${name}.js`, `dist/cjs/${name}.d.ts`]
        }),
      ]),
    )
    expect(paths.filter((p) => p.endsWith('.node'))).toEqual([builtAddon])
    expect(paths.some((p) => p.startsWith('src/') || p.startsWith('ts/') || p.startsWith('__test__/') || p.startsWith('npm/'))).toBe(false)
    // The CLI is ESM only and has no API: no CJS build of it, no declarations.
    expect(paths.some((p) => p.startsWith('dist/cjs/cli/'))).toBe(false)
    expect(paths.filter((p) => p.startsWith('dist/esm/cli/') && p.endsWith('.d.ts'))).toEqual([])
  })

  it('installs and runs in another project (CJS and ESM); optional peers only for their entries', () => {
    expect(node(['-e', `const m = require('agent-fs-tools'); ${runsCheck}`], project).trim()).toBe('true')
    expect(node(['--input-type=module', '-e', `const m = await import('agent-fs-tools'); ${runsCheck}`], project).trim()).toBe('true')
    const zodEntry = spawnSync(process.execPath, ['-e', "require('agent-fs-tools/zod')"], { cwd: project, encoding: 'utf8' })
    expect(zodEntry.status).not.toBe(0)
    expect(zodEntry.stderr).toContain("'zod'")
  })

  it('the installed bin answers --version and --help', () => {
    const bin = join(project, 'node_modules', '.bin', 'agent-fs-tools')
    expect(execFileSync(bin, ['--version'], { cwd: project, encoding: 'utf8' })).toBe(`${pkgVersion}\n`)
    expect(execFileSync(bin, ['--help'], { cwd: project, encoding: 'utf8' })).toMatch(/^Usage: agent-fs-tools <command>/)
  })

  it('the published layout: with no .node in the main package, the loader finds the per-platform package from npm/', () => {
    // What `napi artifacts` does in the release workflow: the binary moves into its npm/ package.
    rmSync(join(project, 'node_modules', 'agent-fs-tools', builtAddon))
    const missing = spawnSync(process.execPath, ['-e', "require('agent-fs-tools')"], { cwd: project, encoding: 'utf8' })
    expect(missing.status).not.toBe(0)
    expect(missing.stderr).toContain(`agent-fs-tools: no native addon for ${platform}: neither ${builtAddon} beside`)
    expect(missing.stderr).toContain(`nor the package agent-fs-tools-${platform} could be loaded`)

    const platformPackage = join(work, platform)
    cpSync(join(root, 'npm', platform), platformPackage, { recursive: true })
    // What it would publish: a dry run over an empty stand-in (packing 100 MB of debug build is
    // slow; the list depends on names only). Then the real binary, installed from the directory.
    writeFileSync(join(platformPackage, builtAddon), '')
    const [contents] = JSON.parse(npm(['pack', '--dry-run', '--json'], platformPackage)) as Array<{ files: Array<{ path: string }> }>
    expect(contents!.files.map((f) => f.path).sort()).toEqual(['LICENSE', 'README.md', builtAddon, 'package.json'])
    rmSync(join(platformPackage, builtAddon))
    symlinkSync(join(root, builtAddon), join(platformPackage, builtAddon))
    install(platformPackage, project)
    expect(node(['-e', `const m = require('agent-fs-tools'); ${runsCheck}`], project).trim()).toBe('true')
    expect(node(['--input-type=module', '-e', `const m = await import('agent-fs-tools'); ${runsCheck}`], project).trim()).toBe('true')
  })
})

describe('what the main package may carry (scripts/check-package.mjs, run by prepack and prepublishOnly)', () => {
  const check = (dir: string, ...flags: string[]) =>
    spawnSync(process.execPath, [join(root, 'scripts', 'check-package.mjs'), ...flags, dir], { encoding: 'utf8' })

  it("packing takes this platform's binary only; publishing takes none", () => {
    const dir = mkdtempSync(join(tmpdir(), 'afs-check-'))
    try {
      mkdirSync(join(dir, 'dist', 'esm'), { recursive: true })
      mkdirSync(join(dir, 'dist', 'cjs'), { recursive: true })
      writeFileSync(join(dir, 'dist', 'esm', 'index.js'), '')
      writeFileSync(join(dir, 'dist', 'cjs', 'index.js'), '')
      writeFileSync(join(dir, builtAddon), '')
      expect(check(dir).status).toBe(0)

      const other = platform === 'darwin-arm64' ? 'agent-fs-tools.linux-x64-gnu.node' : 'agent-fs-tools.darwin-arm64.node'
      writeFileSync(join(dir, other), '')
      const mixed = check(dir)
      expect(mixed.status).not.toBe(0)
      expect(mixed.stderr).toContain(`agent-fs-tools: ${other} is not this machine's binary (${builtAddon})`)
      rmSync(join(dir, other))

      const publish = check(dir, '--publish')
      expect(publish.status).not.toBe(0)
      expect(publish.stderr).toContain(`agent-fs-tools: ${builtAddon} is at the package root: binaries are published in the per-platform packages`)
      rmSync(join(dir, builtAddon))
      expect(check(dir, '--publish').status).toBe(0)

      rmSync(join(dir, 'dist'), { recursive: true })
      expect(check(dir).stderr).toContain('dist/esm/index.js is missing: run `npm run build` first')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('per-platform packages (npm/)', () => {
  const targets = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { napi: { targets: string[] } }).napi.targets
  /** napi-rs's platform name of a Rust target triple. */
  const platformOf = (triple: string): string => {
    const [cpu, , os, abi] = triple.split('-') as [string, string, string, string | undefined]
    const arch = cpu === 'x86_64' ? 'x64' : cpu === 'aarch64' ? 'arm64' : cpu
    return os === 'darwin' ? `darwin-${arch}` : os === 'windows' ? `win32-${arch}-${abi}` : `${os}-${arch}-${abi}`
  }

  it('napi.targets names every supported target; npm/ has one package per target, and the loader lists each (loader.test.ts: the names it loads)', () => {
    expect([...targets].sort()).toEqual(
      [
        'aarch64-apple-darwin',
        'aarch64-unknown-linux-gnu',
        'aarch64-unknown-linux-musl',
        'x86_64-apple-darwin',
        'x86_64-unknown-linux-gnu',
        'x86_64-unknown-linux-musl',
        'x86_64-pc-windows-msvc',
        'aarch64-pc-windows-msvc',
      ].sort(),
    )
    const platforms = targets.map(platformOf)
    expect(readdirSync(join(root, 'npm')).sort()).toEqual([...platforms].sort())
    const loader = readFileSync(join(root, 'index.js'), 'utf8')
    const license = readFileSync(join(root, 'LICENSE'), 'utf8')
    for (const p of platforms) {
      const manifest = JSON.parse(readFileSync(join(root, 'npm', p, 'package.json'), 'utf8')) as Record<string, unknown>
      expect(manifest.name).toBe(`agent-fs-tools-${p}`)
      expect(manifest.version).toBe(pkgVersion)
      expect(manifest.main).toBe(`agent-fs-tools.${p}.node`)
      expect(manifest.files).toEqual([`agent-fs-tools.${p}.node`])
      expect(readFileSync(join(root, 'npm', p, 'LICENSE'), 'utf8')).toBe(license)
    }
    const listed = /^const PLATFORMS = (\[.*\])$/m.exec(loader)?.[1]
    expect(listed).toBeDefined()
    expect((JSON.parse(listed!.replace(/'/g, '"')) as string[]).sort()).toEqual([...platforms].sort())
  })

  it('the release workflow builds exactly napi.targets', () => {
    const workflow = readFileSync(join(root, '.github', 'workflows', 'release.yml'), 'utf8')
    const built = [...workflow.matchAll(/\{ host: [\w.-]+, target: ([\w-]+)\b/g)].map((m) => m[1]!)
    expect(built.sort()).toEqual([...targets].sort())
  })
})
