/**
 * Packaging (SPEC §9): the exports map, runtime resolution from CJS and ESM through the package's
 * self-reference, TypeScript resolution per `moduleResolution`, the bin, and `npm pack` → install
 * in another project. Runs against the built package (`npm run build`).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(__dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>
  bin: Record<string, string>
  files: string[]
}
const ENTRIES = ['.', './zod', './tomo', './ai-sdk', './sea'] as const
const EXPECTED_EXPORTS: Record<(typeof ENTRIES)[number], string[]> = {
  '.': ['Workspace', 'ERROR_CODES'],
  './zod': ['zodSchemas', 'zodSchemaOf'],
  './tomo': ['createTomoTools', 'toTomoResult', 'displayNameOf'],
  './ai-sdk': ['createAiSdkTools', 'toModelOutput'],
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
    const unknown = spawnSync(process.execPath, [bin, 'frobnicate'], { encoding: 'utf8' })
    expect(unknown.status).not.toBe(0)
  })
})

describe('npm pack', () => {
  it('packs the loader, the .node, both builds and their declarations; installs and runs in another project', () => {
    const work = mkdtempSync(join(tmpdir(), 'afs-pack-'))
    try {
      const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
      const [info] = JSON.parse(packed) as Array<{ filename: string; files: Array<{ path: string }> }>
      const paths = info!.files.map((f) => f.path)
      expect(paths).toEqual(
        expect.arrayContaining([
          'package.json',
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
      expect(paths.some((p) => /^agent-fs-tools\.[\w-]+\.node$/.test(p))).toBe(true)
      expect(paths.some((p) => p.startsWith('src/') || p.startsWith('ts/') || p.startsWith('__test__/'))).toBe(false)
      expect(paths.some((p) => p.startsWith('dist/cjs/cli/'))).toBe(false)

      const project = join(work, 'project')
      mkdirSync(project)
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
      execFileSync(
        'npm',
        ['install', join(work, info!.filename), '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'],
        { cwd: project, stdio: ['ignore', 'ignore', 'pipe'] },
      )
      const check = `const ws = new m.Workspace({ root: process.cwd() }); console.log(ws.cwd().depth === 0 && ws.definitions().length > 0)`
      expect(node(['-e', `const m = require('agent-fs-tools'); ${check}`], project).trim()).toBe('true')
      expect(node(['--input-type=module', '-e', `const m = await import('agent-fs-tools'); ${check}`], project).trim()).toBe('true')
      // Optional peers are needed only by the entries that use them.
      const zodEntry = spawnSync(process.execPath, ['-e', "require('agent-fs-tools/zod')"], { cwd: project, encoding: 'utf8' })
      expect(zodEntry.status).not.toBe(0)
      expect(zodEntry.stderr).toContain("'zod'")
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }, 120_000)
})
