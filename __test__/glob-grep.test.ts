/**
 * `glob` and `grep` (issue 9, ../docs/permissions-and-prompts.md, ../docs/tools.md): matches and output formats, ignore rules, bounds with a
 * truncation line, bad patterns, binary files, the sandbox (symlinks are never followed out of the
 * searched tree, the trash data directory is unreachable), abort, and the `Search files?` prompt.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace, type ConfirmHandler } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { deferred, siblingDir, writeTree } from './helpers/files.js'
import { symlinkOrSkip } from './helpers/links.js'

const lines = (output: string): string[] => output.split('\n')

/** Sets a file's modification time to `seconds` after 2023-11-14T22:13:20Z. */
function touch(path: string, seconds: number): void {
  const when = new Date(1_700_000_000_000 + seconds * 1000)
  utimesSync(path, when, when)
}

describe('glob', () => {
  it('finds files by name at any depth, paths relative to the searched directory, newest first', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.ts': '', 'src/b.ts': '', 'src/deep/c.ts': '', 'src/d.js': '', 'e.tsx': '' })
    touch(join(root, 'a.ts'), 1)
    touch(join(root, 'src/b.ts'), 3)
    touch(join(root, 'src/deep/c.ts'), 2)
    const result = await ws.call('glob', { pattern: '*.ts' })
    expect(result.status).toBe('ok')
    expect(lines(result.output)).toEqual(['src/b.ts', 'src/deep/c.ts', 'a.ts'])
    expect(result.data).toMatchObject({ path: root, files: 3, total: 3, truncated: false })
    const inSrc = await ws.call('glob', { pattern: '**/*.{ts,js}', path: 'src' })
    expect(lines(inSrc.output).sort()).toEqual(['b.ts', 'd.js', 'deep/c.ts'])
  })

  it('a pattern with a slash matches the relative path; `*` stays within a directory', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'src/a.rs': '', 'src/x/b.rs': '', 'other/src/c.rs': '' })
    expect((await ws.call('glob', { pattern: 'src/*.rs' })).output).toBe('src/a.rs')
    const deep = await ws.call('glob', { pattern: 'src/**/*.rs' })
    expect(lines(deep.output).sort()).toEqual(['src/a.rs', 'src/x/b.rs'])
  })

  it('equal modification times are ordered by path, so the output is deterministic', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'c.txt': '', 'a.txt': '', 'b/z.txt': '' })
    for (const f of ['c.txt', 'a.txt', 'b/z.txt']) touch(join(root, f), 0)
    expect(lines((await ws.call('glob', { pattern: '*.txt' })).output)).toEqual(['a.txt', 'b/z.txt', 'c.txt'])
  })

  it('skips .git and what .gitignore ignores, unless includeIgnored (never .git)', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, {
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.git/config.js': '',
      '.gitignore': 'node_modules/\n*.log.js\n',
      'node_modules/pkg/index.js': '',
      'debug.log.js': '',
      'app.js': '',
      'sub/.gitignore': 'local.js\n',
      'sub/local.js': '',
      'sub/kept.js': '',
    })
    const plain = await ws.call('glob', { pattern: '*.js' })
    expect(lines(plain.output).sort()).toEqual(['app.js', 'sub/kept.js'])
    const all = await ws.call('glob', { pattern: '*.js', includeIgnored: true })
    expect(lines(all.output).sort()).toEqual(['app.js', 'debug.log.js', 'node_modules/pkg/index.js', 'sub/kept.js', 'sub/local.js'])
  })

  it("searching a subdirectory still applies the repository's .gitignore", async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { '.git/HEAD': '', '.gitignore': '*.gen.ts\n', 'src/a.ts': '', 'src/a.gen.ts': '' })
    expect((await ws.call('glob', { pattern: '*.ts', path: 'src' })).output).toBe('a.ts')
  })

  it('no match is ok and says so', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': '' })
    const result = await ws.call('glob', { pattern: '*.zig' })
    expect(result.status).toBe('ok')
    expect(result.output).toContain(`No files match \`*.zig\` in ${root}`)
  })

  it('listMaxEntries bounds the output, then a line says how to narrow it', async () => {
    const { ws, root } = tempWorkspace({ limits: { listMaxEntries: 3 } })
    writeTree(root, { a: '', b: '', c: '', d: '', e: '' })
    ;['a', 'b', 'c', 'd', 'e'].forEach((f, i) => touch(join(root, f), i))
    const result = await ws.call('glob', { pattern: '*' })
    const out = lines(result.output)
    expect(out.slice(0, 3)).toEqual(['e', 'd', 'c'])
    expect(out).toHaveLength(4)
    expect(out[3]).toMatch(/Found 5 files; showing the 3 most recently modified/)
    expect(out[3]).toMatch(/more specific pattern|subdirectory/)
    expect(result.data).toMatchObject({ truncated: true, files: 3, total: 5 })
    const exact = await ws.call('glob', { pattern: '[abc]' })
    expect(exact.output).not.toMatch(/Found/)
  })

  it('a bad glob is INVALID_ARGUMENTS naming the pattern; an absolute pattern explains itself', async () => {
    const { ws } = tempWorkspace()
    const bad = await ws.call('glob', { pattern: 'src/[a' })
    expect(bad).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(bad.output).toContain('pattern')
    const abs = await ws.call('glob', { pattern: '/etc/*.conf' })
    expect(abs.code).toBe('INVALID_ARGUMENTS')
    expect(abs.output).toMatch(/path/)
  })

  it('a missing directory is NOT_FOUND; a file is NOT_A_DIRECTORY', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'f.txt': '' })
    expect(await ws.call('glob', { pattern: '*', path: 'nope' })).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    const file = await ws.call('glob', { pattern: '*', path: 'f.txt' })
    expect(file).toMatchObject({ status: 'error', code: 'NOT_A_DIRECTORY' })
    expect(file.output).toContain(join(root, 'f.txt'))
  })

  it('formatCall is `pattern` or `pattern in path`', () => {
    const { ws } = tempWorkspace()
    expect(ws.formatCall('glob', { pattern: '**/*.ts' })).toBe('**/*.ts')
    expect(ws.formatCall('glob', { pattern: '*.ts', path: 'src' })).toBe('*.ts in src')
  })
})

describe('grep', () => {
  function fixture(root: string): void {
    writeTree(root, {
      'src/main.rs': 'fn main() {\n    helper();\n}\n',
      'src/lib.rs': 'pub fn helper() {}\n// TODO: more\n',
      'README.md': '# Project\nCall helper() to help.\n',
    })
  }

  it('prints `path:line: text`, sorted by path, relative to the searched directory', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    const result = await ws.call('grep', { pattern: 'helper\\(\\)' })
    expect(result.status).toBe('ok')
    expect(lines(result.output)).toEqual([
      'README.md:2: Call helper() to help.',
      'src/lib.rs:1: pub fn helper() {}',
      'src/main.rs:2:     helper();',
    ])
    expect(result.data).toMatchObject({ path: root, matches: 3, files: 3, truncated: false })
    const inSrc = await ws.call('grep', { pattern: 'fn \\w+' , path: 'src' })
    expect(lines(inSrc.output)).toEqual(['lib.rs:1: pub fn helper() {}', 'main.rs:1: fn main() {'])
  })

  it('searches a single file, shown by its name', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    const result = await ws.call('grep', { pattern: 'TODO', path: 'src/lib.rs' })
    expect(result.output).toBe('lib.rs:2: // TODO: more')
  })

  it('caseInsensitive', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'Hello\nhello\nHELLO\nbye\n' })
    expect(lines((await ws.call('grep', { pattern: 'hello' })).output)).toEqual(['a.txt:2: hello'])
    const ci = await ws.call('grep', { pattern: 'hello', caseInsensitive: true })
    expect(lines(ci.output)).toEqual(['a.txt:1: Hello', 'a.txt:2: hello', 'a.txt:3: HELLO'])
  })

  it('contextLines shows `path-line- text` around matches with `--` between groups and files', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, {
      'a.txt': ['one', 'two', 'MATCH', 'four', 'five', 'six', 'seven', 'MATCH', 'nine'].join('\n') + '\n',
      'b.txt': 'x\nMATCH\n',
    })
    const result = await ws.call('grep', { pattern: 'MATCH', contextLines: 1 })
    expect(lines(result.output)).toEqual([
      'a.txt-2- two',
      'a.txt:3: MATCH',
      'a.txt-4- four',
      '--',
      'a.txt-7- seven',
      'a.txt:8: MATCH',
      'a.txt-9- nine',
      '--',
      'b.txt-1- x',
      'b.txt:2: MATCH',
    ])
  })

  it('include filters files by name or relative path', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.ts': 'needle\n', 'b.js': 'needle\n', 'src/c.ts': 'needle\n', 'src/d.tsx': 'needle\n' })
    expect(lines((await ws.call('grep', { pattern: 'needle', include: '*.ts' })).output)).toEqual(['a.ts:1: needle', 'src/c.ts:1: needle'])
    expect(lines((await ws.call('grep', { pattern: 'needle', include: 'src/*.{ts,tsx}' })).output)).toEqual([
      'src/c.ts:1: needle',
      'src/d.tsx:1: needle',
    ])
    const bad = await ws.call('grep', { pattern: 'needle', include: '[' })
    expect(bad).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(bad.output).toContain('include')
  })

  it('skips .git and .gitignored files unless includeIgnored', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, {
      '.git/config': 'needle\n',
      '.gitignore': 'dist/\n',
      'dist/out.js': 'needle\n',
      'src/in.js': 'needle\n',
    })
    expect((await ws.call('grep', { pattern: 'needle' })).output).toBe('src/in.js:1: needle')
    const all = await ws.call('grep', { pattern: 'needle', includeIgnored: true })
    expect(lines(all.output)).toEqual(['dist/out.js:1: needle', 'src/in.js:1: needle'])
  })

  it('skips binary files', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'text.txt': 'needle\n', 'blob.bin': Buffer.from('needle\0\x01\x02needle\n', 'binary') })
    expect((await ws.call('grep', { pattern: 'needle' })).output).toBe('text.txt:1: needle')
    const single = await ws.call('grep', { pattern: 'needle', path: 'blob.bin' })
    expect(single).toMatchObject({ status: 'error', code: 'BINARY_FILE' })
  })

  it('no match is ok and says so', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    const result = await ws.call('grep', { pattern: 'nothing-like-this' })
    expect(result.status).toBe('ok')
    expect(result.output).toContain(`No matches for \`nothing-like-this\` in ${root}`)
    expect(result.data).toMatchObject({ matches: 0, truncated: false })
  })

  it('maxMatches bounds the output in path order, then a line says how to narrow it', async () => {
    const { ws, root } = tempWorkspace()
    const files: Record<string, string> = {}
    for (let i = 0; i < 30; i++) files[`f${String(i).padStart(2, '0')}.txt`] = 'hit\nhit\n'
    writeTree(root, files)
    const result = await ws.call('grep', { pattern: 'hit', maxMatches: 5 })
    const out = lines(result.output)
    expect(out.slice(0, 5)).toEqual(['f00.txt:1: hit', 'f00.txt:2: hit', 'f01.txt:1: hit', 'f01.txt:2: hit', 'f02.txt:1: hit'])
    expect(out).toHaveLength(6)
    expect(out[5]).toMatch(/first 5 matches/)
    expect(out[5]).toMatch(/include|subdirectory|maxMatches/)
    expect(result.data).toMatchObject({ matches: 5, truncated: true })
    // The default is 100.
    const dflt = await ws.call('grep', { pattern: 'hit' })
    expect(lines(dflt.output)).toHaveLength(60)
    writeTree(root, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`g${i}.txt`, 'hit\nhit\n'])))
    const over = await ws.call('grep', { pattern: 'hit' })
    expect(lines(over.output)).toHaveLength(101)
    expect(over.data).toMatchObject({ matches: 100, truncated: true })
  })

  it('the output is the same on every run (parallel walk, sorted result)', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`d${i % 7}/f${i}.txt`, 'x\nhit\n'])))
    const first = await ws.call('grep', { pattern: 'hit', maxMatches: 50 })
    for (let i = 0; i < 5; i++) expect((await ws.call('grep', { pattern: 'hit', maxMatches: 50 })).output).toBe(first.output)
  })

  it('readMaxBytes bounds the output too', async () => {
    const { ws, root } = tempWorkspace({ limits: { readMaxBytes: 200 } })
    writeTree(root, { 'a.txt': Array.from({ length: 50 }, (_, i) => `hit number ${i}`).join('\n') })
    const result = await ws.call('grep', { pattern: 'hit' })
    const out = lines(result.output)
    expect(out.slice(0, -1).join('\n').length).toBeLessThanOrEqual(200)
    expect(out.at(-1)).toMatch(/truncated at 200 bytes/)
    expect(result.data).toMatchObject({ truncated: true })
  })

  it('a bad regex is INVALID_ARGUMENTS with the regex error', async () => {
    const { ws } = tempWorkspace()
    const result = await ws.call('grep', { pattern: 'foo(bar' })
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain('pattern')
    expect(result.output).toMatch(/unclosed group/)
  })

  it('a missing path is NOT_FOUND', async () => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('grep', { pattern: 'x', path: 'nope' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(join(root, 'nope'))
  })

  it('formatCall is `pattern in path`', () => {
    const { ws } = tempWorkspace()
    expect(ws.formatCall('grep', { pattern: 'TODO' })).toBe('TODO')
    expect(ws.formatCall('grep', { pattern: 'TODO', path: 'src', include: '*.rs' })).toBe('TODO in src (*.rs)')
  })
})

describe('glob and grep in the sandbox', () => {
  it('never follow a symlink out of the searched tree', async () => {
    const { ws, root } = tempWorkspace()
    const outside = siblingDir(root)
    writeTree(outside, { 'secret.txt': 'SECRET-BYTES\n' })
    writeTree(root, { 'own.txt': 'SECRET-BYTES are mentioned here\n' })
    symlinkOrSkip(outside, join(root, 'linked-dir'))
    symlinkOrSkip(join(outside, 'secret.txt'), join(root, 'linked-file.txt'))
    const grep = await ws.call('grep', { pattern: 'SECRET' })
    expect(grep.output).toBe('own.txt:1: SECRET-BYTES are mentioned here')
    const glob = await ws.call('glob', { pattern: '**/*.txt' })
    expect(glob.output).toBe('own.txt')
  })

  it('a path naming a link to an outside directory is outside: PATH_NOT_ALLOWED under allowedPaths', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const outside = siblingDir(root)
    writeTree(outside, { 'secret.txt': 'SECRET-BYTES\n' })
    symlinkOrSkip(outside, join(root, 'out'))
    const ws = new Workspace({ root, allowedPaths: [root], trash: { dataDir }, permissions: { globalReadFile: true } })
    for (const tool of ['grep', 'glob']) {
      for (const path of ['out', outside, '..']) {
        const result = await ws.call(tool, { pattern: tool === 'grep' ? 'SECRET' : '*', path })
        expect(result, `${tool} ${path}`).toMatchObject({ status: 'error', code: 'PATH_NOT_ALLOWED' })
        expect(result.output).not.toContain('SECRET-BYTES')
      }
    }
  })

  it('the trash data directory inside root is never searched', async () => {
    const { root } = tempWorkspaceDirs()
    const dataDir = join(root, '.agent-data')
    mkdirSync(join(dataDir, 'trash', 'bucket'), { recursive: true })
    mkdirSync(join(dataDir, 'audit'), { recursive: true })
    writeFileSync(join(dataDir, 'trash', 'bucket', 'archive.txt'), 'SECRET-BYTES\n')
    writeFileSync(join(dataDir, 'audit', 'log.jsonl'), 'SECRET-BYTES\n')
    writeFileSync(join(root, 'visible.txt'), 'SECRET-BYTES\n')
    const ws = new Workspace({ root, trash: { dataDir } })
    expect((await ws.call('grep', { pattern: 'SECRET' })).output).toBe('visible.txt:1: SECRET-BYTES')
    expect((await ws.call('glob', { pattern: '**' })).output).toBe('visible.txt')
    const direct = await ws.call('grep', { pattern: 'SECRET', path: '.agent-data/audit' })
    expect(direct.code).toBe('PATH_NOT_ALLOWED')
  })
})

describe('glob and grep permissions and abort', () => {
  it.each(['glob', 'grep'])('%s outside root asks "Search files?" unless globalReadFile', async (tool) => {
    const { ws, root } = tempWorkspace()
    const outside = siblingDir(root)
    writeTree(outside, { 'o.txt': 'needle\n' })
    const args = { pattern: tool === 'grep' ? 'needle' : '*.txt', path: outside }
    const denied = await ws.call(tool, args)
    expect(denied.status).toBe('denied')
    expect(denied.output).toContain('Nobody was asked to approve this read')
    const confirm = vi.fn<ConfirmHandler>(() => false)
    const no = await ws.call(tool, args, { confirm })
    expect(no.status).toBe('denied')
    expect(no.output).not.toContain('o.txt')
    expect(confirm).toHaveBeenCalledTimes(1)
    expect(confirm.mock.calls[0]![0]).toMatchObject({ tool, label: 'Search files?', path: outside, detail: `${outside}\nOutside the project (${root}): ${outside}` })
    const yes = await ws.call(tool, args, { confirm: () => true })
    expect(yes.output).toMatch(/^o\.txt/)
    const granted = await ws.call(tool, args, { permissions: { globalReadFile: true } })
    expect(granted.output).toMatch(/^o\.txt/)
    // Inside root, cwdReadFile (default true) grants it.
    writeTree(root, { 'i.txt': 'needle\n' })
    const inside = vi.fn<ConfirmHandler>(() => false)
    expect((await ws.call(tool, { pattern: args.pattern }, { confirm: inside })).status).toBe('ok')
    expect(inside).not.toHaveBeenCalled()
  })

  it.each(['glob', 'grep'])('%s: an aborted signal gives ABORTED and no results', async (tool) => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'needle\n' })
    const controller = new AbortController()
    controller.abort()
    const result = await ws.call(tool, { pattern: tool === 'grep' ? 'needle' : '*' }, { signal: controller.signal })
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(result.output).not.toContain('a.txt')
  })

  it('an abort while the prompt is open gives ABORTED without waiting for the answer', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdReadFile: false } })
    writeTree(root, { 'a.txt': 'needle\n' })
    const controller = new AbortController()
    const answer = deferred<boolean>()
    const pending = ws.call('grep', { pattern: 'needle' }, { signal: controller.signal, confirm: () => answer.promise })
    await new Promise((r) => setTimeout(r, 20))
    controller.abort()
    expect(await pending).toMatchObject({ status: 'error', code: 'ABORTED' })
    answer.resolve(true)
  })
})
