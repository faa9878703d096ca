/**
 * The sandbox (../docs/paths-and-sandbox.md): deny-by-default `allowedPaths`, containment by whole components on the
 * canonical path, symlinks judged by their final target, special files refused, literal bytes,
 * and the trash data directory unreachable.
 */
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  renameSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace, type ToolResult, type ConfirmHandler } from 'agent-fs-tools'
import { tempWorkspaceDirs } from './helpers/temp.js'
import { mkfifo, names, numbered, read, siblingDir, writeTree } from './helpers/files.js'
import { scaled } from './helpers/time.js'
import { symlinkOrSkip } from './helpers/links.js'
import { NAMES_WINDOWS_REFUSES, NO_UNIX_SOCKETS, skipOnWindows } from './helpers/skip.js'

/** A sandboxed workspace over R = root, with every permission granted (so only the sandbox decides). */
function sandboxed(extra: Partial<ConstructorParameters<typeof Workspace>[0]> = {}) {
  const { root, dataDir } = tempWorkspaceDirs()
  const confirm = vi.fn<ConfirmHandler>(() => true)
  const ws = new Workspace({
    root,
    allowedPaths: [root],
    trash: { dataDir },
    permissions: { cwdWriteFile: true, globalReadFile: true, globalWriteFile: true },
    confirm,
    ...extra,
  })
  return { ws, root, dataDir, confirm }
}

/** Every path-taking tool, for a path `p`, each expected to be refused outright. */
const attempts = (p: string): Array<[string, Record<string, unknown>]> => [
  ['read_file', { path: p }],
  ['write_file', { path: p, content: 'pwned' }],
  ['append_file', { path: p, content: 'pwned' }],
  ['edit_file', { path: p, edits: [{ oldString: 'SECRET-BYTES', newString: 'pwned' }] }],
]

function expectNotAllowed(result: ToolResult, label: string): void {
  expect(result, label).toMatchObject({ status: 'error', code: 'PATH_NOT_ALLOWED' })
  expect(result.output, label).not.toContain('SECRET-BYTES')
}

describe('allowedPaths: containment by whole components', () => {
  it.each(['_evil', '-2', "'", '"', ' ', '.bak', '2'])('the sibling R%s is not inside R', async (suffix) => {
    if (suffix === '"' || suffix === ' ') skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root, confirm } = sandboxed()
    const sibling = `${root}${suffix}`
    mkdirSync(sibling)
    writeFileSync(join(sibling, 'f.txt'), 'SECRET-BYTES\n')
    const rel = `../root${suffix}/f.txt`
    for (const p of [join(sibling, 'f.txt'), rel, `${root}/../root${suffix}/f.txt`]) {
      for (const [tool, args] of attempts(p)) expectNotAllowed(await ws.call(tool, args), `${tool} ${p}`)
      expectNotAllowed(await ws.call('list_directory', { path: sibling }), `list ${p}`)
      expectNotAllowed(await ws.call('create_directory', { path: join(sibling, 'new') }), `mkdir ${p}`)
      expectNotAllowed(await ws.call('cwd_push', { path: sibling }), `push ${p}`)
      expectNotAllowed(await ws.call('write_file', { path: join(sibling, 'new.txt'), content: 'x' }), `new ${p}`)
    }
    expect(read(join(sibling, 'f.txt'))).toBe('SECRET-BYTES\n')
    expect(names(sibling)).toEqual(['f.txt'])
    expect(confirm).not.toHaveBeenCalled()
  })

  it('R/../R_evil is refused, R/sub/../f is fine', async () => {
    const { ws, root } = sandboxed()
    const evil = siblingDir(root, 'root_evil')
    writeFileSync(join(evil, 'f.txt'), 'SECRET-BYTES\n')
    writeTree(root, { 'sub/x': '', 'f.txt': 'inside\n' })
    expectNotAllowed(await ws.call('read_file', { path: join(root, '..', 'root_evil', 'f.txt') }), 'join')
    expectNotAllowed(await ws.call('read_file', { path: `${root}/../root_evil/f.txt` }), 'raw')
    expect((await ws.call('read_file', { path: `${root}/sub/../f.txt` })).output).toBe(numbered(1, 'inside'))
    expect((await ws.call('read_file', { path: 'sub/../f.txt' })).output).toBe(numbered(1, 'inside'))
  })

  it('the parent of R, the filesystem root and R itself as a file path', async () => {
    const { ws, root } = sandboxed()
    expectNotAllowed(await ws.call('list_directory', { path: '..' }), '..')
    expectNotAllowed(await ws.call('list_directory', { path: '/' }), '/')
    expectNotAllowed(await ws.call('read_file', { path: '/etc/hostname' }), '/etc/hostname')
    expect((await ws.call('list_directory', { path: root })).status).toBe('ok')
  })

  it('several allowed trees: each is reachable, what is between them is not', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const other = siblingDir(root, 'other')
    const between = siblingDir(root, 'between')
    writeFileSync(join(other, 'o.txt'), 'other\n')
    writeFileSync(join(between, 'b.txt'), 'SECRET-BYTES\n')
    const ws = new Workspace({ root, allowedPaths: [root, other], trash: { dataDir }, permissions: { globalReadFile: true } })
    expect((await ws.call('read_file', { path: join(other, 'o.txt') })).output).toBe(numbered(1, 'other'))
    expectNotAllowed(await ws.call('read_file', { path: join(between, 'b.txt') }), 'between')
  })

  it('the error names the path and the allowed directories', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    const result = await ws.call('read_file', { path: join(outside, 'x') })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(result.output).toContain(join(outside, 'x'))
    expect(result.output).toContain(root)
  })
})

describe('outside paths get one answer that reveals nothing (issue 15.6)', () => {
  /** The output with the path the model gave replaced, to compare answers about different paths. */
  const shape = (result: ToolResult, given: string) => ({ ...result, output: result.output.split(given).join('<given>') })

  it('whether an outside name exists, is a file or a directory: the same code and words', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'file.txt'), 'SECRET-BYTES\n')
    mkdirSync(join(outside, 'dir'))
    const probes = ['file.txt/x', 'dir/x', 'missing/x', 'file.txt', 'missing']
    for (const tool of ['read_file', 'write_file', 'list_directory', 'cwd_push', 'create_directory'] as const) {
      const answers = []
      for (const probe of probes) {
        const given = join(outside, probe)
        const args = tool === 'write_file' ? { path: given, content: 'x' } : { path: given }
        answers.push(shape(await ws.call(tool, args), given))
      }
      for (const answer of answers) {
        expect(answer, tool).toEqual(answers[0])
        expect(answer.code, tool).toBe('PATH_NOT_ALLOWED')
      }
    }
  })

  it('an inside link to an outside place: the answer does not say where it leads', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'credentials.json'), 'SECRET-BYTES\n')
    symlinkOrSkip(join(outside, 'credentials.json'), join(root, 'creds'))
    symlinkOrSkip(join(outside, 'nothing-here'), join(root, 'dangling'))
    const results = [
      await ws.call('read_file', { path: 'creds' }),
      await ws.call('read_file', { path: 'creds/x' }),
      await ws.call('read_file', { path: 'dangling' }),
      await ws.call('read_file', { path: 'dangling/x' }),
    ]
    for (const result of results) {
      expect(result.code).toBe('PATH_NOT_ALLOWED')
      expect(result.output).not.toContain(outside)
      expect(result.output).not.toContain('credentials')
    }
  })

  it('restore_file: an outside trashedPath is never looked at', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, '20260101T000000Z-a-b-c-x.tar.gz'), 'not an archive')
    const existing = join(outside, '20260101T000000Z-a-b-c-x.tar.gz')
    const missing = join(outside, '20260101T000000Z-a-b-c-y.tar.gz')
    const throughFile = join(outside, '20260101T000000Z-a-b-c-x.tar.gz', 'z.tar.gz')
    const a = await ws.call('restore_file', { trashedPath: existing })
    const b = await ws.call('restore_file', { trashedPath: missing })
    const c = await ws.call('restore_file', { trashedPath: throughFile })
    expect(a.code).toBe('PATH_NOT_ALLOWED')
    expect(shape(a, existing)).toEqual(shape(b, missing))
    expect(shape(c, throughFile)).toEqual(shape(b, missing))
  })
})

describe('symlinks leaving the sandbox', () => {
  it('a link to an outside file: read, write, append, edit refused, outside untouched', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    symlinkOrSkip(join(outside, 'secret.txt'), join(root, 'link.txt'))
    for (const [tool, args] of attempts('link.txt')) expectNotAllowed(await ws.call(tool, args), tool)
    expect(read(join(outside, 'secret.txt'))).toBe('SECRET-BYTES\n')
    expect(readlinkSync(join(root, 'link.txt'))).toBe(join(outside, 'secret.txt'))
  })

  it('a link to an outside directory: read, write, append, list, mkdir, push through it refused', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    symlinkOrSkip(outside, join(root, 'out'))
    for (const [tool, args] of attempts('out/secret.txt')) expectNotAllowed(await ws.call(tool, args), tool)
    expectNotAllowed(await ws.call('write_file', { path: 'out/new.txt', content: 'x' }), 'write new')
    expectNotAllowed(await ws.call('append_file', { path: 'out/new.txt', content: 'x' }), 'append new')
    expectNotAllowed(await ws.call('write_file', { path: 'out/deep/new.txt', content: 'x' }), 'write deep')
    expectNotAllowed(await ws.call('list_directory', { path: 'out' }), 'list')
    expectNotAllowed(await ws.call('list_directory', { path: 'out/' }), 'list/')
    expectNotAllowed(await ws.call('create_directory', { path: 'out/sub' }), 'mkdir')
    expectNotAllowed(await ws.call('cwd_push', { path: 'out' }), 'push')
    expect(names(outside)).toEqual(['secret.txt'])
    expect(read(join(outside, 'secret.txt'))).toBe('SECRET-BYTES\n')
    expect(ws.cwd().depth).toBe(0)
  })

  it('a listing of R shows the outside link as a link, and a recursive one does not descend it', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    symlinkOrSkip(outside, join(root, 'out'))
    const flat = await ws.call('list_directory', {})
    expect(flat.output).toBe(`out -> ${outside}`)
    const deep = await ws.call('list_directory', { recursive: true })
    expect(deep.output).toBe(`out -> ${outside}`)
  })

  it('a chain of links ending outside is refused; a chain ending inside is followed', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    writeTree(root, { 'real.txt': 'inside\n' })
    symlinkOrSkip(join(outside, 'secret.txt'), join(root, 'c3'))
    symlinkOrSkip('c3', join(root, 'c2'))
    symlinkOrSkip(join(root, 'c2'), join(root, 'c1'))
    for (const [tool, args] of attempts('c1')) expectNotAllowed(await ws.call(tool, args), tool)
    expect(read(join(outside, 'secret.txt'))).toBe('SECRET-BYTES\n')
    symlinkOrSkip('real.txt', join(root, 'i2'))
    symlinkOrSkip('i2', join(root, 'i1'))
    expect((await ws.call('read_file', { path: 'i1' })).output).toBe(numbered(1, 'inside'))
    expect((await ws.call('append_file', { path: 'i1', content: 'more\n' })).status).toBe('ok')
    expect(read(join(root, 'real.txt'))).toBe('inside\nmore\n')
    expect(lstatSync(join(root, 'i1')).isSymbolicLink()).toBe(true)
  })

  it('a chain through an outside directory that comes back inside is followed', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeTree(root, { 'real.txt': 'inside\n' })
    symlinkOrSkip(join(root, 'real.txt'), join(outside, 'back'))
    symlinkOrSkip(join(outside, 'back'), join(root, 'via'))
    expect((await ws.call('read_file', { path: 'via' })).output).toBe(numbered(1, 'inside'))
  })

  it('a relative link climbing out is refused; a relative link inside is followed', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    mkdirSync(join(root, 'd'))
    symlinkOrSkip('../../outside/secret.txt', join(root, 'd', 'rel'))
    for (const [tool, args] of attempts('d/rel')) expectNotAllowed(await ws.call(tool, args), tool)
    expect(read(join(outside, 'secret.txt'))).toBe('SECRET-BYTES\n')
    writeTree(root, { 'e/target.txt': 'ok\n' })
    symlinkOrSkip('../e/target.txt', join(root, 'd', 'relin'))
    expect((await ws.call('read_file', { path: 'd/relin' })).output).toBe(numbered(1, 'ok'))
  })

  it('a dangling link to outside: writing or appending through it never creates the outside target', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    symlinkOrSkip(join(outside, 'created.txt'), join(root, 'dangling'))
    symlinkOrSkip(join(outside, 'newdir', 'created.txt'), join(root, 'dangling2'))
    for (const p of ['dangling', 'dangling2']) {
      expectNotAllowed(await ws.call('write_file', { path: p, content: 'x' }), `write ${p}`)
      expectNotAllowed(await ws.call('append_file', { path: p, content: 'x' }), `append ${p}`)
      expectNotAllowed(await ws.call('create_directory', { path: p }), `mkdir ${p}`)
    }
    expect(names(outside)).toEqual([])
    expect(lstatSync(join(root, 'dangling')).isSymbolicLink()).toBe(true)
  })

  it('a dangling link to outside without a sandbox is global scope: a cwd grant does not write through it', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const outside = siblingDir(root)
    symlinkOrSkip(join(outside, 'created.txt'), join(root, 'dangling'))
    const ws = new Workspace({ root, trash: { dataDir }, permissions: { cwdWriteFile: true } })
    expect((await ws.call('write_file', { path: 'dangling', content: 'x' })).status).toBe('denied')
    expect(existsSync(join(outside, 'created.txt'))).toBe(false)
  })

  it('a dangling link inside: writing through it creates the target and keeps the link', async () => {
    const { ws, root } = sandboxed()
    mkdirSync(join(root, 'd'))
    symlinkOrSkip('d/target.txt', join(root, 'dangling'))
    symlinkOrSkip(join(root, 'newdir/t.txt'), join(root, 'dangling2'))
    const write = await ws.call('write_file', { path: 'dangling', content: 'made\n' })
    expect(write.status).toBe('ok')
    expect(read(join(root, 'd/target.txt'))).toBe('made\n')
    expect(lstatSync(join(root, 'dangling')).isSymbolicLink()).toBe(true)
    const append = await ws.call('append_file', { path: 'dangling2', content: 'a\n' })
    expect(append.status).toBe('ok')
    expect(read(join(root, 'newdir/t.txt'))).toBe('a\n')
  })

  it('a symlink loop is an error, not a hang', async () => {
    const { ws, root } = sandboxed()
    symlinkOrSkip('loop2', join(root, 'loop1'))
    symlinkOrSkip('loop1', join(root, 'loop2'))
    for (const [tool, args] of attempts('loop1')) {
      const result = await ws.call(tool, args)
      expect(result.status, tool).toBe('error')
    }
  }, scaled(10_000))
})

describe('hard links', () => {
  it('appending to a file hard-linked outside the sandbox is PATH_NOT_ALLOWED, both untouched', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    linkSync(join(outside, 'secret.txt'), join(root, 'hard.txt'))
    const result = await ws.call('append_file', { path: 'hard.txt', content: 'pwned\n' })
    expect(result).toMatchObject({ status: 'error', code: 'PATH_NOT_ALLOWED' })
    expect(read(join(outside, 'secret.txt'))).toBe('SECRET-BYTES\n')
    expect(read(join(root, 'hard.txt'))).toBe('SECRET-BYTES\n')
  })

  it('write_file replaces the inside name only: the outside hard link keeps its content', async () => {
    const { ws, root } = sandboxed()
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    linkSync(join(outside, 'secret.txt'), join(root, 'hard.txt'))
    expect((await ws.call('read_file', { path: 'hard.txt' })).status).toBe('ok')
    const result = await ws.call('write_file', { path: 'hard.txt', content: 'new\n' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'hard.txt'))).toBe('new\n')
    expect(read(join(outside, 'secret.txt'))).toBe('SECRET-BYTES\n')
  })
})

describe('special files', () => {
  it('a FIFO fails fast with NOT_A_REGULAR_FILE for read, write, append and edit', async () => {
    const { ws, root } = sandboxed()
    mkfifo(join(root, 'pipe'))
    const started = Date.now()
    for (const [tool, args] of attempts('pipe')) {
      const result = await ws.call(tool, args)
      expect(result, tool).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
    }
    expect(Date.now() - started).toBeLessThan(4000)
    expect(lstatSync(join(root, 'pipe')).isFIFO()).toBe(true)
  }, scaled(8000))

  it('a Unix socket is NOT_A_REGULAR_FILE', async () => {
    skipOnWindows(NO_UNIX_SOCKETS)
    const { ws, root } = sandboxed()
    const server = createServer().listen(join(root, 'sock'))
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      for (const [tool, args] of attempts('sock')) {
        expect(await ws.call(tool, args), tool).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
      }
    } finally {
      server.close()
    }
  })

  it('a device is NOT_A_REGULAR_FILE', async () => {
    skipOnWindows('Windows has no device files in a directory (its reserved names, NUL or CON, are refused by name)')
    const { root, dataDir } = tempWorkspaceDirs()
    const ws = new Workspace({ root, trash: { dataDir }, permissions: { globalReadFile: true, globalWriteFile: true } })
    for (const path of ['/dev/null', '/dev/zero', '/dev/urandom']) {
      expect(await ws.call('read_file', { path }), path).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
    }
    expect(await ws.call('append_file', { path: '/dev/null', content: 'x' })).toMatchObject({ code: 'NOT_A_REGULAR_FILE' })
  }, scaled(10_000))

  it('a link to a FIFO is refused the same way', async () => {
    const { ws, root } = sandboxed()
    mkfifo(join(root, 'pipe'))
    symlinkOrSkip('pipe', join(root, 'to-pipe'))
    const result = await ws.call('read_file', { path: 'to-pipe' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
  }, scaled(8000))

  it('a link to /dev/zero: outside the sandbox PATH_NOT_ALLOWED; without a sandbox NOT_A_REGULAR_FILE, no hang', async () => {
    const sb = sandboxed()
    symlinkOrSkip('/dev/zero', join(sb.root, 'zero'))
    expectNotAllowed(await sb.ws.call('read_file', { path: 'zero' }), 'sandboxed read')
    expectNotAllowed(await sb.ws.call('append_file', { path: 'zero', content: 'x' }), 'sandboxed append')

    const { root, dataDir } = tempWorkspaceDirs()
    symlinkOrSkip('/dev/zero', join(root, 'zero'))
    const ws = new Workspace({
      root,
      trash: { dataDir },
      permissions: { globalReadFile: true, globalWriteFile: true },
    })
    for (const [tool, args] of [
      ['read_file', { path: 'zero' }],
      ['read_file', { path: '/dev/zero' }],
      ['write_file', { path: 'zero', content: 'x' }],
      ['append_file', { path: 'zero', content: 'x' }],
      ['edit_file', { path: 'zero', edits: [{ oldString: 'a', newString: 'b' }] }],
    ] as const) {
      const result = await ws.call(tool as string, args)
      expect(result, tool).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
    }
    expect(lstatSync(join(root, 'zero')).isSymbolicLink()).toBe(true)
  }, scaled(10_000))
})

describe('literal bytes', () => {
  it('NUL in a path is INVALID_ARGUMENTS for every path tool', async () => {
    const { ws, root } = sandboxed()
    writeTree(root, { 'a.txt': 'a' })
    for (const [tool, args] of [
      ...attempts('a.txt\0.png'),
      ['list_directory', { path: '.\0' }],
      ['create_directory', { path: 'd\0x' }],
      ['cwd_push', { path: '.\0' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const result = await ws.call(tool, args)
      expect(result, tool).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
      expect(result.output, tool).toContain('path')
    }
    expect(names(root)).toEqual(['a.txt'])
    expect(read(join(root, 'a.txt'))).toBe('a')
  })

  it('no trimming, unquoting, percent-decoding or Unicode normalisation', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = sandboxed()
    const variants = ['a.txt', ' a.txt', 'a.txt ', "'a.txt'", '"a.txt"', '%61.txt', 'caf\u00e9', 'cafe\u0301', 'A.TXT']
    for (const name of variants) {
      expect((await ws.call('write_file', { path: name, content: JSON.stringify(name) })).status, name).toBe('ok')
    }
    expect(names(root)).toEqual([...variants].sort())
    for (const name of variants) {
      expect((await ws.call('read_file', { path: name })).output, name).toBe(numbered(1, JSON.stringify(name)))
    }
  })

  it('a leading ~/ is the home directory; ~ elsewhere is literal', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const ws = new Workspace({ root, trash: { dataDir }, permissions: { globalReadFile: true } })
    const unique = `afs-test-missing-${process.pid}-${Date.now()}.txt`
    const home = await ws.call('read_file', { path: `~/${unique}` })
    expect(home.code).toBe('NOT_FOUND')
    expect(home.output).toContain(join(homedir(), unique))
    writeTree(root, { '~/x.txt': 'tilde dir\n' })
    expect((await ws.call('read_file', { path: './~/x.txt' })).output).toBe(numbered(1, 'tilde dir'))
    // A bare `~` is a name like any other (../docs/paths-and-sandbox.md#resolving-a-path: only `~/` is home).
    expect((await ws.call('list_directory', { path: '~' })).output).toMatch(/^x\.txt \(10 bytes, /)
  })
})

describe('the data directory (../docs/paths-and-sandbox.md#the-data-directory)', () => {
  function withDataInsideRoot() {
    const { root } = tempWorkspaceDirs()
    const dataDir = join(root, '.agent-data')
    mkdirSync(join(dataDir, 'trash', 'bucket'), { recursive: true })
    mkdirSync(join(dataDir, 'audit'), { recursive: true })
    writeFileSync(join(dataDir, 'trash', 'bucket', 'archive.tar.gz'), 'SECRET-BYTES\n')
    writeFileSync(join(dataDir, 'audit', 'log.jsonl'), 'SECRET-BYTES\n')
    writeFileSync(join(dataDir, 'notes.txt'), 'SECRET-BYTES\n')
    const ws = new Workspace({
      root,
      trash: { dataDir },
      permissions: { cwdWriteFile: true, cwdRemoveFile: true, cwdRemoveDir: true },
      confirm: () => true,
    })
    return { ws, root, dataDir }
  }

  it('is unreachable through the file tools when it is inside root, files directly in it included', async () => {
    const { ws, dataDir } = withDataInsideRoot()
    for (const p of [
      join(dataDir, 'trash', 'bucket', 'archive.tar.gz'),
      '.agent-data/trash/bucket/archive.tar.gz',
      '.agent-data/audit/log.jsonl',
      '.agent-data/notes.txt',
      './.agent-data/x/../trash/bucket/archive.tar.gz',
    ]) {
      for (const [tool, args] of attempts(p)) expectNotAllowed(await ws.call(tool, args), `${tool} ${p}`)
      expectNotAllowed(await ws.call('move_file', { source: p, destination: 'stolen.txt' }), `move from ${p}`)
      expectNotAllowed(await ws.call('delete_file', { path: p }), `delete ${p}`)
    }
    for (const p of ['.agent-data', '.agent-data/trash', '.agent-data/trash/bucket', '.agent-data/audit']) {
      expectNotAllowed(await ws.call('list_directory', { path: p }), `list ${p}`)
      expectNotAllowed(await ws.call('cwd_push', { path: p }), `push ${p}`)
      expectNotAllowed(await ws.call('glob', { pattern: '**', path: p }), `glob ${p}`)
      expectNotAllowed(await ws.call('grep', { pattern: 'SECRET', path: p }), `grep ${p}`)
    }
    expectNotAllowed(await ws.call('create_directory', { path: '.agent-data/trash/new' }), 'mkdir inside')
    expectNotAllowed(await ws.call('create_directory', { path: '.agent-data/new' }), 'mkdir directly inside')
    expectNotAllowed(await ws.call('write_file', { path: '.agent-data/trash/new.tar.gz', content: 'x' }), 'new')
    writeFileSync(join(ws.cwd().cwd, 'mine.txt'), 'mine\n')
    expectNotAllowed(await ws.call('move_file', { source: 'mine.txt', destination: '.agent-data/mine.txt' }), 'move into')
    expect(read(join(dataDir, 'trash', 'bucket', 'archive.tar.gz'))).toBe('SECRET-BYTES\n')
    expect(read(join(dataDir, 'notes.txt'))).toBe('SECRET-BYTES\n')
    expect(names(join(dataDir, 'trash'))).toEqual(['bucket'])
  })

  it('is unreachable through a symlink, and neither listings nor searches show it', async () => {
    const { ws, root, dataDir } = withDataInsideRoot()
    symlinkOrSkip(join(dataDir, 'trash'), join(root, 'sneaky'))
    expectNotAllowed(await ws.call('read_file', { path: 'sneaky/bucket/archive.tar.gz' }), 'read')
    expectNotAllowed(await ws.call('list_directory', { path: 'sneaky' }), 'list')
    const recursive = await ws.call('list_directory', { recursive: true, includeIgnored: true })
    expect(recursive.status).toBe('ok')
    // The link is shown as the link it is; nothing in the data directory is.
    expect(recursive.output).toMatch(/^sneaky -> /m)
    expect(recursive.output).not.toMatch(/^\.agent-data/m)
    expect(recursive.output).not.toContain('archive.tar.gz')
    const flat = await ws.call('list_directory', { path: '.' })
    expect(flat.output).not.toMatch(/^\.agent-data/m)
    const globbed = await ws.call('glob', { pattern: '**/*', includeIgnored: true })
    expect(globbed.output).not.toMatch(/^\.agent-data/m)
    const grepped = await ws.call('grep', { pattern: 'SECRET', includeIgnored: true })
    expect(grepped.output).not.toContain('SECRET-BYTES')
  })

  it('cannot be replaced by a link before it exists: not at its place, not at a folder that is to hold it', async () => {
    const { root } = tempWorkspaceDirs()
    const outside = siblingDir(root)
    symlinkOrSkip(outside, join(root, 'link-out'))
    symlinkOrSkip(join(root, 'inside'), join(root, 'link-in'))
    mkdirSync(join(root, 'inside'))
    const dataDir = join(root, '.cache', 'agent-data')
    const ws = new Workspace({
      root,
      allowedPaths: [root],
      trash: { dataDir },
      permissions: { cwdWriteFile: true, cwdRemoveFile: true, cwdRemoveDir: true },
      confirm: () => true,
    })
    for (const destination of ['.cache/agent-data', '.cache']) {
      for (const source of ['link-out', 'link-in']) {
        const moved = await ws.call('move_file', { source, destination })
        expect(moved.status, `${source} → ${destination}`).toBe('error')
        expect(['PATH_NOT_ALLOWED', 'DANGEROUS_PATH'], `${source} → ${destination}`).toContain(moved.code)
      }
    }
    // (The audit log of those refusals created the data directory, as a directory.)
    expect(lstatSync(join(root, '.cache')).isSymbolicLink()).toBe(false)
    // A folder made by the model cannot later be swapped for a link either.
    expect((await ws.call('create_directory', { path: '.cache/other' })).status).toBe('ok')
    const swapped = await ws.call('move_file', { source: 'link-out', destination: '.cache', overwrite: true })
    expect(swapped).toMatchObject({ status: 'error', code: 'DANGEROUS_PATH' })
    // The trash and the audit log go where they belong, nowhere else.
    writeFileSync(join(root, 'f.txt'), 'keep me\n')
    const deleted = await ws.call('delete_file', { path: 'f.txt' })
    expect(deleted.status).toBe('ok')
    expect(String(deleted.data!.trashedTo).startsWith(join(dataDir, 'trash') + '/')).toBe(true)
    expect(existsSync(String(deleted.data!.trashedTo))).toBe(true)
    expect(names(outside)).toEqual([])
    expect(names(join(root, 'inside'))).toEqual([])
    expect(lstatSync(dataDir).isDirectory()).toBe(true)
  })

  it('a restore cannot put anything in its place or above it', async () => {
    const { ws, dataDir } = withDataInsideRoot()
    writeFileSync(join(ws.cwd().cwd, 'f.txt'), 'f\n')
    const deleted = await ws.call('delete_file', { path: 'f.txt' })
    for (const targetPath of ['.agent-data', '.', '.agent-data/f.txt']) {
      const restored = await ws.call('restore_file', { trashedPath: String(deleted.data!.trashedTo), targetPath, overwrite: true })
      expect(restored.status, targetPath).toBe('error')
      expect(['PATH_NOT_ALLOWED', 'DANGEROUS_PATH'], targetPath).toContain(restored.code)
    }
    expect(read(join(dataDir, 'notes.txt'))).toBe('SECRET-BYTES\n')
  })
})

describe('the path checked is the path acted on (../docs/paths-and-sandbox.md#the-checked-path-is-the-acted-on-path)', () => {
  /** Replaces the directory `dir` by a symlink to `target` (the kind of swap a racing process does). */
  function swapForLink(dir: string, target: string): void {
    renameSync(dir, `${dir}.moved`)
    symlinkOrSkip(target, dir)
  }

  it.each([
    ['write_file', { path: 'sub/f.txt', content: 'pwned' }],
    ['write_file', { path: 'sub/deeper/f.txt', content: 'pwned' }],
    ['append_file', { path: 'sub/f.txt', content: 'pwned' }],
    ['create_directory', { path: 'sub/newdir' }],
  ] as const)('%s: a directory swapped for an outside link while the confirmation is pending is not followed (%j)', async (tool, args) => {
    const { ws, root } = sandboxed({ permissions: {} })
    const outside = siblingDir(root)
    mkdirSync(join(root, 'sub'))
    const result = await ws.call(tool, args, {
      confirm: () => {
        swapForLink(join(root, 'sub'), outside)
        return true
      },
    })
    expect(result.status).toBe('error')
    expect(names(outside)).toEqual([])
  })

  it('edit_file: a file swapped for an outside link while pending is not edited through it', async () => {
    const { ws, root } = sandboxed({ permissions: {} })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    writeTree(root, { 'sub/f.txt': 'SECRET-BYTES\n' })
    const result = await ws.call(
      'edit_file',
      { path: 'sub/f.txt', edits: [{ oldString: 'SECRET-BYTES', newString: 'pwned' }] },
      {
        confirm: () => {
          swapForLink(join(root, 'sub'), outside)
          return true
        },
      },
    )
    expect(result.status).toBe('error')
    expect(read(join(outside, 'secret.txt'))).toBe('SECRET-BYTES\n')
  })

  it('read_file: a file swapped for an outside link while pending does not leak the outside content', async () => {
    const { ws, root } = sandboxed({ permissions: { cwdReadFile: false } })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'secret.txt'), 'SECRET-BYTES\n')
    writeTree(root, { 'f.txt': 'inside\n' })
    const result = await ws.call(
      'read_file',
      { path: 'f.txt' },
      {
        confirm: () => {
          renameSync(join(root, 'f.txt'), join(root, 'f.old'))
          symlinkOrSkip(join(outside, 'secret.txt'), join(root, 'f.txt'))
          return true
        },
      },
    )
    expect(result.output).not.toContain('SECRET-BYTES')
  })
})
