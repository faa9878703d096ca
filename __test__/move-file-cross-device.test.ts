/**
 * `move_file` between file systems: `rename` gives `EXDEV`, so the source is copied beside the
 * destination, synced, renamed into place, and only then removed. The workspace is on the temp
 * directory's file system; the other side is a directory in `/dev/shm` (tmpfs). Where the machine
 * has no second file system there, these tests are skipped, and say so.
 */
import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  closeSync,
  existsSync,
  ftruncateSync,
  linkSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { mkfifo, read, writeTree } from './helpers/files.js'
import { ALL, archiveNames, snapshot } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

/** A fresh directory on another file system than `root`, or `undefined` (the test skips). */
function otherFileSystem(root: string): string | undefined {
  let dir: string
  try {
    // `/dev/shm` on Windows is on the current drive (under Wine a Linux tmpfs): `resolve` names it
    dir = resolve(mkdtempSync('/dev/shm/afs-move-'))
  } catch {
    return undefined
  }
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return statSync(dir).dev === statSync(root).dev ? undefined : dir
}

/** A 1 MiB tmpfs mounted at a fresh directory (needs root), or `undefined`. */
function tinyFileSystem(): string | undefined {
  const dir = mkdtempSync('/tmp/afs-tiny-')
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' })
  } catch {
    return undefined
  }
  cleanups.push(() => execFileSync('umount', [dir]))
  return dir
}

/** Names in `dir` that are our temp entries (a move's copy in flight or left behind). */
const temps = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith('.agent-fs-tools.tmp'))

/** A tree with what a move must carry: nesting, a link, a dangling link, modes, a file bigger than one copy call. */
function sampleTree(dir: string): void {
  writeTree(dir, {
    'a.txt': 'alpha\n',
    'sub/b.txt': 'beta\n',
    'sub/deeper/c.bin': Buffer.alloc(3 << 20, 7),
    'sub/run.sh': '#!/bin/sh\n',
  })
  chmodSync(join(dir, 'sub/run.sh'), 0o751)
  symlinkOrSkip('../a.txt', join(dir, 'sub/link'))
  symlinkOrSkip('nowhere', join(dir, 'dangling'))
  chmodSync(join(dir, 'sub/deeper'), 0o555)
}

describe('move_file across file systems', () => {
  it('moves a file: bytes, mode and times kept, the source gone, no temp left', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    writeTree(root, { 'a.txt': 'alpha\n' })
    chmodSync(join(root, 'a.txt'), 0o640)
    const before = snapshot(join(root, 'a.txt'))
    const result = await ws.call('move_file', { source: 'a.txt', destination: join(other, 'b.txt') })
    expect(result.status, result.output).toBe('ok')
    expect(result.output).toBe(`Moved ${join(root, 'a.txt')} → ${join(other, 'b.txt')}`)
    expect(snapshot(join(other, 'b.txt'))).toEqual(before)
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(temps(other)).toEqual([])
  })

  it('keeps a sparse file sparse: a 1 GiB disk image with 4 KiB of data does not become 1 GiB of zeros', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    const image = join(root, 'disk.img')
    const fd = openSync(image, 'w')
    ftruncateSync(fd, 1 << 30)
    writeSync(fd, Buffer.alloc(4096, 1), 0, 4096, 512 << 20)
    closeSync(fd)
    const result = await ws.call('move_file', { source: 'disk.img', destination: join(other, 'disk.img') })
    expect(result.status, result.output).toBe('ok')
    const moved = statSync(join(other, 'disk.img'))
    expect(moved.size).toBe(1 << 30)
    expect(moved.blocks * 512).toBeLessThan(1 << 20)
    const probe = Buffer.alloc(8)
    const readFd = openSync(join(other, 'disk.img'), 'r')
    readSync(readFd, probe, 0, 8, (512 << 20) - 4)
    closeSync(readFd)
    expect([...probe]).toEqual([0, 0, 0, 0, 1, 1, 1, 1])
    expect(existsSync(image)).toBe(false)
  })

  it('moves a whole tree as it is, and back again', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    sampleTree(join(root, 'd'))
    const before = snapshot(join(root, 'd'))
    const there = await ws.call('move_file', { source: 'd', destination: join(other, 'x/d') })
    expect(there.status, there.output).toBe('ok')
    expect(snapshot(join(other, 'x/d'))).toEqual(before)
    expect(existsSync(join(root, 'd'))).toBe(false)
    const back = await ws.call('move_file', { source: join(other, 'x/d'), destination: 'd' })
    expect(back.status, back.output).toBe('ok')
    expect(snapshot(join(root, 'd'))).toEqual(before)
    expect(readdirSync(join(other, 'x'))).toEqual([])
    expect(temps(root)).toEqual([])
  })

  it('is one change with its record: undo brings the tree back as it was, a redo takes it there again', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    sampleTree(join(root, 'd'))
    const before = snapshot(join(root, 'd'))
    const moved = await ws.call('move_file', { source: 'd', destination: join(other, 'x/d') })
    expect(moved.status, moved.output).toBe('ok')
    const undone = await ws.undo({ id: moved.data!.changeId as string })
    expect(undone.status, undone.output).toBe('ok')
    expect(snapshot(join(root, 'd'))).toEqual(before)
    expect(existsSync(join(other, 'x'))).toBe(false)
    const redone = await ws.undo({ id: undone.data!.changeId as string })
    expect(redone.status, redone.output).toBe('ok')
    expect(snapshot(join(other, 'x/d'))).toEqual(before)
    expect(existsSync(join(root, 'd'))).toBe(false)
    expect(temps(root)).toEqual([])
    expect(temps(other)).toEqual([])
  })

  it('names of one file inside the tree stay hard links of one copy (as mv keeps them)', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    writeTree(root, { 'd/store/pkg.js': 'module.exports = 1\n', 'alone.txt': 'x' })
    linkSync(join(root, 'd/store/pkg.js'), join(root, 'd/linked.js'))
    linkSync(join(root, 'alone.txt'), join(root, 'd/from-outside.txt'))
    const result = await ws.call('move_file', { source: 'd', destination: join(other, 'd') })
    expect(result.status, result.output).toBe('ok')
    const moved = (rel: string) => statSync(join(other, 'd', rel))
    expect(moved('linked.js').ino).toBe(moved('store/pkg.js').ino)
    expect(moved('linked.js').nlink).toBe(2)
    expect(moved('from-outside.txt').nlink).toBe(1)
    expect(read(join(other, 'd/from-outside.txt'))).toBe('x')
    expect(statSync(join(root, 'alone.txt')).nlink).toBe(1)
  })

  it('overwrite: the destination goes to the trash and can be restored', async (ctx) => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    writeFileSync(join(other, 'new.txt'), 'new\n')
    writeTree(root, { 'old/inner.txt': 'old\n' })
    // Replacing a directory tree is always asked.
    const result = await ws.call('move_file', { source: join(other, 'new.txt'), destination: 'old', overwrite: true }, { confirm: () => true })
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'old'))).toBe('new\n')
    expect(existsSync(join(other, 'new.txt'))).toBe(false)
    const trashedTo = result.data!.trashedTo as string
    expect(archiveNames(dataDir, root)).toHaveLength(1)
    const restored = await ws.call('restore_file', { trashedPath: trashedTo, targetPath: 'recovered' })
    expect(restored.status).toBe('ok')
    expect(read(join(root, 'recovered/inner.txt'))).toBe('old\n')
  })

  it('a FIFO deep in the tree stops the copy halfway: nothing moved, the overwritten destination restored', async (ctx) => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    sampleTree(join(other, 'd'))
    chmodSync(join(other, 'd/sub/deeper'), 0o755)
    mkfifo(join(other, 'd/sub/deeper/zz-pipe'))
    const source = snapshot(join(other, 'd'))
    writeTree(root, { 'dest/keep.txt': 'keep\n' })
    const destination = snapshot(join(root, 'dest'))
    const result = await ws.call('move_file', { source: join(other, 'd'), destination: 'dest', overwrite: true }, { confirm: () => true })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
    expect(result.output).toContain(join(other, 'd/sub/deeper/zz-pipe'))
    expect(result.output).toContain('nothing was moved')
    expect(result.output).toContain('the destination was restored as it was')
    expect(snapshot(join(other, 'd'))).toEqual(source)
    expect(snapshot(join(root, 'dest'))).toEqual(destination)
    expect(archiveNames(dataDir, root)).toEqual([])
    expect(temps(root)).toEqual([])
  })

  it('a full destination file system: IO_ERROR naming it, the source untouched, no partial copy left', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const tiny = tinyFileSystem() ?? ctx.skip()
    writeTree(root, { 'd/one.bin': Buffer.alloc(600 << 10, 1), 'd/two.bin': Buffer.alloc(600 << 10, 2) })
    const before = snapshot(join(root, 'd'))
    const result = await ws.call('move_file', { source: 'd', destination: join(tiny, 'd') })
    expect(result).toMatchObject({ status: 'error', code: 'IO_ERROR' })
    expect(result.output).toContain('no space left on the device')
    expect(result.output).toContain('nothing was moved')
    expect(snapshot(join(root, 'd'))).toEqual(before)
    expect(readdirSync(tiny)).toEqual([])
  })

  it('a source entry that cannot be removed after the copy stays; the error says the destination is complete', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const other = otherFileSystem(root) ?? ctx.skip()
    writeTree(root, { 'd/a.txt': 'a', 'd/stuck.txt': 'stuck' })
    try {
      execFileSync('chattr', ['+i', join(root, 'd/stuck.txt')], { stdio: 'ignore' })
    } catch {
      return ctx.skip()
    }
    cleanups.push(() => execFileSync('chattr', ['-i', join(root, 'd/stuck.txt')]))
    const before = snapshot(join(root, 'd'))
    const result = await ws.call('move_file', { source: 'd', destination: join(other, 'd') })
    expect(result.status).toBe('error')
    expect(result.output).toContain(`copied ${join(root, 'd')} to ${join(other, 'd')} (another file system), which is complete`)
    expect(snapshot(join(other, 'd'))).toEqual(before)
    expect(read(join(root, 'd/stuck.txt'))).toBe('stuck')
    expect(existsSync(join(root, 'd/a.txt'))).toBe(false)
  })
})
