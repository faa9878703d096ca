/** `delete_file` (../docs/permissions-and-prompts.md, ../docs/tools.md#delete_file, ../docs/trash.md): files and symlinks into the trash, or permanently; errors; permissions. */
import { createServer } from 'node:net'
import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, writeFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { mkfifo, read, siblingDir, writeTree } from './helpers/files.js'
import { ALL, archiveNames, bucketDir, recorder, sha256, tarMetadata } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'
import { NO_UNIX_SOCKETS, skipOnWindows } from './helpers/skip.js'

const removable = { permissions: { cwdRemoveFile: true } } as const

describe('delete_file success', () => {
  it('moves a file into the trash; output and data.trashedTo name the archive', async () => {
    const { ws, root, dataDir } = tempWorkspace(removable)
    writeTree(root, { 'src/a.txt': 'alpha\n' })
    const abs = join(root, 'src/a.txt')
    const result = await ws.call('delete_file', { path: 'src/a.txt' })
    expect(result.status).toBe('ok')
    expect(existsSync(abs)).toBe(false)
    const trashedTo = result.data?.trashedTo as string
    expect(typeof trashedTo).toBe('string')
    expect(trashedTo.startsWith(bucketDir(dataDir, root) + sep)).toBe(true)
    expect(existsSync(trashedTo)).toBe(true)
    expect(archiveNames(dataDir, root)).toHaveLength(1)
    expect(result.output.startsWith(`Removed ${abs}`)).toBe(true)
    expect(result.output).toContain(trashedTo)
    expect(result.output).toContain('restore_file')
    const meta = tarMetadata(trashedTo)
    expect(meta).toMatchObject({ originalPath: abs, relativePath: 'src/a.txt', kind: 'file', size: 6, originalSha256: sha256('alpha\n') })
  })

  it('the output names the renamed restore tool', async () => {
    const { ws, root } = tempWorkspace({ ...removable, tools: { restore_file: { name: 'undelete' } } })
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('delete_file', { path: 'a.txt' })
    expect(result.output).toContain('undelete')
    expect(result.output).not.toContain('restore_file')
  })

  it('permanent: true unlinks without an archive', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => true })
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('delete_file', { path: 'a.txt', permanent: true })
    expect(result.status).toBe('ok')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(archiveNames(dataDir, root)).toEqual([])
    expect(result.data?.trashedTo).toBeUndefined()
    expect(result.output.startsWith(`Removed ${join(root, 'a.txt')}`)).toBe(true)
  })

  it('a symlink: the link is removed, its target is untouched, and the archive holds the link', async () => {
    const { ws, root } = tempWorkspace(removable)
    writeTree(root, { 'target.txt': 'target\n' })
    symlinkOrSkip('target.txt', join(root, 'link'))
    const result = await ws.call('delete_file', { path: 'link' })
    expect(result.status).toBe('ok')
    expect(existsSync(join(root, 'link'))).toBe(false)
    expect(() => lstatSync(join(root, 'link'))).toThrow()
    expect(read(join(root, 'target.txt'))).toBe('target\n')
    expect(tarMetadata(result.data!.trashedTo as string)).toMatchObject({ kind: 'symlink', size: 'target.txt'.length })
  })

  it('a symlink to a directory is removed as a link (not refused as a directory)', async () => {
    const { ws, root } = tempWorkspace(removable)
    writeTree(root, { 'dir/keep.txt': 'k' })
    symlinkOrSkip('dir', join(root, 'dirlink'))
    const result = await ws.call('delete_file', { path: 'dirlink' })
    expect(result.status).toBe('ok')
    expect(() => lstatSync(join(root, 'dirlink'))).toThrow()
    expect(read(join(root, 'dir/keep.txt'))).toBe('k')
  })

  it('a symlink pointing outside the sandbox is removed (the link lives inside) and the outside target stays', async () => {
    const dirs = tempWorkspaceDirs()
    const outside = siblingDir(dirs.root)
    writeFileSync(join(outside, 'secret.txt'), 'secret\n')
    const ws = new Workspace({ root: dirs.root, allowedPaths: [dirs.root], trash: { dataDir: dirs.dataDir }, ...removable })
    symlinkOrSkip(join(outside, 'secret.txt'), join(dirs.root, 'escape'))
    const result = await ws.call('delete_file', { path: 'escape' })
    expect(result.status).toBe('ok')
    expect(() => lstatSync(join(dirs.root, 'escape'))).toThrow()
    expect(read(join(outside, 'secret.txt'))).toBe('secret\n')
    const restored = await ws.call('restore_file', { trashedPath: result.data!.trashedTo as string }, { permissions: { cwdWriteFile: true } })
    expect(restored.status).toBe('ok')
    expect(readlinkSync(join(dirs.root, 'escape'))).toBe(join(outside, 'secret.txt'))
  })

  it('a dangling symlink can be deleted', async () => {
    const { ws, root } = tempWorkspace(removable)
    symlinkOrSkip('missing-target', join(root, 'dangling'))
    const result = await ws.call('delete_file', { path: 'dangling' })
    expect(result.status).toBe('ok')
    expect(() => lstatSync(join(root, 'dangling'))).toThrow()
  })

  it('a file outside root (global scope, no allowedPaths) is archived under absolute/', async () => {
    const { ws, root } = tempWorkspace({ permissions: { globalRemoveFile: true } })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    const result = await ws.call('delete_file', { path: join(outside, 'o.txt') })
    expect(result.status).toBe('ok')
    expect(existsSync(join(outside, 'o.txt'))).toBe(false)
    expect(tarMetadata(result.data!.trashedTo as string).relativePath).toBe(`absolute/${join(outside, 'o.txt').slice(1)}`)
  })

  it('formatCall: path, and path (permanent)', () => {
    const { ws } = tempWorkspace()
    expect(ws.formatCall('delete_file', { path: 'src/a.ts' })).toBe('src/a.ts')
    expect(ws.formatCall('delete_file', { path: 'src/a.ts', permanent: true })).toBe('src/a.ts (permanent)')
  })
})

describe('delete_file errors', () => {
  it('a directory: NOT_A_FILE with the documented message; a renamed remove_dir is named', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    mkdirSync(join(root, 'dir'))
    const result = await ws.call('delete_file', { path: 'dir' })
    expect(result.status).toBe('error')
    expect(result.code).toBe('NOT_A_FILE')
    expect(result.output).toContain(`${join(root, 'dir')} is a directory, use remove_dir instead`)
    expect(existsSync(join(root, 'dir'))).toBe(true)

    const renamed = tempWorkspace({ permissions: ALL, tools: { remove_dir: { name: 'rmdir_tool' } } })
    mkdirSync(join(renamed.root, 'dir'))
    const r2 = await renamed.ws.call('delete_file', { path: 'dir' })
    expect(r2.output).toContain(`${join(renamed.root, 'dir')} is a directory, use rmdir_tool instead`)
  })

  it('a missing file: NOT_FOUND naming the absolute path', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    const result = await ws.call('delete_file', { path: 'nope.txt' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(join(root, 'nope.txt'))
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('a FIFO: NOT_A_REGULAR_FILE, left in place, without blocking', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    mkfifo(join(root, 'pipe'))
    const result = await ws.call('delete_file', { path: 'pipe' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
    expect(lstatSync(join(root, 'pipe')).isFIFO()).toBe(true)
  })

  it('a socket: NOT_A_REGULAR_FILE, left in place', async () => {
    skipOnWindows(NO_UNIX_SOCKETS)
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const path = join(root, 'sock')
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(path, resolve))
    try {
      const result = await ws.call('delete_file', { path: 'sock' })
      expect(result).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
      expect(lstatSync(path).isSocket()).toBe(true)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it('bad arguments: INVALID_ARGUMENTS naming the field', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'a.txt': 'a' })
    const missing = await ws.call('delete_file' as string, {})
    expect(missing.code).toBe('INVALID_ARGUMENTS')
    expect(missing.output).toContain('path')
    const wrongType = await ws.call('delete_file' as string, { path: 'a.txt', permanent: 'yes' })
    expect(wrongType.code).toBe('INVALID_ARGUMENTS')
    expect(wrongType.output).toContain('permanent')
    const unknown = await ws.call('delete_file' as string, { path: 'a.txt', force: true })
    expect(unknown.code).toBe('INVALID_ARGUMENTS')
    expect(unknown.output).toContain('force')
    expect(read(join(root, 'a.txt'))).toBe('a')
  })

  it('outside allowedPaths: PATH_NOT_ALLOWED, nothing asked, the file stays', async () => {
    const dirs = tempWorkspaceDirs()
    const outside = siblingDir(dirs.root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    const confirm = vi.fn(() => true)
    const ws = new Workspace({ root: dirs.root, allowedPaths: [dirs.root], trash: { dataDir: dirs.dataDir }, permissions: ALL, confirm })
    const result = await ws.call('delete_file', { path: join(outside, 'o.txt') })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(confirm).not.toHaveBeenCalled()
    expect(read(join(outside, 'o.txt'))).toBe('o')
  })

  it('an archive inside the trash cannot be deleted through delete_file', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(root, { 'a.txt': 'a' })
    const trashed = (await ws.call('delete_file', { path: 'a.txt' })).data!.trashedTo as string
    const result = await ws.call('delete_file', { path: trashed, permanent: true })
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expect(existsSync(trashed)).toBe(true)
    expect(archiveNames(dataDir, root)).toHaveLength(1)
  })

  it('an aborted signal: ABORTED and the file stays', async () => {
    const { ws, root, dataDir } = tempWorkspace(removable)
    writeTree(root, { 'a.txt': 'a' })
    const controller = new AbortController()
    controller.abort()
    const result = await ws.call('delete_file', { path: 'a.txt' }, { signal: controller.signal })
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('a read-only workspace: READ_ONLY', async () => {
    const { ws, root } = tempWorkspace({ readOnly: true, permissions: ALL })
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('delete_file', { path: 'a.txt' })
    expect(result.code).toBe('READ_ONLY')
    expect(read(join(root, 'a.txt'))).toBe('a')
  })
})

describe('delete_file permissions and confirmation', () => {
  it('cwdRemoveFile granted: no prompt inside root', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ ...removable, confirm })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('delete_file', { path: 'a.txt' })).status).toBe('ok')
    expect(confirm).not.toHaveBeenCalled()
  })

  it('not granted inside root: asks once with label, path, detail; yes deletes', async () => {
    const { confirm, requests } = recorder(true)
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdWriteFile: true, globalRemoveFile: true } })
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('delete_file', { path: 'a.txt' })
    expect(result.status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ tool: 'delete_file', label: 'Remove file?', path: join(root, 'a.txt'), detail: join(root, 'a.txt') })
    expect(requests[0]!.permanent).toBeUndefined()
    expect(requests[0]!.recursive).toBeUndefined()
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('denied: status denied, the documented text, file and trash untouched', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root, dataDir } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'a' })
    const result = await ws.call('delete_file', { path: 'a.txt' })
    expect(result.status).toBe('denied')
    expect(result.code).toBe('USER_DENIED')
    expect(result.output).toContain('The user denied this remove.')
    expect(requests).toHaveLength(1)
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('no handler: denied', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('delete_file', { path: 'a.txt' })).status).toBe('denied')
    expect(read(join(root, 'a.txt'))).toBe('a')
  })

  it('global scope: cwdRemoveFile does not cover a file outside root; globalRemoveFile does', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdRemoveFile: true } })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    const denied = await ws.call('delete_file', { path: join(outside, 'o.txt') })
    expect(denied.status).toBe('denied')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({
      label: 'Remove file?',
      path: join(outside, 'o.txt'),
      detail: `${join(outside, 'o.txt')}\nOutside the project (${root}): ${join(outside, 'o.txt')}`,
    })
    expect(read(join(outside, 'o.txt'))).toBe('o')

    const granted = await ws.call('delete_file', { path: join(outside, 'o.txt') }, { permissions: { globalRemoveFile: true } })
    expect(granted.status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(existsSync(join(outside, 'o.txt'))).toBe(false)
  })

  it('globalRemoveFile does not cover a file inside root', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { globalRemoveFile: true } })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('delete_file', { path: 'a.txt' })).status).toBe('denied')
    expect(requests).toHaveLength(1)
  })

  it('global scope prompted and approved: deleted into the trash', async () => {
    const { confirm, requests } = recorder(true)
    const { ws, root } = tempWorkspace({ confirm })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    const result = await ws.call('delete_file', { path: join(outside, 'o.txt') })
    expect(result.status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(existsSync(join(outside, 'o.txt'))).toBe(false)
    expect(existsSync(result.data!.trashedTo as string)).toBe(true)
  })

  it('permanent: true always asks, even with every permission, with (permanent) in the detail', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: ALL })
    writeTree(root, { 'a.txt': 'a' })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    const inside = await ws.call('delete_file', { path: 'a.txt', permanent: true })
    const global = await ws.call('delete_file', { path: join(outside, 'o.txt'), permanent: true })
    expect(inside.status).toBe('denied')
    expect(global.status).toBe('denied')
    expect(inside.output).toContain('The user denied this remove.')
    expect(requests).toHaveLength(2)
    expect(requests[0]).toMatchObject({
      tool: 'delete_file',
      label: 'Remove file?',
      path: join(root, 'a.txt'),
      detail: `${join(root, 'a.txt')} (permanent)`,
      permanent: true,
    })
    expect(requests[1]).toMatchObject({ detail: `${join(outside, 'o.txt')} (permanent)\nOutside the project (${root}): ${join(outside, 'o.txt')}`, permanent: true })
    expect(read(join(root, 'a.txt'))).toBe('a')
    expect(read(join(outside, 'o.txt'))).toBe('o')
  })

  it('a renamed tool reports its exposed name in the request', async () => {
    const { confirm, requests } = recorder(true)
    const { ws, root } = tempWorkspace({ confirm, tools: { delete_file: { name: 'remove_file' } } })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('remove_file', { path: 'a.txt' })).status).toBe('ok')
    expect(requests[0]!.tool).toBe('remove_file')
  })

  it('the mode of a deleted file is recorded in the archive', async () => {
    const { ws, root } = tempWorkspace(removable)
    writeTree(root, { 'x.sh': '#!/bin/sh\n' })
    chmodSync(join(root, 'x.sh'), 0o750)
    const result = await ws.call('delete_file', { path: 'x.sh' })
    expect(tarMetadata(result.data!.trashedTo as string).mode).toBe(0o750)
  })
})
