/** `move_file` (../docs/permissions-and-prompts.md, ../docs/tools.md#move_file): files, symlinks, directories; parents; overwrite via the trash; errors; permissions. */
import { existsSync, linkSync, lstatSync, readlinkSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { read, siblingDir, writeTree } from './helpers/files.js'
import { ALL, archiveNames, recorder, snapshot, tarMetadata } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

const movable = { permissions: { cwdWriteFile: true, cwdRemoveFile: true } } as const

describe('move_file replacing a directory tree (issue 15.5)', () => {
  it('asks like a recursive remove_dir whatever is granted, and says the tree is replaced', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'new/a.txt': 'new', 'old/b.txt': 'old', 'old/deep/c.txt': 'c' })
    const unasked = await ws.call('move_file', { source: 'new', destination: 'old', overwrite: true })
    expect(unasked.status).toBe('denied')
    expect(read(join(root, 'old/deep/c.txt'))).toBe('c')
    const { confirm, requests } = recorder()
    const result = await ws.call('move_file', { source: 'new', destination: 'old', overwrite: true }, { confirm })
    expect(result.status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ label: 'Move file?', recursive: true })
    expect(requests[0]!.detail).toBe(
      `${join(root, 'new')} → ${join(root, 'old')} (replaces the directory ${join(root, 'old')} and everything in it, which goes to the trash first: 2 files and 1 directory, 4 bytes (largest: b.txt 3 bytes, ${join('deep', 'c.txt')} 1 byte))`,
    )
    expect(read(join(root, 'old/a.txt'))).toBe('new')
  })

  it('replacing a file needs no prompt when write and remove are granted', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'a.txt': 'a', 'b.txt': 'b' })
    const result = await ws.call('move_file', { source: 'a.txt', destination: 'b.txt', overwrite: true })
    expect(result.status).toBe('ok')
  })
})

describe('move_file success', () => {
  it('renames a file, keeping bytes, mode and inode; output names both paths', async () => {
    const { ws, root, dataDir } = tempWorkspace(movable)
    writeTree(root, { 'a.txt': 'alpha\n' })
    const ino = statSync(join(root, 'a.txt')).ino
    const result = await ws.call('move_file', { source: 'a.txt', destination: 'b.txt' })
    expect(result.status).toBe('ok')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(read(join(root, 'b.txt'))).toBe('alpha\n')
    expect(statSync(join(root, 'b.txt')).ino).toBe(ino)
    expect(result.output).toContain(join(root, 'a.txt'))
    expect(result.output).toContain(join(root, 'b.txt'))
    expect(result.data).toMatchObject({ source: join(root, 'a.txt'), destination: join(root, 'b.txt') })
    expect(result.data?.trashedTo).toBeUndefined()
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('creates the destination parents', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('move_file', { source: 'a.txt', destination: 'x/y/z/a.txt' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'x/y/z/a.txt'))).toBe('a')
    expect(statSync(join(root, 'x/y')).isDirectory()).toBe(true)
  })

  it('moves a directory tree as it is', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'd/a.txt': 'a', 'd/sub/b.txt': 'b' })
    symlinkOrSkip('a.txt', join(root, 'd/link'))
    const before = snapshot(join(root, 'd'))
    const result = await ws.call('move_file', { source: 'd', destination: 'moved/d2' })
    expect(result.status).toBe('ok')
    expect(existsSync(join(root, 'd'))).toBe(false)
    expect(snapshot(join(root, 'moved/d2'))).toEqual(before)
  })

  it('moves a symlink as a link (its target stays, the link text is unchanged)', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'target.txt': 't' })
    symlinkOrSkip('target.txt', join(root, 'link'))
    symlinkOrSkip('does-not-exist', join(root, 'dangling'))
    expect((await ws.call('move_file', { source: 'link', destination: 'link2' })).status).toBe('ok')
    expect((await ws.call('move_file', { source: 'dangling', destination: 'dangling2' })).status).toBe('ok')
    expect(readlinkSync(join(root, 'link2'))).toBe('target.txt')
    expect(readlinkSync(join(root, 'dangling2'))).toBe('does-not-exist')
    expect(read(join(root, 'target.txt'))).toBe('t')
    expect(existsSync(join(root, 'link'))).toBe(false)
  })

  it('a symlink to outside the sandbox can be moved within it; the outside target is not moved', async () => {
    const dirs = tempWorkspaceDirs()
    const outside = siblingDir(dirs.root)
    writeFileSync(join(outside, 's.txt'), 's')
    const ws = new Workspace({ root: dirs.root, allowedPaths: [dirs.root], trash: { dataDir: dirs.dataDir }, ...movable })
    symlinkOrSkip(join(outside, 's.txt'), join(dirs.root, 'out'))
    expect((await ws.call('move_file', { source: 'out', destination: 'out2' })).status).toBe('ok')
    expect(lstatSync(join(dirs.root, 'out2')).isSymbolicLink()).toBe(true)
    expect(read(join(outside, 's.txt'))).toBe('s')
  })

  it('overwrite: true puts the destination into the trash first; it is restorable', async () => {
    const { ws, root, dataDir } = tempWorkspace(movable)
    writeTree(root, { 'new.txt': 'new\n', 'old.txt': 'old\n' })
    const result = await ws.call('move_file', { source: 'new.txt', destination: 'old.txt', overwrite: true })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'old.txt'))).toBe('new\n')
    expect(existsSync(join(root, 'new.txt'))).toBe(false)
    const trashedTo = result.data!.trashedTo as string
    expect(archiveNames(dataDir, root)).toHaveLength(1)
    expect(result.output).toContain(trashedTo)
    expect(tarMetadata(trashedTo)).toMatchObject({ originalPath: join(root, 'old.txt'), kind: 'file' })
    const restored = await ws.call('restore_file', { trashedPath: trashedTo, targetPath: 'recovered.txt' })
    expect(restored.status).toBe('ok')
    expect(read(join(root, 'recovered.txt'))).toBe('old\n')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('overwrite: true over a directory destination trashes the whole directory', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'src.txt': 's', 'dest/inner.txt': 'i' })
    // Replacing a directory tree is always asked.
    const result = await ws.call('move_file', { source: 'src.txt', destination: 'dest', overwrite: true }, { confirm: () => true })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'dest'))).toBe('s')
    expect(tarMetadata(result.data!.trashedTo as string)).toMatchObject({ kind: 'directory', fileCount: 1 })
  })

  it('overwrite: true with a missing destination is a plain move', async () => {
    const { ws, root, dataDir } = tempWorkspace(movable)
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('move_file', { source: 'a.txt', destination: 'b.txt', overwrite: true })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'b.txt'))).toBe('a')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('moves a file out of root and back (global scope)', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const outside = siblingDir(root)
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('move_file', { source: 'a.txt', destination: join(outside, 'a.txt') })).status).toBe('ok')
    expect(read(join(outside, 'a.txt'))).toBe('a')
    expect((await ws.call('move_file', { source: join(outside, 'a.txt'), destination: 'back.txt' })).status).toBe('ok')
    expect(read(join(root, 'back.txt'))).toBe('a')
  })

  it('formatCall: source → destination', () => {
    const { ws } = tempWorkspace()
    expect(ws.formatCall('move_file', { source: 'a.txt', destination: 'b/c.txt' })).toBe('a.txt → b/c.txt')
  })
})

describe('move_file errors', () => {
  it('an existing destination without overwrite: ALREADY_EXISTS, both untouched, nothing asked', async () => {
    const confirm = vi.fn(() => true)
    const { ws, root, dataDir } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'a', 'b.txt': 'b' })
    const result = await ws.call('move_file', { source: 'a.txt', destination: 'b.txt' })
    expect(result).toMatchObject({ status: 'error', code: 'ALREADY_EXISTS' })
    expect(result.output).toContain(join(root, 'b.txt'))
    expect(result.output).toContain('overwrite')
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(read(join(root, 'b.txt'))).toBe('b')
    expect(confirm).not.toHaveBeenCalled()
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('an existing dangling symlink destination counts as existing', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'a.txt': 'a' })
    symlinkOrSkip('nowhere', join(root, 'dl'))
    expect((await ws.call('move_file', { source: 'a.txt', destination: 'dl' })).code).toBe('ALREADY_EXISTS')
    expect(readlinkSync(join(root, 'dl'))).toBe('nowhere')
  })

  it('source and destination the same file (hard link): INVALID_ARGUMENTS, even with overwrite', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'a.txt': 'a' })
    linkSync(join(root, 'a.txt'), join(root, 'hard.txt'))
    for (const overwrite of [false, true]) {
      const result = await ws.call('move_file', { source: 'a.txt', destination: 'hard.txt', overwrite })
      expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    }
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(read(join(root, 'hard.txt'))).toBe('a')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('the same path, and a path into itself: INVALID_ARGUMENTS', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'a.txt': 'a', 'd/x.txt': 'x' })
    expect((await ws.call('move_file', { source: 'a.txt', destination: './a.txt', overwrite: true })).code).toBe('INVALID_ARGUMENTS')
    expect((await ws.call('move_file', { source: 'd', destination: 'd/inner' })).code).toBe('INVALID_ARGUMENTS')
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(read(join(root, 'd/x.txt'))).toBe('x')
  })

  it('a missing source: NOT_FOUND', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const result = await ws.call('move_file', { source: 'nope', destination: 'b' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(join(root, 'nope'))
    expect(existsSync(join(root, 'b'))).toBe(false)
  })

  it('the workspace root cannot be moved: DANGEROUS_PATH', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm })
    const outside = siblingDir(root)
    const result = await ws.call('move_file', { source: '.', destination: join(outside, 'r') })
    expect(result.code).toBe('DANGEROUS_PATH')
    expect(confirm).not.toHaveBeenCalled()
    expect(existsSync(root)).toBe(true)
  })

  it('a destination inside the trash: PATH_NOT_ALLOWED', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('move_file', { source: 'a.txt', destination: join(dataDir, 'trash', 'x.tar.gz') })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(read(join(root, 'a.txt'))).toBe('a')
  })

  it('outside allowedPaths (either side): PATH_NOT_ALLOWED', async () => {
    const dirs = tempWorkspaceDirs()
    const outside = siblingDir(dirs.root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    writeTree(dirs.root, { 'a.txt': 'a' })
    const ws = new Workspace({ root: dirs.root, allowedPaths: [dirs.root], trash: { dataDir: dirs.dataDir }, permissions: ALL })
    expect((await ws.call('move_file', { source: 'a.txt', destination: join(outside, 'a.txt') })).code).toBe('PATH_NOT_ALLOWED')
    expect((await ws.call('move_file', { source: join(outside, 'o.txt'), destination: 'o.txt' })).code).toBe('PATH_NOT_ALLOWED')
    expect(read(join(dirs.root, 'a.txt'))).toBe('a')
    expect(read(join(outside, 'o.txt'))).toBe('o')
  })

  it('bad arguments: INVALID_ARGUMENTS naming the field', async () => {
    const { ws } = tempWorkspace({ permissions: ALL })
    const missing = await ws.call('move_file' as string, { source: 'a' })
    expect(missing.code).toBe('INVALID_ARGUMENTS')
    expect(missing.output).toContain('destination')
    const wrong = await ws.call('move_file' as string, { source: 'a', destination: 'b', overwrite: 'yes' })
    expect(wrong.code).toBe('INVALID_ARGUMENTS')
    expect(wrong.output).toContain('overwrite')
  })

  it('a destination whose parent is a file fails and the source stays', async () => {
    const { ws, root } = tempWorkspace(movable)
    writeTree(root, { 'a.txt': 'a', 'f': 'file' })
    const result = await ws.call('move_file', { source: 'a.txt', destination: 'f/a.txt' })
    expect(result.status).toBe('error')
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(read(join(root, 'f'))).toBe('file')
  })
})

describe('move_file permissions and confirmation', () => {
  it('cwdWriteFile + cwdRemoveFile: no prompt inside root', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ ...movable, confirm })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('move_file', { source: 'a.txt', destination: 'b.txt' })).status).toBe('ok')
    expect(confirm).not.toHaveBeenCalled()
  })

  it('only one of the two granted: asks once, `Move file?`, detail `<src> → <dst>`', async () => {
    for (const permissions of [{ cwdWriteFile: true }, { cwdRemoveFile: true }]) {
      const { confirm, requests } = recorder(false)
      const { ws, root } = tempWorkspace({ confirm, permissions })
      writeTree(root, { 'a.txt': 'a' })
      const result = await ws.call('move_file', { source: 'a.txt', destination: 'sub/b.txt' })
      expect(result.status).toBe('denied')
      expect(result.output).toContain('The user denied this move.')
      expect(requests).toHaveLength(1)
      expect(requests[0]).toMatchObject({
        tool: 'move_file',
        label: 'Move file?',
        path: join(root, 'a.txt'),
        detail: `${join(root, 'a.txt')} → ${join(root, 'sub/b.txt')}`,
      })
      expect(read(join(root, 'a.txt'))).toBe('a')
      expect(existsSync(join(root, 'sub'))).toBe(false)
    }
  })

  it('prompted and approved: moved', async () => {
    const { confirm, requests } = recorder(true)
    const { ws, root } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('move_file', { source: 'a.txt', destination: 'b.txt' })).status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(read(join(root, 'b.txt'))).toBe('a')
  })

  it('denied with overwrite: neither side changes and nothing is trashed', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => false })
    writeTree(root, { 'a.txt': 'a', 'b.txt': 'b' })
    const result = await ws.call('move_file', { source: 'a.txt', destination: 'b.txt', overwrite: true })
    expect(result.status).toBe('denied')
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(read(join(root, 'b.txt'))).toBe('b')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('global scope: the source outside root needs globalRemoveFile, the destination outside needs globalWriteFile', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdWriteFile: true, cwdRemoveFile: true } })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    writeTree(root, { 'a.txt': 'a' })

    // Outside → inside: cwd write ok, global remove missing.
    expect((await ws.call('move_file', { source: join(outside, 'o.txt'), destination: 'o.txt' })).status).toBe('denied')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({
      label: 'Move file?',
      path: join(outside, 'o.txt'),
      detail: `${join(outside, 'o.txt')} → ${join(root, 'o.txt')}\nOutside the project (${root}): ${join(outside, 'o.txt')}`,
    })
    const inward = await ws.call(
      'move_file',
      { source: join(outside, 'o.txt'), destination: 'o.txt' },
      { permissions: { cwdWriteFile: true, globalRemoveFile: true } },
    )
    expect(inward.status).toBe('ok')
    expect(requests).toHaveLength(1)

    // Inside → outside: cwd remove ok, global write missing.
    expect((await ws.call('move_file', { source: 'a.txt', destination: join(outside, 'a.txt') })).status).toBe('denied')
    expect(requests).toHaveLength(2)
    const outward = await ws.call(
      'move_file',
      { source: 'a.txt', destination: join(outside, 'a.txt') },
      { permissions: { cwdRemoveFile: true, globalWriteFile: true } },
    )
    expect(outward.status).toBe('ok')
    expect(requests).toHaveLength(2)
    expect(read(join(outside, 'a.txt'))).toBe('a')
    expect(read(join(root, 'o.txt'))).toBe('o')
  })

  it('global permissions alone do not cover a move inside root', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { globalWriteFile: true, globalRemoveFile: true } })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('move_file', { source: 'a.txt', destination: 'b.txt' })).status).toBe('denied')
    expect(requests).toHaveLength(1)
  })

  it('a move never needs the always-ask path: with every permission it does not prompt, even with overwrite', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm })
    writeTree(root, { 'a.txt': 'a', 'b.txt': 'b' })
    expect((await ws.call('move_file', { source: 'a.txt', destination: 'b.txt', overwrite: true })).status).toBe('ok')
    expect(confirm).not.toHaveBeenCalled()
  })
})
