/** `list_directory` (../docs/tools.md#list_directory): entry formats, sorting, recursion, .gitignore, limits, errors. */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace, type ConfirmHandler } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { mkfifo, siblingDir, writeTree } from './helpers/files.js'
import { scaled } from './helpers/time.js'
import { symlinkOrSkip } from './helpers/links.js'
import { NAMES_WINDOWS_REFUSES, skipOnWindows } from './helpers/skip.js'

/** 2023-11-14T22:13:20Z */
const WHEN = new Date(1_700_000_000_000)

function fixture(root: string): void {
  writeTree(root, {
    'b.txt': 'hello', // 5 bytes
    'a.txt': 'x', // 1 byte
    'src/main.rs': 'fn main() {}\n',
    'src/lib/mod.rs': '',
  })
  for (const f of ['b.txt', 'a.txt', 'src/main.rs', 'src/lib/mod.rs']) utimesSync(join(root, f), WHEN, WHEN)
  symlinkOrSkip('src/main.rs', join(root, 'link'))
}

describe('list_directory entries', () => {
  it('lists `dir/`, `link -> target`, `file (size, YYYY-MM-DD)`, sorted, one per line', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    const result = await ws.call('list_directory', {})
    expect(result.status).toBe('ok')
    expect(result.output.split('\n')).toEqual([
      'a.txt (1 byte, 2023-11-14)',
      'b.txt (5 bytes, 2023-11-14)',
      'link -> src/main.rs',
      'src/',
    ])
  })

  it('skips the temporary files of atomic writes (in flight, or left by a crash), also in glob', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    writeFileSync(join(root, '.a.txt.4242.0.agent-fs-tools.tmp'), 'half-written')
    writeFileSync(join(root, 'src/.main.rs.4242.1.agent-fs-tools.tmp'), 'half-written')
    const direct = await ws.call('list_directory', {})
    expect(direct.output).not.toContain('agent-fs-tools.tmp')
    expect(direct.output).toContain('a.txt (1 byte, 2023-11-14)')
    const recursive = await ws.call('list_directory', { recursive: true })
    expect(recursive.output).not.toContain('agent-fs-tools.tmp')
    expect(recursive.output).toContain('src/main.rs')
    const glob = await ws.call('glob', { pattern: '*.tmp' })
    expect(glob.status).toBe('ok')
    expect(glob.output).not.toContain('agent-fs-tools.tmp')
  })

  it('path defaults to "." and "." equals the root', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    const implicit = await ws.call('list_directory', {})
    const dot = await ws.call('list_directory', { path: '.' })
    const abs = await ws.call('list_directory', { path: root })
    expect(dot.output).toBe(implicit.output)
    expect(abs.output).toBe(implicit.output)
  })

  it('lists a subdirectory with names relative to it', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    const result = await ws.call('list_directory', { path: 'src' })
    expect(result.output.split('\n')).toEqual(['lib/', 'main.rs (13 bytes, 2023-11-14)'])
  })

  it('an empty directory is ok with no entries', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'empty'))
    const result = await ws.call('list_directory', { path: 'empty' })
    expect(result.status).toBe('ok')
    expect(result.output).not.toMatch(/\/$|\(.*bytes?/m)
  })

  it('shows a link to a directory as a link and a dangling link as a link', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'dir'))
    symlinkOrSkip('dir', join(root, 'dirlink'))
    symlinkOrSkip('missing-target', join(root, 'dangling'))
    const result = await ws.call('list_directory', {})
    expect(result.output.split('\n')).toEqual(['dangling -> missing-target', 'dir/', 'dirlink -> dir'])
  })

  it('sorts by name bytes and keeps odd names literally', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'B': '', 'a': '', ' lead': '', 'trail ': '', "q'uote": '', 'é': '' })
    const result = await ws.call('list_directory', {})
    const listed = result.output.split('\n').map((l) => l.replace(/ \(0 bytes, \d{4}-\d\d-\d\d\)$/, ''))
    expect(listed).toEqual([' lead', 'B', 'a', "q'uote", 'trail ', 'é'])
  })

  it('a FIFO is listed as an entry, without blocking', async () => {
    const { ws, root } = tempWorkspace()
    mkfifo(join(root, 'pipe'))
    const result = await ws.call('list_directory', {})
    expect(result.status).toBe('ok')
    expect(result.output).toMatch(/^pipe\b/)
  }, scaled(5000))
})

describe('list_directory recursive', () => {
  it('lists the whole tree with paths relative to the listed directory, never descending links', async () => {
    const { ws, root } = tempWorkspace()
    fixture(root)
    const outside = siblingDir(root)
    writeTree(outside, { 'secret.txt': 's' })
    symlinkOrSkip(outside, join(root, 'src/out'))
    const result = await ws.call('list_directory', { recursive: true })
    expect(result.status).toBe('ok')
    const lines = result.output.split('\n')
    expect(lines).toEqual(
      expect.arrayContaining([
        'a.txt (1 byte, 2023-11-14)',
        'b.txt (5 bytes, 2023-11-14)',
        'link -> src/main.rs',
        'src/',
        'src/lib/',
        'src/lib/mod.rs (0 bytes, 2023-11-14)',
        'src/main.rs (13 bytes, 2023-11-14)',
        `src/out -> ${outside}`,
      ]),
    )
    expect(lines).toHaveLength(8)
    expect(result.output).not.toContain('secret')
  })

  it('skips .git and what .gitignore ignores; includeIgnored shows ignored files but never .git', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, {
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.gitignore': 'node_modules/\n*.log\n',
      'node_modules/pkg/index.js': '',
      'debug.log': '',
      'app.js': '',
      'sub/.gitignore': 'local.txt\n',
      'sub/local.txt': '',
      'sub/kept.txt': '',
    })
    const plain = await ws.call('list_directory', { recursive: true })
    const names = plain.output.split('\n').map((l) => l.split(' ')[0])
    expect(names).toEqual(['.gitignore', 'app.js', 'sub/', 'sub/.gitignore', 'sub/kept.txt'])
    const all = await ws.call('list_directory', { recursive: true, includeIgnored: true })
    const allNames = all.output.split('\n').map((l) => l.split(' ')[0])
    expect(allNames).toEqual(
      expect.arrayContaining(['debug.log', 'node_modules/', 'node_modules/pkg/index.js', 'sub/local.txt']),
    )
    expect(allNames.some((n) => n!.startsWith('.git/'))).toBe(false)
  })

  it('a non-recursive listing still shows .git and ignored entries', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { '.git/HEAD': '', '.gitignore': '*.log\n', 'x.log': '' })
    const result = await ws.call('list_directory', {})
    const names = result.output.split('\n').map((l) => l.split(' ')[0])
    expect(names).toEqual(['.git/', '.gitignore', 'x.log'])
  })
})

describe('list_directory .gitignore scope', () => {
  it('a .gitignore above the repository root does not apply (git would not apply it)', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    // The temp base holds root/ and data/: a .gitignore there is outside the repository at root.
    writeTree(join(root, '..'), { '.gitignore': '*.log\n*\n' })
    writeTree(root, { '.git/HEAD': '', 'app.log': '', 'src/main.rs': '' })
    const ws = new Workspace({ root, trash: { dataDir } })
    const result = await ws.call('list_directory', { recursive: true })
    expect(result.output.split('\n').map((l) => l.split(' ')[0])).toEqual(['app.log', 'src/', 'src/main.rs'])
  })

  it('without any repository, a .gitignore above the workspace root does not apply', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    writeTree(join(root, '..'), { '.gitignore': '*\n' })
    writeTree(root, { 'a.txt': '', 'd/b.txt': '' })
    const ws = new Workspace({ root, trash: { dataDir } })
    const names = (await ws.call('list_directory', { recursive: true })).output.split('\n').map((l) => l.split(' ')[0])
    expect(names).toEqual(['a.txt', 'd/', 'd/b.txt'])
  })

  it('listing a subdirectory honours the .gitignore files between it and the repository root', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, {
      '.git/HEAD': '',
      '.gitignore': '*.log\nbuild/\n',
      'pkg/.gitignore': '*.tmp\n!keep.log\n',
      'pkg/src/a.log': '',
      'pkg/src/keep.log': '',
      'pkg/src/x.tmp': '',
      'pkg/src/build/out.js': '',
      'pkg/src/main.rs': '',
    })
    const result = await ws.call('list_directory', { path: 'pkg/src', recursive: true })
    expect(result.output.split('\n').map((l) => l.split(' ')[0])).toEqual(['keep.log', 'main.rs'])
    const all = await ws.call('list_directory', { path: 'pkg/src', recursive: true, includeIgnored: true })
    expect(all.output.split('\n').map((l) => l.split(' ')[0])).toEqual([
      'a.log',
      'build/',
      'build/out.js',
      'keep.log',
      'main.rs',
      'x.tmp',
    ])
  })

  it('in a workspace that is not a repository, the root .gitignore applies to listed subdirectories', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { '.gitignore': 'node_modules/\n', 'web/node_modules/x/i.js': '', 'web/app.js': '' })
    const result = await ws.call('list_directory', { path: 'web', recursive: true })
    expect(result.output.split('\n').map((l) => l.split(' ')[0])).toEqual(['app.js'])
  })
})

describe('list_directory limits', () => {
  it('listMaxEntries: exactly at the limit lists everything without a truncation note', async () => {
    const { ws, root } = tempWorkspace({ limits: { listMaxEntries: 3 } })
    writeTree(root, { a: '', b: '', c: '' })
    const result = await ws.call('list_directory', {})
    expect(result.output.split('\n')).toHaveLength(3)
    expect(result.output).not.toMatch(/truncat/i)
  })

  it('listMaxEntries: one over lists the limit, then says it was truncated and how to reach the rest', async () => {
    const { ws, root } = tempWorkspace({ limits: { listMaxEntries: 3 } })
    writeTree(root, { a: '', b: '', c: '', d: '' })
    const result = await ws.call('list_directory', {})
    expect(result.status).toBe('ok')
    const lines = result.output.split('\n')
    expect(lines.slice(0, 3).map((l) => l.split(' ')[0])).toEqual(['a', 'b', 'c'])
    expect(lines).toHaveLength(4)
    expect(lines[3]).toMatch(/truncated/i)
    expect(lines[3]).toMatch(/3/)
    // A flat directory has no subdirectory to list: the rest is found with glob.
    expect(lines[3]).toBe('[Listing truncated at 3 of 4 entries, sorted by name. To see the rest, use glob with a pattern (e.g. `*.rs`, or `name*`) to find files in it.]')
    expect(result.output).not.toMatch(/^d \(/m)
  })

  it('a flat directory over listMaxEntries without glob says the rest cannot be listed; a tree says to list a subdirectory', async () => {
    const { ws, root } = tempWorkspace({ limits: { listMaxEntries: 3 }, tools: { glob: { enabled: false } } })
    writeTree(root, { a: '', b: '', c: '', 'd/e': '' })
    const flat = await ws.call('list_directory', {})
    expect(flat.output).toMatch(/\[Listing truncated at 3 of 4 entries, sorted by name\. The entries after these, by name, cannot be listed in one call\.\]$/)
    expect(flat.output).not.toContain('glob')
    const tree = await ws.call('list_directory', { recursive: true })
    expect(tree.output).toMatch(/List a subdirectory, or list without recursive, to see the rest\.\]$/)
  })

  it('listMaxEntries bounds a recursive listing too', async () => {
    const { ws, root } = tempWorkspace({ limits: { listMaxEntries: 5 } })
    writeTree(root, Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`d${i}/f${i}.txt`, ''])))
    const at = await ws.call('list_directory', { recursive: true, path: 'd0' })
    expect(at.output).not.toMatch(/truncat/i)
    const result = await ws.call('list_directory', { recursive: true })
    const lines = result.output.split('\n')
    expect(lines).toHaveLength(6)
    expect(lines[5]).toMatch(/truncated/i)
  })

  it('the default listMaxEntries is 500', async () => {
    const { ws, root } = tempWorkspace()
    for (let i = 0; i < 501; i++) writeFileSync(join(root, `f${String(i).padStart(3, '0')}`), '')
    const result = await ws.call('list_directory', {})
    const lines = result.output.split('\n')
    expect(lines).toHaveLength(501)
    expect(lines[499]).toMatch(/^f499 /)
    expect(lines[500]).toMatch(/truncated/i)
  })
})

describe('list_directory errors', () => {
  it('a missing directory is NOT_FOUND naming it', async () => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('list_directory', { path: 'nope' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(join(root, 'nope'))
  })

  it('a file is NOT_A_DIRECTORY', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'f.txt': '' })
    const result = await ws.call('list_directory', { path: 'f.txt' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_DIRECTORY' })
    expect(result.output).toContain(join(root, 'f.txt'))
  })

  it.each([
    [{ path: 3 }, 'path'],
    [{ recursive: 'yes' }, 'recursive'],
    [{ includeIgnored: 1 }, 'includeIgnored'],
    [{ depth: 2 }, 'depth'],
  ])('%j is INVALID_ARGUMENTS naming %s', async (args, field) => {
    const { ws } = tempWorkspace()
    const result = await ws.call('list_directory' as string, args)
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain(field)
  })
})

describe('list_directory permissions', () => {
  it('cwdReadFile: false prompts with "List directory?"; no is "The user denied this read."', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdReadFile: false } })
    writeTree(root, { 'hidden-name.txt': '' })
    const confirm = vi.fn<ConfirmHandler>(() => false)
    const result = await ws.call('list_directory', { path: '.' }, { confirm })
    expect(result.status).toBe('denied')
    expect(result.output).toContain('The user denied this read.')
    expect(result.output).not.toContain('hidden-name')
    expect(confirm.mock.calls[0]![0]).toMatchObject({ tool: 'list_directory', label: 'List directory?', path: root, detail: root })
    expect(confirm.mock.calls[0]![0].recursive).toBeUndefined()
    await ws.call('list_directory', { recursive: true }, { confirm })
    expect(confirm.mock.calls[1]![0]).toMatchObject({ path: root, detail: `${root} (recursive)`, recursive: true })
    const ok = await ws.call('list_directory', {}, { confirm: () => true })
    expect(ok.output).toContain('hidden-name.txt')
  })

  it('outside root needs globalReadFile', async () => {
    const { ws, root } = tempWorkspace()
    const outside = siblingDir(root)
    writeTree(outside, { 'o.txt': '' })
    expect((await ws.call('list_directory', { path: outside })).status).toBe('denied')
    const ok = await ws.call('list_directory', { path: '../outside' }, { permissions: { globalReadFile: true } })
    expect(ok.output).toMatch(/^o\.txt /)
  })
})
