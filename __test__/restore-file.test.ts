/**
 * `restore_file` (../docs/permissions-and-prompts.md, ../docs/tools.md#restore_file, ../docs/trash.md): round trips, targetPath, overwrite, refusals (existing target,
 * archives outside the bucket, tampered archives), permissions.
 */
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lchownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { modeAsKept, names, read, siblingDir, writeTree } from './helpers/files.js'
import {
  ALL,
  archiveName,
  archiveNames,
  bucketDir,
  bucketNames,
  buildTarGz,
  metadataEntry,
  recorder,
  sha256,
  snapshot,
  systemTar,
  type TarEntry,
} from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

const restorable = { permissions: { cwdRemoveFile: true, cwdWriteFile: true } } as const

/** Deletes `rel` (a file under root) and returns the archive path. */
async function trash(ws: Workspace, rel: string): Promise<string> {
  const result = await ws.call('delete_file', { path: rel }, { permissions: ALL })
  expect(result.status).toBe('ok')
  return result.data!.trashedTo as string
}

describe('restore_file round trips', () => {
  it('delete → restore gives back the identical file: bytes, mode, mtime; the archive is gone', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const path = join(root, 'bin/tool')
    writeTree(root, { 'bin/tool': Buffer.concat([Buffer.from('#!/bin/sh\n'), randomBytes(3000), Buffer.from([0, 0, 255])]) })
    chmodSync(path, 0o751)
    utimesSync(path, 1_600_000_000, 1_600_000_000.123456)
    const before = snapshot(path)
    const archive = await trash(ws, 'bin/tool')
    expect(existsSync(path)).toBe(false)
    const result = await ws.call('restore_file', { trashedPath: archive })
    expect(result.status).toBe('ok')
    expect(result.output).toContain(`Restored ${path}`)
    expect(result.data).toMatchObject({ path, kind: 'file', restoredFrom: archive })
    expect(snapshot(path)).toEqual(before)
    expect(statSync(path).mode & 0o7777).toBe(modeAsKept(0o751))
    expect(existsSync(archive)).toBe(false)
    expect(archiveNames(dataDir, root)).toEqual([])
    expect(await ws.trashList()).toEqual([])
  })

  it('a large file (streamed) round trips byte-identical', async () => {
    const { ws, root } = tempWorkspace(restorable)
    const data = randomBytes(6 * 1024 * 1024)
    writeFileSync(join(root, 'big.bin'), data)
    const archive = await trash(ws, 'big.bin')
    expect((await ws.call('restore_file', { trashedPath: archive })).status).toBe('ok')
    expect(sha256(readFileSync(join(root, 'big.bin')))).toBe(sha256(data))
  })

  it('an empty file round trips', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeFileSync(join(root, 'empty'), '')
    const archive = await trash(ws, 'empty')
    expect((await ws.call('restore_file', { trashedPath: archive })).status).toBe('ok')
    expect(statSync(join(root, 'empty')).size).toBe(0)
  })

  it('recreates missing parent directories of the original path', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeTree(root, { 'a/b/c.txt': 'c' })
    const archive = await trash(ws, 'a/b/c.txt')
    rmSync(join(root, 'a'), { recursive: true })
    expect((await ws.call('restore_file', { trashedPath: archive })).status).toBe('ok')
    expect(read(join(root, 'a/b/c.txt'))).toBe('c')
  })

  it('a symlink is restored as the same link', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeTree(root, { 't.txt': 't' })
    symlinkOrSkip('t.txt', join(root, 'l'))
    const before = snapshot(join(root, 'l'))
    const archive = await trash(ws, 'l')
    const result = await ws.call('restore_file', { trashedPath: archive })
    expect(result.data).toMatchObject({ kind: 'symlink' })
    expect(lstatSync(join(root, 'l')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(root, 'l'))).toBe('t.txt')
    expect(snapshot(join(root, 'l'))).toEqual(before)
  })

  it('to targetPath: restored there, the original path stays absent', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'alpha' })
    const archive = await trash(ws, 'a.txt')
    const result = await ws.call('restore_file', { trashedPath: archive, targetPath: 'elsewhere/b.txt' })
    expect(result.status).toBe('ok')
    expect(result.data).toMatchObject({ path: join(root, 'elsewhere/b.txt') })
    expect(read(join(root, 'elsewhere/b.txt'))).toBe('alpha')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('trashedPath given as the bare archive file name works', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const result = await ws.call('restore_file', { trashedPath: basename(archive) })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('a')
  })

  it('a file trashed from outside root (absolute/…) goes back to its absolute path', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'o.txt'), 'outside')
    const archive = (await ws.call('delete_file', { path: join(outside, 'o.txt') })).data!.trashedTo as string
    expect(existsSync(join(outside, 'o.txt'))).toBe(false)
    expect((await ws.call('restore_file', { trashedPath: archive })).status).toBe('ok')
    expect(read(join(outside, 'o.txt'))).toBe('outside')
  })

  it('a trashed directory restores to targetPath as a whole tree', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(root, { 'd/x.txt': 'x', 'd/e/y.txt': 'y' })
    mkdirSync(join(root, 'd/empty'))
    const before = snapshot(join(root, 'd'))
    const archive = (await ws.call('remove_dir', { path: 'd', recursive: true })).data!.trashedTo as string
    expect((await ws.call('restore_file', { trashedPath: archive, targetPath: 'copy/d' })).status).toBe('ok')
    expect(snapshot(join(root, 'copy/d'))).toEqual(before)
    expect(existsSync(join(root, 'd'))).toBe(false)
  })

  it('hard links inside a trashed tree come back as names of one file; a name outside stays a file of its own', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
    const outside = siblingDir(root)
    writeTree(root, { 'd/a/x.txt': 'shared', 'd/solo.txt': 'solo' })
    linkSync(join(root, 'd/a/x.txt'), join(root, 'd/y.txt'))
    linkSync(join(root, 'd/a/x.txt'), join(root, 'd/z.txt'))
    linkSync(join(root, 'd/a/x.txt'), join(outside, 'x-outside.txt'))
    const before = snapshot(join(root, 'd'))
    const removed = await ws.call('remove_dir', { path: 'd', recursive: true })
    expect(removed.status, removed.output).toBe('ok')
    expect(lstatSync(join(outside, 'x-outside.txt')).nlink).toBe(1)
    const listed = (await ws.call('trash_list', {})).data!.entries as unknown as Array<Record<string, unknown>>
    expect(listed[0]).toMatchObject({ fileCount: 4, size: 'shared'.length + 'solo'.length })
    const restored = await ws.call('restore_file', { trashedPath: removed.data!.trashedTo as string })
    expect(restored.status, restored.output).toBe('ok')
    expect(snapshot(join(root, 'd'))).toEqual(before)
    const x = lstatSync(join(root, 'd/a/x.txt'))
    expect(x.nlink).toBe(3)
    expect(lstatSync(join(root, 'd/y.txt')).ino).toBe(x.ino)
    expect(lstatSync(join(root, 'd/z.txt')).ino).toBe(x.ino)
    expect(lstatSync(join(outside, 'x-outside.txt')).ino).not.toBe(x.ino)
    expect(read(join(outside, 'x-outside.txt'))).toBe('shared')
  })

  it("restored by root, a user's tree is theirs again: owners and groups come back", async (ctx) => {
    if (process.getuid?.() !== 0) ctx.skip() // only root may give files away
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(root, { 'home/notes.txt': 'n', 'home/src/a.ts': 'a' })
    symlinkOrSkip('notes.txt', join(root, 'home/link'))
    for (const [rel, id] of [['home', 1201], ['home/notes.txt', 1202], ['home/src', 1203], ['home/src/a.ts', 1204]] as const) {
      chownSync(join(root, rel), id, id + 1000)
    }
    lchownSync(join(root, 'home/link'), 1205, 2205)
    const owners = (): number[][] =>
      ['home', 'home/notes.txt', 'home/src', 'home/src/a.ts', 'home/link'].map((rel) => {
        const s = lstatSync(join(root, rel))
        return [s.uid, s.gid]
      })
    const before = owners()
    const archive = (await ws.call('remove_dir', { path: 'home', recursive: true })).data!.trashedTo as string
    const restored = await ws.call('restore_file', { trashedPath: archive })
    expect(restored.status, restored.output).toBe('ok')
    expect(owners()).toEqual(before)
  })

  it('two concurrent restores of one archive: exactly one succeeds', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const results = await Promise.all([
      ws.call('restore_file', { trashedPath: archive, targetPath: 'one.txt' }),
      ws.call('restore_file', { trashedPath: archive, targetPath: 'two.txt' }),
    ])
    expect(results.filter((r) => r.status === 'ok')).toHaveLength(1)
    expect([existsSync(join(root, 'one.txt')), existsSync(join(root, 'two.txt'))].filter(Boolean)).toHaveLength(1)
  })
})

describe('restore_file over an existing target', () => {
  it('without overwrite: ALREADY_EXISTS, nothing asked, target and archive kept', async () => {
    const confirm = vi.fn(() => true)
    const { ws, root, dataDir } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'old' })
    const archive = await trash(ws, 'a.txt')
    writeFileSync(join(root, 'a.txt'), 'new')
    const result = await ws.call('restore_file', { trashedPath: archive })
    expect(result).toMatchObject({ status: 'error', code: 'ALREADY_EXISTS' })
    expect(result.output).toContain(join(root, 'a.txt'))
    expect(result.output).toContain('overwrite')
    expect(read(join(root, 'a.txt'))).toBe('new')
    expect(existsSync(archive)).toBe(true)
    expect(confirm).not.toHaveBeenCalled()
    expect(archiveNames(dataDir, root)).toHaveLength(1)
  })

  it('a dangling symlink at the target counts as existing', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'old' })
    const archive = await trash(ws, 'a.txt')
    symlinkOrSkip('nowhere', join(root, 'a.txt'))
    expect((await ws.call('restore_file', { trashedPath: archive })).code).toBe('ALREADY_EXISTS')
    expect(readlinkSync(join(root, 'a.txt'))).toBe('nowhere')
  })

  it('overwrite: true trashes the existing target first; that one is restorable too', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'old' })
    const archive = await trash(ws, 'a.txt')
    writeFileSync(join(root, 'a.txt'), 'new')
    const result = await ws.call('restore_file', { trashedPath: archive, overwrite: true })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('old')
    const replaced = result.data!.trashedTo as string
    expect(typeof replaced).toBe('string')
    expect(result.output).toContain(replaced)
    expect(existsSync(archive)).toBe(false)
    expect(archiveNames(dataDir, root)).toEqual([basename(replaced)])
    const back = await ws.call('restore_file', { trashedPath: replaced, targetPath: 'a.new.txt' })
    expect(back.status).toBe('ok')
    expect(read(join(root, 'a.new.txt'))).toBe('new')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('overwrite: true replaces a directory at the target with the archived file, asking as a recursive removal does', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeTree(root, { 'a': 'file' })
    const archive = await trash(ws, 'a')
    writeTree(root, { 'a/inner.txt': 'i' })
    // Granted write and remove do not cover replacing a whole tree: without a handler, denied.
    const unasked = await ws.call('restore_file', { trashedPath: archive, overwrite: true })
    expect(unasked.status).toBe('denied')
    expect(read(join(root, 'a/inner.txt'))).toBe('i')
    const { confirm, requests } = recorder()
    const result = await ws.call('restore_file', { trashedPath: archive, overwrite: true }, { confirm })
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ label: 'Restore file?', recursive: true })
    expect(requests[0]!.detail).toBe(
      `${join(root, 'a')} (replaces the directory ${join(root, 'a')} and everything in it, which goes to the trash first: 1 file, 1 byte)`,
    )
    expect(result.status).toBe('ok')
    expect(read(join(root, 'a'))).toBe('file')
    const back = await ws.call('restore_file', { trashedPath: result.data!.trashedTo as string, targetPath: 'a-dir' })
    expect(back.status).toBe('ok')
    expect(read(join(root, 'a-dir/inner.txt'))).toBe('i')
  })
})

describe('restore_file refusals', () => {
  it('an archive copied outside the bucket: PATH_NOT_ALLOWED, nothing restored, the copy untouched', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const elsewhere = mkdtempSync(join(tmpdir(), 'afs-foreign-'))
    try {
      const copy = join(elsewhere, basename(archive))
      copyFileSync(archive, copy)
      const result = await ws.call('restore_file', { trashedPath: copy })
      expect(result).toMatchObject({ status: 'error', code: 'PATH_NOT_ALLOWED' })
      expect(existsSync(join(root, 'a.txt'))).toBe(false)
      expect(existsSync(copy)).toBe(true)
      expect(archiveNames(dataDir, root)).toHaveLength(1)
    } finally {
      rmSync(elsewhere, { recursive: true, force: true })
    }
  })

  it('a symlink in the bucket pointing to an archive outside: PATH_NOT_ALLOWED', async () => {
    const { ws, root } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const outside = siblingDir(root)
    renameSync(archive, join(outside, basename(archive)))
    symlinkOrSkip(join(outside, basename(archive)), archive)
    const result = await ws.call('restore_file', { trashedPath: archive })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(existsSync(join(outside, basename(archive)))).toBe(true)
  })

  it("another workspace's archive (same data dir, other root): PATH_NOT_ALLOWED", async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const otherRoot = siblingDir(root, 'other-root')
    const other = new Workspace({ root: otherRoot, trash: { dataDir }, permissions: ALL })
    writeFileSync(join(otherRoot, 'x.txt'), 'x')
    const archive = (await other.call('delete_file', { path: 'x.txt' })).data!.trashedTo as string
    expect(dirname(archive)).toBe(bucketDir(dataDir, otherRoot))
    const result = await ws.call('restore_file', { trashedPath: archive })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(existsSync(join(otherRoot, 'x.txt'))).toBe(false)
    expect(existsSync(archive)).toBe(true)
  })

  it('a missing archive in the bucket: NOT_FOUND', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'a' })
    await trash(ws, 'a.txt')
    const missing = join(bucketDir(dataDir, root), archiveName('gone.txt'))
    const result = await ws.call('restore_file', { trashedPath: missing })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect((await ws.call('restore_file', { trashedPath: basename(missing) })).code).toBe('NOT_FOUND')
  })

  it('a file in the bucket that is not named like an archive: PATH_NOT_ALLOWED', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const odd = join(bucketDir(dataDir, root), 'notes.txt')
    copyFileSync(archive, odd)
    expect((await ws.call('restore_file', { trashedPath: odd })).code).toBe('PATH_NOT_ALLOWED')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('bad arguments: INVALID_ARGUMENTS naming the field', async () => {
    const { ws } = tempWorkspace(restorable)
    const missing = await ws.call('restore_file' as string, {})
    expect(missing.code).toBe('INVALID_ARGUMENTS')
    expect(missing.output).toContain('trashedPath')
    const wrong = await ws.call('restore_file' as string, { trashedPath: 'x.tar.gz', overwrite: 1 })
    expect(wrong.code).toBe('INVALID_ARGUMENTS')
    expect(wrong.output).toContain('overwrite')
  })

  it('a targetPath outside allowedPaths: PATH_NOT_ALLOWED, archive kept', async () => {
    const dirs = tempWorkspaceDirs()
    const outside = siblingDir(dirs.root)
    const ws = new Workspace({ root: dirs.root, allowedPaths: [dirs.root], trash: { dataDir: dirs.dataDir }, permissions: ALL })
    writeTree(dirs.root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const result = await ws.call('restore_file', { trashedPath: archive, targetPath: join(outside, 'a.txt') })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(existsSync(join(outside, 'a.txt'))).toBe(false)
    expect(existsSync(archive)).toBe(true)
  })

  it('a targetPath inside the trash: PATH_NOT_ALLOWED', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const result = await ws.call('restore_file', { trashedPath: archive, targetPath: join(bucketDir(dataDir, root), 'x.txt') })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(existsSync(join(bucketDir(dataDir, root), 'x.txt'))).toBe(false)
  })
})

describe('restore_file with tampered archives', () => {
  /** Builds the test's own archive into the bucket (creating it) and returns its path. */
  function plant(dataDir: string, root: string, entries: TarEntry[], base = 'planted'): string {
    const dir = bucketDir(dataDir, root)
    mkdirSync(dir, { recursive: true })
    const path = join(dir, archiveName(base))
    writeFileSync(path, buildTarGz(entries))
    return path
  }

  function fileMeta(root: string, rel: string, content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      sessionId: 'session',
      runId: 'run',
      agentName: 'agent',
      trashedAt: '2026-01-01T00:00:00.000Z',
      originalPath: join(root, rel),
      relativePath: rel,
      kind: 'file',
      originalSha256: sha256(content),
      size: Buffer.byteLength(content),
      mode: 0o644,
      ...extra,
    }
  }

  function dirMeta(root: string, rel: string): Record<string, unknown> {
    return {
      ...fileMeta(root, rel, 'x'),
      kind: 'directory',
      originalSha256: '0'.repeat(64),
      size: 1,
      mode: 0o755,
      fileCount: 1,
    }
  }

  /** The restore fails as TRASH_CORRUPT and leaves no trace: nothing new in root, its parent, `outside`. */
  async function expectCorrupt(ws: Workspace, archive: string, root: string, outside: string, targetPath?: string): Promise<void> {
    const roots = [root, dirname(root), outside].map((d) => [d, names(d)] as const)
    const args = targetPath === undefined ? { trashedPath: archive } : { trashedPath: archive, targetPath }
    const result = await ws.call('restore_file', args)
    expect(result.status).toBe('error')
    expect(result.code, result.output).toBe('TRASH_CORRUPT')
    for (const [dir, before] of roots) expect(names(dir), dir).toEqual(before)
    expect(existsSync(archive)).toBe(true)
  }

  it('control: a well-formed hand-built archive restores (the builder is sound)', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const archive = plant(dataDir, root, [metadataEntry(fileMeta(root, 'hand.txt', 'hand\n')), { name: 'hand.txt', content: 'hand\n' }])
    expect((await ws.trashList()).map((e) => e.archivePath)).toEqual([archive])
    const result = await ws.call('restore_file', { trashedPath: archive })
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'hand.txt'))).toBe('hand\n')
    expect(statSync(join(root, 'hand.txt')).mtimeMs).toBe(1_700_000_000_000)
  })

  it('a `../` entry escaping the tree', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    const archive = plant(dataDir, root, [
      metadataEntry(dirMeta(root, 'd')),
      { name: 'd', type: 'dir' },
      { name: 'd/../../escape.txt', content: 'x' },
    ])
    await expectCorrupt(ws, archive, root, outside)
    expect(existsSync(join(dirname(root), 'escape.txt'))).toBe(false)
    expect(existsSync(join(root, 'escape.txt'))).toBe(false)
  })

  it('a bare `../` entry for a single file', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    const archive = plant(dataDir, root, [metadataEntry(fileMeta(root, 'escape.txt', 'x')), { name: '../escape.txt', content: 'x' }])
    await expectCorrupt(ws, archive, root, outside)
    expect(existsSync(join(dirname(root), 'escape.txt'))).toBe(false)
  })

  it('an absolute entry', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    const archive = plant(dataDir, root, [
      metadataEntry(dirMeta(root, 'd')),
      { name: 'd', type: 'dir' },
      { name: join(outside, 'escape.txt'), content: 'x' },
    ])
    await expectCorrupt(ws, archive, root, outside)
    expect(existsSync(join(outside, 'escape.txt'))).toBe(false)
  })

  it('an entry through a symlink the archive planted', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    // The restore makes the link before it meets the entry beneath it: where the system makes
    // no link (Windows without the privilege, Wine), it stops there instead.
    symlinkOrSkip(outside, join(siblingDir(root, 'probe'), 'link'), 'dir')
    const archive = plant(dataDir, root, [
      metadataEntry(dirMeta(root, 'd')),
      { name: 'd', type: 'dir' },
      { name: 'd/link', type: 'symlink', linkname: outside },
      { name: 'd/link/escape.txt', content: 'x' },
    ])
    await expectCorrupt(ws, archive, root, outside)
    expect(existsSync(join(outside, 'escape.txt'))).toBe(false)
  })

  it('a hard-link entry naming a file outside the tree', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'victim.txt'), 'victim')
    const archive = plant(dataDir, root, [
      metadataEntry(dirMeta(root, 'd')),
      { name: 'd', type: 'dir' },
      { name: 'd/h', type: 'hardlink', linkname: join(outside, 'victim.txt') },
    ])
    await expectCorrupt(ws, archive, root, outside)
    expect(read(join(outside, 'victim.txt'))).toBe('victim')
  })

  it('an entry outside the recorded relativePath', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    const archive = plant(dataDir, root, [
      metadataEntry(dirMeta(root, 'd')),
      { name: 'd', type: 'dir' },
      { name: 'other/x.txt', content: 'x' },
    ])
    await expectCorrupt(ws, archive, root, outside)
  })

  it('metadata with a `../` relativePath', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    const archive = plant(dataDir, root, [metadataEntry(fileMeta(root, '../escape.txt', 'x')), { name: '../escape.txt', content: 'x' }])
    await expectCorrupt(ws, archive, root, outside, 'target.txt')
    expect(existsSync(join(dirname(root), 'escape.txt'))).toBe(false)
  })

  it('not a gzip at all, and a truncated archive', async () => {
    const { ws, root, dataDir } = tempWorkspace(restorable)
    const outside = siblingDir(root)
    const garbage = plant(dataDir, root, [], 'garbage')
    writeFileSync(garbage, 'this is not an archive')
    await expectCorrupt(ws, garbage, root, outside, 'g.txt')
    writeTree(root, { 'big.bin': randomBytes(200_000) })
    const real = await trash(ws, 'big.bin')
    const bytes = readFileSync(real)
    writeFileSync(real, bytes.subarray(0, Math.floor(bytes.length / 2)))
    await expectCorrupt(ws, real, root, outside)
    expect(existsSync(join(root, 'big.bin'))).toBe(false)
  })

  describe('repacked with the system tar', () => {
    /** Extracts a real archive, lets `edit` change metadata.json, repacks metadata first. */
    function repack(archive: string, rel: string, edit: (meta: Record<string, unknown>) => void): void {
      const work = mkdtempSync(join(tmpdir(), 'afs-repack-'))
      try {
        systemTar(['-xpzf', archive, '-C', work])
        const metaPath = join(work, 'metadata.json')
        const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as Record<string, unknown>
        edit(meta)
        writeFileSync(metaPath, JSON.stringify(meta))
        systemTar(['-czf', archive, '-C', work, 'metadata.json', rel])
      } finally {
        rmSync(work, { recursive: true, force: true })
      }
    }

    it('control: repacked unchanged, it restores', async () => {
      const { ws, root } = tempWorkspace(restorable)
      writeTree(root, { 'a.txt': 'alpha\n' })
      const archive = await trash(ws, 'a.txt')
      repack(archive, 'a.txt', () => {})
      const result = await ws.call('restore_file', { trashedPath: archive })
      expect(result.status, result.output).toBe('ok')
      expect(read(join(root, 'a.txt'))).toBe('alpha\n')
    })

    it('a wrong sha256 in the metadata: TRASH_CORRUPT, nothing at the target, the archive kept', async () => {
      const { ws, root, dataDir } = tempWorkspace(restorable)
      const outside = siblingDir(root)
      writeTree(root, { 'a.txt': 'alpha\n' })
      const archive = await trash(ws, 'a.txt')
      repack(archive, 'a.txt', (meta) => {
        meta.originalSha256 = sha256('something else')
      })
      await expectCorrupt(ws, archive, root, outside)
      expect(existsSync(join(root, 'a.txt'))).toBe(false)
      expect(bucketNames(dataDir, root)).toEqual([basename(archive)])
      expect((await ws.call('restore_file', { trashedPath: archive, targetPath: 'sub/t.txt' })).code).toBe('TRASH_CORRUPT')
      expect(existsSync(join(root, 'sub/t.txt'))).toBe(false)
    })

    it('a tree with a tampered file (sha no longer matches): TRASH_CORRUPT, no partial tree left', async () => {
      const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
      const outside = siblingDir(root)
      writeTree(root, { 'd/a.txt': 'a', 'd/s/b.txt': 'b' })
      const archive = (await ws.call('remove_dir', { path: 'd', recursive: true })).data!.trashedTo as string
      const work = mkdtempSync(join(tmpdir(), 'afs-repack-'))
      try {
        systemTar(['-xpzf', archive, '-C', work])
        writeFileSync(join(work, 'd/s/b.txt'), 'B')
        systemTar(['-czf', archive, '-C', work, 'metadata.json', 'd'])
      } finally {
        rmSync(work, { recursive: true, force: true })
      }
      await expectCorrupt(ws, archive, root, outside)
      expect(existsSync(join(root, 'd'))).toBe(false)
    })
  })
})

describe('restore_file permissions and confirmation', () => {
  it('cwdWriteFile granted: no prompt', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true }, confirm })
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    expect((await ws.call('restore_file', { trashedPath: archive })).status).toBe('ok')
    expect(confirm).not.toHaveBeenCalled()
  })

  it('not granted: asks `Restore file?` with the target as path and detail; denial text; archive kept', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root, dataDir } = tempWorkspace({ confirm, permissions: { cwdRemoveFile: true, cwdRemoveDir: true } })
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const result = await ws.call('restore_file', { trashedPath: archive, targetPath: 'b.txt' })
    expect(result.status).toBe('denied')
    expect(result.output).toContain('The user denied this restore.')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ tool: 'restore_file', label: 'Restore file?', path: join(root, 'b.txt'), detail: join(root, 'b.txt') })
    expect(existsSync(join(root, 'b.txt'))).toBe(false)
    expect(existsSync(archive)).toBe(true)
    expect(archiveNames(dataDir, root)).toHaveLength(1)
  })

  it('prompted and approved: restored', async () => {
    const { confirm, requests } = recorder(true)
    const { ws, root } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    expect((await ws.call('restore_file', { trashedPath: archive })).status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(read(join(root, 'a.txt'))).toBe('a')
  })

  it('denied with overwrite: the existing target is not trashed', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => false })
    writeTree(root, { 'a.txt': 'old' })
    const archive = await trash(ws, 'a.txt')
    writeFileSync(join(root, 'a.txt'), 'new')
    expect((await ws.call('restore_file', { trashedPath: archive, overwrite: true })).status).toBe('denied')
    expect(read(join(root, 'a.txt'))).toBe('new')
    expect(archiveNames(dataDir, root)).toEqual([basename(archive)])
  })

  it('global scope: a target outside root needs globalWriteFile, not cwdWriteFile', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdWriteFile: true } })
    const outside = siblingDir(root)
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    const target = join(outside, 'a.txt')
    expect((await ws.call('restore_file', { trashedPath: archive, targetPath: target })).status).toBe('denied')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ label: 'Restore file?', path: target, detail: `${target}\nOutside the project (${root}): ${target}` })
    const granted = await ws.call('restore_file', { trashedPath: archive, targetPath: target }, { permissions: { globalWriteFile: true } })
    expect(granted.status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(read(target)).toBe('a')
  })

  it('globalWriteFile does not cover a target inside root', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { globalWriteFile: true } })
    writeTree(root, { 'a.txt': 'a' })
    const archive = await trash(ws, 'a.txt')
    expect((await ws.call('restore_file', { trashedPath: archive })).status).toBe('denied')
    expect(requests).toHaveLength(1)
  })
})
