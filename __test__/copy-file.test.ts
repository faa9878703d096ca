/**
 * `copy_file` (../docs/tools.md#copy_file) through the public API, on real temporary directories: a
 * file, a link, a tree, byte for byte with modes, times and links; parents; overwrite through the
 * trash; refusals before anything is written (into itself, a FIFO inside, no room); permissions;
 * undo and redo.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Workspace, type ToolArgs, type ToolResult } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { mkfifo, read, siblingDir, writeTree } from './helpers/files.js'
import { ALL, archiveNames, recorder, snapshot, type Node } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

/** Read inside the root and write there: a copy inside the root asks nothing. */
const copying = { permissions: { cwdReadFile: true, cwdWriteFile: true } } as const

function ok(result: ToolResult): ToolResult {
  expect(result.status, result.output).toBe('ok')
  return result
}

/** What undo gives back: kind, mode, content, link target (times are not compared). */
function tree(root: string): Record<string, Omit<Node, 'mtimeNs'>> {
  const out: Record<string, Omit<Node, 'mtimeNs'>> = {}
  for (const [path, { mtimeNs: _, ...rest }] of Object.entries(snapshot(root))) out[path] = rest
  return out
}

/** Every name under `dir`, recursively, never through a link (temp names included: none may be left). */
function allNames(dir: string): string[] {
  return Object.keys(snapshot(dir))
    .filter((name) => name !== '')
    .sort()
}

describe('copy_file copies', () => {
  it('a file: bytes, mode and mtime exact, into parents it creates; output and data name both paths', async () => {
    const { ws, root, dataDir } = tempWorkspace(copying)
    writeTree(root, { 'a.sh': '#!/bin/sh\necho hi\n' })
    chmodSync(join(root, 'a.sh'), 0o750)
    const result = ok(await ws.call('copy_file', { source: 'a.sh', destination: 'x/y/b.sh' }))
    const [a, b] = [join(root, 'a.sh'), join(root, 'x/y/b.sh')]
    expect(result.output).toBe(`Copied ${a} → ${b}`)
    expect(result.data).toMatchObject({ source: a, destination: b, files: [{ path: b, action: 'added' }] })
    expect(result.data?.trashedTo).toBeUndefined()
    expect(snapshot(b)['']).toEqual(snapshot(a)[''])
    expect(lstatSync(b).ino).not.toBe(lstatSync(a).ino)
    expect(allNames(root)).toEqual(['a.sh', 'x', 'x/y', 'x/y/b.sh'])
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('a symlink as a link, never what it points to (also dangling)', async () => {
    const { ws, root } = tempWorkspace(copying)
    writeTree(root, { 'f.txt': 'f' })
    symlinkOrSkip('f.txt', join(root, 'link'))
    symlinkOrSkip('does/not/exist', join(root, 'dangling'))
    ok(await ws.call('copy_file', { source: 'link', destination: 'link2' }))
    ok(await ws.call('copy_file', { source: 'dangling', destination: 'sub/dangling2' }))
    expect(lstatSync(join(root, 'link2')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(root, 'link2'))).toBe('f.txt')
    expect(readlinkSync(join(root, 'sub/dangling2'))).toBe('does/not/exist')
  })

  it('a tree whole: every entry, mode, mtime and link exact; its counts in the output', async () => {
    const { ws, root } = tempWorkspace(copying)
    writeTree(root, { 't/a.txt': 'a\n', 't/d/b.bin': Buffer.from([0, 1, 2, 255]), 't/d/e/c.txt': 'c' })
    mkdirSync(join(root, 't/empty'))
    chmodSync(join(root, 't/d/b.bin'), 0o600)
    chmodSync(join(root, 't/d/e'), 0o700)
    symlinkOrSkip('../a.txt', join(root, 't/d/up'))
    const result = ok(await ws.call('copy_file', { source: 't', destination: 'u' }))
    expect(result.output).toBe(`Copied ${join(root, 't')} → ${join(root, 'u')} (3 files, 3 directories, 1 link)`)
    expect(snapshot(join(root, 'u'))).toEqual(snapshot(join(root, 't')))
  })

  it('links inside a tree pointing out of the allowed trees stay links; what they point at is never read', async () => {
    const dirs = tempWorkspaceDirs()
    const root = dirs.root
    const outside = siblingDir(root)
    writeTree(outside, { 'secret.txt': 'SECRET\n' })
    writeTree(root, { 't/a.txt': 'a' })
    symlinkOrSkip(join(outside, 'secret.txt'), join(root, 't/out'))
    symlinkOrSkip(outside, join(root, 't/outdir'))
    const ws = new Workspace({ root, allowedPaths: [root], trash: { dataDir: dirs.dataDir }, ...copying })
    ok(await ws.call('copy_file', { source: 't', destination: 'u' }))
    expect(readlinkSync(join(root, 'u/out'))).toBe(join(outside, 'secret.txt'))
    expect(lstatSync(join(root, 'u/outdir')).isSymbolicLink()).toBe(true)
    expect(allNames(join(root, 'u'))).toEqual(['a.txt', 'out', 'outdir'])
  })

  it('formatCall: source → destination, with (overwrite)', () => {
    const { ws } = tempWorkspace()
    expect(ws.formatCall('copy_file', { source: 'a.txt', destination: 'b/c.txt' })).toBe('a.txt → b/c.txt')
    expect(ws.formatCall('copy_file', { source: 'a', destination: 'b', overwrite: true })).toBe('a → b (overwrite)')
  })
})

describe('copy_file over an existing destination', () => {
  it('ALREADY_EXISTS without overwrite; with it, the old file goes to the trash first', async () => {
    const { ws, root, dataDir } = tempWorkspace(copying)
    writeTree(root, { 'a.txt': 'new\n', 'b.txt': 'old\n' })
    const refused = await ws.call('copy_file', { source: 'a.txt', destination: 'b.txt' })
    expect(refused.code).toBe('ALREADY_EXISTS')
    expect(refused.output).toBe(
      `${join(root, 'b.txt')} already exists; pass overwrite: true to replace it (the existing one goes to the trash first), or choose another destination`,
    )
    const result = ok(await ws.call('copy_file', { source: 'a.txt', destination: 'b.txt', overwrite: true }))
    expect(read(join(root, 'b.txt'))).toBe('new\n')
    expect(archiveNames(dataDir, root)).toHaveLength(1)
    expect(result.data?.trashedTo).toMatch(/\.tar\.gz$/)
    expect(result.output).toContain(`The previous ${join(root, 'b.txt')} is in the trash at ${result.data?.trashedTo as string}`)
    expect(result.data?.files).toEqual([{ path: join(root, 'b.txt'), action: 'modified', trashedTo: result.data?.trashedTo }])
  })

  it('onto a directory without overwrite: says how to copy into it', async () => {
    const { ws, root } = tempWorkspace(copying)
    writeTree(root, { 'a.txt': 'a', 'dir/x': 'x' })
    const refused = await ws.call('copy_file', { source: 'a.txt', destination: 'dir' })
    expect(refused.code).toBe('ALREADY_EXISTS')
    expect(refused.output).toContain('to copy into that directory, give destination "dir/a.txt"')
  })

  it('replacing a tree asks like a recursive remove_dir whatever is granted, with its counts', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'new/a.txt': 'new', 'old/b.txt': 'old', 'old/deep/c.txt': 'c' })
    const unasked = await ws.call('copy_file', { source: 'new', destination: 'old', overwrite: true })
    expect(unasked.status).toBe('denied')
    expect(read(join(root, 'old/deep/c.txt'))).toBe('c')
    const { confirm, requests } = recorder()
    ok(await ws.call('copy_file', { source: 'new', destination: 'old', overwrite: true }, { confirm }))
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ label: 'Copy file?', recursive: true })
    expect(requests[0]!.detail).toBe(
      `${join(root, 'new')} → ${join(root, 'old')} (replaces the directory ${join(root, 'old')} and everything in it, which goes to the trash first: 2 files and 1 directory, 4 bytes (largest: b.txt 3 bytes, ${join('deep', 'c.txt')} 1 byte))`,
    )
    expect(requests[0]!.summary).toMatchObject({ kind: 'tree', files: 2, dirs: 1 })
    expect(allNames(join(root, 'old'))).toEqual(['a.txt'])
  })
})

describe('copy_file refuses before anything is written', () => {
  it('a directory into itself, or the source as its own destination: INVALID_ARGUMENTS', async () => {
    const { ws, root } = tempWorkspace(copying)
    writeTree(root, { 'd/a.txt': 'a' })
    for (const destination of ['d', './d/', 'd/inner', 'd/x/y']) {
      const result = await ws.call('copy_file', { source: 'd', destination })
      expect(result.code, destination).toBe('INVALID_ARGUMENTS')
    }
    const inside = await ws.call('copy_file', { source: 'd', destination: 'd/inner' })
    expect(inside.output).toBe(
      `copy_file: invalid arguments: destination ${join(root, 'd/inner')} is inside the source; a directory cannot be copied into itself. Choose a destination outside the source`,
    )
    expect(allNames(root)).toEqual(['d', 'd/a.txt'])
  })

  it('a missing source: NOT_FOUND', async () => {
    const { ws, root } = tempWorkspace(copying)
    const result = await ws.call('copy_file', { source: 'nope', destination: 'b' })
    expect(result.code).toBe('NOT_FOUND')
    expect(result.output).toBe(`source not found: ${join(root, 'nope')}; check the path`)
  })

  it('a FIFO deep inside the tree: NOT_A_REGULAR_FILE naming it, before any prompt, nothing written', async () => {
    const { confirm, requests } = recorder()
    const { ws, root } = tempWorkspace({ confirm })
    writeTree(root, { 't/a.txt': 'a', 't/d/e/b.txt': 'b' })
    mkfifo(join(root, 't/d/e/pipe'))
    const result = await ws.call('copy_file', { source: 't', destination: 'n/u' })
    expect(result.code).toBe('NOT_A_REGULAR_FILE')
    expect(result.output).toContain(join(root, 't/d/e/pipe'))
    expect(requests).toHaveLength(0)
    expect(existsSync(join(root, 'n'))).toBe(false)
    expect(await ws.history()).toEqual([])
  })

  it('paths outside allowedPaths: PATH_NOT_ALLOWED, either side', async () => {
    const dirs = tempWorkspaceDirs()
    const root = dirs.root
    const ws = new Workspace({ root, allowedPaths: [root], trash: { dataDir: dirs.dataDir }, permissions: ALL })
    const outside = siblingDir(root)
    writeTree(outside, { 'o.txt': 'o' })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('copy_file', { source: join(outside, 'o.txt'), destination: 'o.txt' })).code).toBe('PATH_NOT_ALLOWED')
    expect((await ws.call('copy_file', { source: 'a.txt', destination: join(outside, 'a.txt') })).code).toBe('PATH_NOT_ALLOWED')
    expect(existsSync(join(root, 'o.txt'))).toBe(false)
    expect(existsSync(join(outside, 'a.txt'))).toBe(false)
  })
})

describe('copy_file and a full file system (a 1 MiB tmpfs)', () => {
  const mounted: string[] = []
  afterEach(() => {
    for (const at of mounted.splice(0)) spawnSync('umount', ['-l', at], { stdio: 'ignore' })
  })

  /** Mounts a 1 MiB tmpfs at `at`; whether it could (mounting needs root). */
  function tinyMount(at: string): boolean {
    mkdirSync(at, { recursive: true })
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', at], { stdio: 'ignore' }).status !== 0) return false
    mounted.push(at)
    return true
  }

  it('a copy that would not fit is TOO_LARGE before anything is written; one with holes that fits is copied', async (ctx) => {
    const { ws, root } = tempWorkspace(copying)
    if (!tinyMount(join(root, 'tiny'))) ctx.skip()
    writeTree(root, { 'big.bin': Buffer.alloc(2 << 20, 7) })
    const result = await ws.call('copy_file', { source: 'big.bin', destination: 'tiny/d/big.bin' })
    expect(result.code, result.output).toBe('TOO_LARGE')
    expect(result.output).toMatch(/^copying .*big\.bin needs 2\.0 MiB and the file system of .*tiny\/d\/big\.bin has .* free; nothing was written/)
    expect(readdirSync(join(root, 'tiny'))).toEqual([])
    // 32 MiB of hole, then 4 KiB of data: the hole stays a hole, so it fits.
    const fd = openSync(join(root, 'sparse.img'), 'w')
    writeSync(fd, Buffer.alloc(4096, 1), 0, 4096, 32 << 20)
    closeSync(fd)
    const sparse = await ws.call('copy_file', { source: 'sparse.img', destination: 'tiny/sparse.img' })
    expect(sparse.status, sparse.output).toBe('ok')
    expect(lstatSync(join(root, 'tiny/sparse.img')).size).toBe((32 << 20) + 4096)
  })
})

describe('copy_file permissions', () => {
  it('asks `Copy file?` with `<src> → <dst>` unless read (source) and write (destination) are granted', async () => {
    for (const permissions of [{ cwdReadFile: true, cwdWriteFile: false }, { cwdReadFile: false, cwdWriteFile: true }]) {
      const { confirm, requests } = recorder(false)
      const { ws, root } = tempWorkspace({ confirm, permissions })
      writeTree(root, { 'a.txt': 'a' })
      const result = await ws.call('copy_file', { source: 'a.txt', destination: 'sub/b.txt' })
      expect(result.status).toBe('denied')
      expect(result.output).toContain('The user denied this copy.')
      expect(requests).toHaveLength(1)
      expect(requests[0]).toMatchObject({
        tool: 'copy_file',
        label: 'Copy file?',
        path: join(root, 'a.txt'),
        detail: `${join(root, 'a.txt')} → ${join(root, 'sub/b.txt')}`,
        paths: [join(root, 'a.txt'), join(root, 'sub/b.txt')],
      })
      expect(existsSync(join(root, 'sub'))).toBe(false)
    }
  })
})

describe('copy_file undo and redo', () => {
  const cases: Array<{ name: string; files: (root: string) => void; args: ToolArgs['copy_file'] }> = [
    { name: 'a file', files: (r) => writeTree(r, { 'a.txt': 'a\n' }), args: { source: 'a.txt', destination: 'x/b.txt' } },
    {
      name: 'a tree with a link and modes',
      files: (r) => {
        writeTree(r, { 't/a.txt': 'a', 't/d/b.sh': 'b' })
        chmodSync(join(r, 't/d/b.sh'), 0o755)
        symlinkOrSkip('../a.txt', join(r, 't/d/l'))
      },
      args: { source: 't', destination: 'u' },
    },
    {
      name: 'an overwrite of a file by a tree',
      files: (r) => {
        writeTree(r, { 't/a.txt': 'a', 'old.txt': 'old\n' })
        chmodSync(join(r, 'old.txt'), 0o640)
      },
      args: { source: 't', destination: 'old.txt', overwrite: true },
    },
    {
      name: 'an overwrite of a tree by a file',
      files: (r) => writeTree(r, { 'a.txt': 'a', 'old/x.txt': 'x', 'old/y/z.txt': 'z' }),
      args: { source: 'a.txt', destination: 'old', overwrite: true },
    },
  ]
  it.each(cases)('$name: undo gives back the tree before, redo the copy, undo again the tree before', async ({ files, args }) => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
    files(root)
    const before = tree(root)
    ok(await ws.call('copy_file', args))
    const after = tree(root)
    expect(after).not.toEqual(before)
    const undo = ok(await ws.undo())
    expect(tree(root)).toEqual(before)
    ok(await ws.undo({ id: undo.data?.changeId as string }))
    expect(tree(root)).toEqual(after)
    ok(await ws.undo())
    expect(tree(root)).toEqual(before)
  })

  it('undo refuses when the copy changed since, and changes nothing', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(root, { 'a.txt': 'a\n' })
    ok(await ws.call('copy_file', { source: 'a.txt', destination: 'b.txt' }))
    writeFileSync(join(root, 'b.txt'), 'edited by the user\n')
    const refused = await ws.undo()
    expect(refused.code).toBe('CONFLICT')
    expect(read(join(root, 'b.txt'))).toBe('edited by the user\n')
  })
})
