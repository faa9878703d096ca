/**
 * Mounts inside an allowed tree (../docs/paths-and-sandbox.md#mounts): reads and writes go through them like
 * any directory, but a tree is never removed or trashed across one. And a read that hangs in the
 * kernel (a dead NFS or FUSE server) does not hang the call: an abort answers `ABORTED` at once.
 * Mounting needs root; where it is not permitted, these tests skip and say so.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { read, writeTree } from './helpers/files.js'
import { ALL, archiveNames, bucketDir, snapshot } from './helpers/trash.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

/** Runs `mount` with `args` (the last is the mount point); whether it mounted. Unmounted after the test. */
function mount(...args: string[]): boolean {
  const at = args[args.length - 1]!
  mkdirSync(at, { recursive: true })
  if (spawnSync('mount', args, { stdio: 'ignore' }).status !== 0) return false
  cleanups.push(() => void spawnSync('umount', ['-l', at], { stdio: 'ignore' }))
  return true
}

/** A directory outside the workspace with one file in it. */
function outsideDir(): string {
  const dir = mkdtempSync('/tmp/afs-mounted-')
  writeFileSync(join(dir, 'data.txt'), 'mounted data\n')
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * Whether this addon tells bind mounts of one file system apart: Linux's mount ids, not in the
 * portable mode, nor where (as a debug build is told by `AGENT_FS_TOOLS_MOUNT_ID_FROM=none`) no
 * source of them answers.
 */
const bindMountsKnown = ['', '0', undefined].includes(process.env.AGENT_FS_TOOLS_PORTABLE) && process.env.AGENT_FS_TOOLS_MOUNT_ID_FROM !== 'none'


describe('mounts inside an allowed tree', () => {
  it('are read and written through like any directory', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const outside = outsideDir()
    if (!mount('--bind', outside, join(root, 'bound'))) ctx.skip()
    const read1 = await ws.call('read_file', { path: 'bound/data.txt' })
    expect(read1.output).toContain('mounted data')
    const written = await ws.call('write_file', { path: 'bound/new.txt', content: 'through the mount\n' })
    expect(written, written.output).toMatchObject({ status: 'ok' })
    expect(read(join(outside, 'new.txt'))).toBe('through the mount\n')
    const deleted = await ws.call('delete_file', { path: 'bound/new.txt' })
    expect(deleted, deleted.output).toMatchObject({ status: 'ok' })
  })

  it('stop a recursive remove_dir, to the trash or permanent, before anything is removed', async (ctx) => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(join(root, 'proj'), { 'a.txt': 'a\n', 'src/b.txt': 'b\n', 'z.txt': 'z\n' })
    const mountPoint = join(root, 'proj/src/mnt')
    if (!mount('-t', 'tmpfs', '-o', 'size=1m', 'afs-test', mountPoint)) ctx.skip()
    writeFileSync(join(mountPoint, 'on-tmpfs.txt'), 'another file system\n')
    const before = snapshot(join(root, 'proj'))
    const trashed = await ws.call('remove_dir', { path: 'proj', recursive: true })
    expect(trashed, trashed.output).toMatchObject({ status: 'error', code: 'DANGEROUS_PATH' })
    expect(trashed.output).toContain(`${mountPoint} is a mount point`)
    expect(trashed.output).toContain('Unmount it first')
    expect(snapshot(join(root, 'proj'))).toEqual(before)
    expect(archiveNames(dataDir, root)).toEqual([])
    // Permanent: what is around the mount point goes, what is mounted there stays.
    const removed = await ws.call('remove_dir', { path: 'proj', recursive: true, permanent: true })
    expect(removed, removed.output).toMatchObject({ status: 'error', code: 'DANGEROUS_PATH' })
    expect(removed.output).toContain(`${join(root, 'proj')} was only partly removed: ${mountPoint} is a mount point`)
    expect(existsSync(join(root, 'proj/a.txt')) || existsSync(join(root, 'proj/src/b.txt'))).toBe(false)
    expect(read(join(mountPoint, 'on-tmpfs.txt'))).toBe('another file system\n')
    const onItself = await ws.call('remove_dir', { path: 'proj/src/mnt', recursive: true })
    expect(onItself).toMatchObject({ status: 'error', code: 'DANGEROUS_PATH' })
    expect(read(join(mountPoint, 'on-tmpfs.txt'))).toBe('another file system\n')
  })

  it('a bind mount of a directory outside stops the trash of the tree holding it', async (ctx) => {
    if (!bindMountsKnown) ctx.skip()
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(join(root, 'proj'), { 'a.txt': 'a\n' })
    const outside = outsideDir()
    if (!mount('--bind', outside, join(root, 'proj/bound'))) ctx.skip()
    const before = snapshot(join(root, 'proj'))
    const result = await ws.call('remove_dir', { path: 'proj', recursive: true })
    expect(result, result.output).toMatchObject({ status: 'error', code: 'DANGEROUS_PATH' })
    expect(result.output).toContain(`${join(root, 'proj/bound')} is a mount point`)
    expect(snapshot(join(root, 'proj'))).toEqual(before)
    expect(readFileSync(join(outside, 'data.txt'), 'utf8')).toBe('mounted data\n')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('where bind mounts are not told apart, one is trashed with its tree and stays, emptied; nothing is lost', async (ctx) => {
    if (bindMountsKnown) ctx.skip()
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(join(root, 'proj'), { 'a.txt': 'a\n' })
    const outside = outsideDir()
    const mountPoint = join(root, 'proj/bound')
    if (!mount('--bind', outside, mountPoint)) ctx.skip()
    const result = await ws.call('remove_dir', { path: 'proj', recursive: true })
    const [archive] = archiveNames(dataDir, root)
    expect(archive).toBeDefined()
    expect(result, result.output).toMatchObject({ status: 'error', code: 'DANGEROUS_PATH' })
    expect(result.output).toContain(`${join(root, 'proj')} was moved to the trash, but ${mountPoint} is a mount point`)
    expect(result.output).toContain(`Nothing is lost: all of ${join(root, 'proj')} is in ${join(bucketDir(dataDir, root), archive!)}`)
    // What the mount showed went with the tree (README: a limit where mounts are not told apart);
    // the mount point stays, empty, with the directory holding it.
    expect(readdirSync(outside)).toEqual([])
    expect(snapshot(join(root, 'proj'))).toMatchObject({ '': { type: 'dir' }, bound: { type: 'dir' } })
    expect(Object.keys(snapshot(join(root, 'proj')))).toEqual(['', 'bound'])
    // As the message says: unmount, remove what is left, and the archive brings it all back.
    expect(spawnSync('umount', [mountPoint]).status).toBe(0)
    rmSync(join(root, 'proj'), { recursive: true })
    const restored = await ws.call('restore_file', { trashedPath: archive! })
    expect(restored, restored.output).toMatchObject({ status: 'ok' })
    expect(read(join(root, 'proj/a.txt'))).toBe('a\n')
    expect(read(join(root, 'proj/bound/data.txt'))).toBe('mounted data\n')
  })
})

/** A FUSE file system whose reads never come back (`helpers/hung-fuse.mjs`), mounted at `at`. */
interface HungFileSystem {
  /** Resolves once the next call is stuck on it, in the kernel: reading `file.txt`, or looking up `never`. */
  stuck: () => Promise<void>
}

/** Mounts a `HungFileSystem` at `at`, or `undefined` where that is not permitted. */
async function hungFileSystem(at: string): Promise<HungFileSystem | undefined> {
  mkdirSync(at, { recursive: true })
  const helper = join(dirname(fileURLToPath(import.meta.url)), 'helpers/hung-fuse.mjs')
  const server = spawn(process.execPath, [helper, at], { stdio: ['ignore', 'pipe', 'inherit'] })
  // Killing the server ends the connection, which ends any read still stuck on it.
  cleanups.push(() => {
    server.kill('SIGKILL')
    spawnSync('umount', ['-l', at], { stdio: 'ignore' })
  })
  const lines = createInterface({ input: server.stdout! })
  const next = (): Promise<string> =>
    new Promise((resolve) => {
      lines.once('line', resolve)
      server.once('exit', () => resolve('exited'))
    })
  if ((await next()) !== 'ready') return undefined
  return { stuck: () => next().then(() => undefined) }
}

describe('a read that hangs in the kernel', () => {
  it('ends with ABORTED when aborted; the call holds no lock and the workspace goes on', async (ctx) => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeFileSync(join(root, 'local.txt'), 'local\n')
    const hung = await hungFileSystem(join(root, 'hung'))
    if (hung === undefined) return ctx.skip()
    const controller = new AbortController()
    const stuck = ws.call('read_file', { path: 'hung/file.txt' }, { signal: controller.signal })
    await hung.stuck()
    // Meanwhile the workspace answers other calls.
    const local = await ws.call('read_file', { path: 'local.txt' })
    expect(local.output).toContain('local')
    controller.abort()
    expect(await stuck).toMatchObject({ status: 'error', code: 'ABORTED' })
    // The stuck read's thread is still in the kernel, but its lock is gone: a change of the
    // same path takes it (and fails on the file system, which implements no removal).
    const removed = await ws.call('delete_file', { path: 'hung/file.txt', permanent: true })
    expect(removed.status).toBe('error')
    expect(removed.code).not.toBe('ABORTED')
  })

  // A lookup stuck in the kernel holds the runtime thread it runs on (there are as many as
  // cores) until the file system answers: with one left, the abort is still answered.
  it('ends with ABORTED when aborted while the path is being looked up', async (ctx) => {
    if (availableParallelism() < 2) return ctx.skip()
    const { ws, root } = tempWorkspace({ permissions: ALL })
    writeFileSync(join(root, 'local.txt'), 'local\n')
    const hung = await hungFileSystem(join(root, 'hung'))
    if (hung === undefined) return ctx.skip()
    const controller = new AbortController()
    const stuck = ws.call('read_file', { path: 'hung/never' }, { signal: controller.signal })
    await hung.stuck()
    controller.abort()
    expect(await stuck).toMatchObject({ status: 'error', code: 'ABORTED' })
    const local = await ws.call('read_file', { path: 'local.txt' })
    expect(local.output).toContain('local')
  })
})
