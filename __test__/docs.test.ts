/**
 * The docs stay true to the repository: every relative link in README.md, CONTRIBUTING.md,
 * CHANGELOG.md and docs/*.md resolves to a file inside the repository (and, for `#anchor`, to a
 * heading of it); every code block marked as a complete program (```` ```ts check ````)
 * type-checks against the built package's types; every error code is documented in
 * docs/tools.md. Needs `npm run build` (the types are `dist/esm/*.d.ts`).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ERROR_CODES } from 'agent-fs-tools'
import { anchors, codeBlocks, links, slug } from './helpers/markdown.js'
import { scaled } from './helpers/time.js'

const root = resolve(__dirname, '..')

/** The Markdown files whose links and code blocks are checked, relative to the root. */
const DOCS = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

const read = (file: string): string => readFileSync(join(root, file), 'utf8')

/** Why the link `target` written in `file` does not resolve, or `undefined` when it does. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined // https:, mailto:: not ours to check
  const [rawPath = '', anchor] = target.split('#', 2)
  const path = decodeURIComponent(rawPath)
  const resolved = path === '' ? join(root, file) : resolve(root, dirname(file), path)
  const inside = relative(root, resolved)
  if (inside.startsWith('..') || isAbsolute(inside)) return `${path} is outside the repository`
  if (!existsSync(resolved)) return `${path} does not exist`
  if (anchor === undefined || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) return undefined
  return anchors(readFileSync(resolved, 'utf8')).has(anchor) ? undefined : `${inside} has no heading #${anchor}`
}

describe('links', () => {
  it.each(DOCS)('%s: every relative link resolves', (file) => {
    const broken = links(read(file))
      .map(({ target, line }) => ({ at: `${file}:${line} ${target}`, why: brokenLink(file, target) }))
      .filter(({ why }) => why !== undefined)
      .map(({ at, why }) => `${at}: ${why}`)
    expect(broken).toEqual([])
  })

  it('the checker itself finds a missing file, a missing heading and a path outside the repository', () => {
    expect(brokenLink('docs/tools.md', 'nope.md')).toMatch(/does not exist/)
    expect(brokenLink('docs/tools.md', 'trash.md#no-such-heading')).toMatch(/no heading/)
    expect(brokenLink('docs/tools.md', '#read_file')).toBeUndefined()
    expect(brokenLink('README.md', '../shared/SPEC.md')).toMatch(/outside the repository/)
    expect(slug('Asking elsewhere: `ws.check`')).toBe('asking-elsewhere-wscheck')
    expect(slug("cwd_get, cwd_push, cwd_pop")).toBe('cwd_get-cwd_push-cwd_pop')
  })
})

describe('code blocks marked `check`', () => {
  /** Every ```ts check block, with where it is. */
  const blocks = DOCS.flatMap((file) =>
    codeBlocks(read(file))
      .filter(({ info }) => /^(ts|typescript)\b/.test(info) && info.split(/\s+/).includes('check'))
      .map((block) => ({ ...block, at: `${file}:${block.line}` })),
  )
  const cache = join(root, 'node_modules', '.cache')
  mkdirSync(cache, { recursive: true })
  // Inside the repository's node_modules, so that `ai`, `zod` and `@types/node` resolve as they do for a host.
  const dir = mkdtempSync(join(cache, 'agent-fs-tools-docs-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('there are some (the marker is in use)', () => {
    expect(blocks.length).toBeGreaterThan(3)
  })

  it('type-check against the built package (dist/esm/*.d.ts), strict', () => {
    const files = blocks.map((block, i) => {
      const name = `block-${i}.ts`
      writeFileSync(join(dir, name), `// ${block.at}\n${block.code}\nexport {}\n`)
      return name
    })
    // A block with a type error: proves a failing block is reported (and by its file).
    writeFileSync(join(dir, 'must-fail.ts'), "import { Workspace } from 'agent-fs-tools'\nnew Workspace({ rot: '.' })\nexport {}\n")
    const dist = join(root, 'dist', 'esm')
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022'],
          module: 'ESNext',
          moduleResolution: 'bundler',
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          noEmit: true,
          paths: { 'agent-fs-tools': [join(dist, 'index.d.ts')], 'agent-fs-tools/*': [join(dist, '*.d.ts')] },
        },
        files: [...files, 'must-fail.ts'],
      }),
    )
    const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc')
    const run = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir, encoding: 'utf8' })
    const errors = run.stdout.split('\n').filter((line) => line.includes('error TS'))
    // `block-2.ts(16,18): error …` → `docs/hosts.md:160: error …` (the block's code starts on the file's line 2).
    const where = (line: string): string => {
      const found = /^block-(\d+)\.ts\((\d+),\d+\): (.*)$/.exec(line)
      if (!found) return line
      const block = blocks[Number(found[1])]!
      return `${block.at.slice(0, block.at.lastIndexOf(':'))}:${block.line + Number(found[2]) - 1}: ${found[3]}`
    }
    expect(errors.filter((line) => line.startsWith('must-fail.ts')).length).toBeGreaterThan(0)
    expect(errors.filter((line) => !line.startsWith('must-fail.ts')).map(where)).toEqual([])
  }, scaled(180_000))
})

describe('error codes', () => {
  const tools = read('docs/tools.md')
  const section = tools.slice(tools.indexOf('\n## Error codes\n'))
  const documented = (code: string): boolean => section.includes(`| \`${code}\` |`)

  it('docs/tools.md has an "Error codes" section', () => {
    expect(tools).toContain('\n## Error codes\n')
  })

  it.each([...ERROR_CODES])('%s (ERROR_CODES) has a row in docs/tools.md#error-codes', (code) => {
    expect(documented(code)).toBe(true)
  })

  it("every ErrorCode of src/error.rs, and every denial code, is in that section", () => {
    const rust = /pub enum ErrorCode \{([^}]*)\}/.exec(read('src/error.rs'))?.[1] ?? ''
    const variants = [...rust.matchAll(/^\s*([A-Z]\w*),/gm)].map(([, name]) =>
      name!.replace(/([a-z])([A-Z])/g, '$1_$2').replace(/([A-Z])([A-Z][a-z])/g, '$1_$2').toUpperCase(),
    )
    const denials = [...(/export type DenialCode = ([^\n]*)/.exec(read('ts/types.ts'))?.[1] ?? '').matchAll(/'(\w+)'/g)].map(([, c]) => c!)
    expect(variants).toContain('NOT_A_REGULAR_FILE')
    expect(denials).toEqual(['USER_DENIED', 'CONFIRM_TIMEOUT', 'NO_CONFIRM_HANDLER'])
    expect(variants.filter((code) => !documented(code))).toEqual([])
    expect(denials.filter((code) => !section.includes(`\`${code}\``))).toEqual([])
  })
})

describe('links to the docs in the code', () => {
  /** Every tracked source file that may cite a docs page. */
  const sources = spawnSync('git', ['ls-files', '--', 'src', 'ts', '__test__', 'examples', 'scripts', 'tests', 'bench', 'index.js'], { cwd: root, encoding: 'utf8' })
    .stdout.split('\n')
    .filter((file) => /\.(rs|ts|tsx|mts|mjs|cjs|js)$/.test(file) && file !== '__test__/docs.test.ts') // this file's are examples

  /** `../docs/tools.md#read_file`-style citations in `text`: a relative path ending in docs/<page>.md. */
  const citations = (text: string): string[] => [...text.matchAll(/(?:\.\.\/)+docs\/[a-z-]+\.md(?:#[\w-]+)?/g)].map(([cite]) => cite)

  it('there are some (the comments cite the docs)', () => {
    expect(sources.length).toBeGreaterThan(50)
    expect(sources.flatMap((file) => citations(read(file))).length).toBeGreaterThan(50)
  })

  it('every citation resolves from the file it is in, to the page and its heading', () => {
    const broken = sources.flatMap((file) =>
      citations(read(file))
        .map((cite) => ({ at: `${file}: ${cite}`, why: brokenLink(file, cite) }))
        .filter(({ why }) => why !== undefined)
        .map(({ at, why }) => `${at}: ${why}`),
    )
    expect(broken).toEqual([])
  })

  it('the checker finds a citation with the wrong depth', () => {
    expect(citations('see ../../docs/tools.md#read_file.')).toEqual(['../../docs/tools.md#read_file'])
    expect(brokenLink('ts/cli/undo.ts', '../docs/history-and-undo.md')).toMatch(/does not exist/)
    expect(brokenLink('ts/types.ts', '../docs/tools.md#no-such')).toMatch(/no heading/)
  })
})
