/** `remove_dir` (../docs/permissions-and-prompts.md, ../docs/tools.md#remove_dir, ../docs/trash.md): empty dirs, recursive into one archive, DANGEROUS_PATH, errors, permissions. */
import { chmodSync, existsSync, lstatSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { mkfifo, read, siblingDir, writeTree } from './helpers/files.js'
import { ALL, archiveNames, bucketDir, recorder, snapshot, tarList, tarMetadata } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

/** A tree with nested dirs, an empty dir, a symlink (and a dangling one) and an executable. */
function buildTree(dir: string): void {
  writeTree(dir, {
    'README.md': '# readme\n',
    'src/main.rs': 'fn main() {}\n',
    'src/deep/er/leaf.bin': Buffer.from([0, 1, 2, 255, 254, 0]),
    'bin/run.sh': '#!/bin/sh\necho hi\n',
  })
  mkdirSync(join(dir, 'empty'))
  chmodSync(join(dir, 'bin/run.sh'), 0o755)
  chmodSync(join(dir, 'src/main.rs'), 0o600)
  chmodSync(join(dir, 'src/deep'), 0o750)
  symlinkOrSkip('../README.md', join(dir, 'src/readme-link'))
  symlinkOrSkip('nowhere/at/all', join(dir, 'dangling'))
  utimesSync(join(dir, 'README.md'), 1_500_000_000, 1_500_000_000.25)
  utimesSync(join(dir, 'src/deep/er'), 1_400_000_000, 1_400_000_000)
}

describe('remove_dir non-recursive', () => {
  it('removes an empty directory with cwdRemoveDir, no prompt, no archive', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdRemoveDir: true }, confirm })
    mkdirSync(join(root, 'a/empty'), { recursive: true })
    const result = await ws.call('remove_dir', { path: 'a/empty' })
    expect(result.status).toBe('ok')
    expect(result.output.startsWith(`Removed ${join(root, 'a/empty')}`)).toBe(true)
    expect(result.output).not.toContain('recursively')
    expect(result.data).toMatchObject({ recursive: false })
    expect(existsSync(join(root, 'a/empty'))).toBe(false)
    expect(existsSync(join(root, 'a'))).toBe(true)
    expect(confirm).not.toHaveBeenCalled()
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('a non-empty directory: NOT_EMPTY with the documented message, nothing asked', async () => {
    const confirm = vi.fn(() => true)
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm })
    writeTree(root, { 'full/a.txt': 'a' })
    const result = await ws.call('remove_dir', { path: 'full' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_EMPTY' })
    expect(result.output).toContain(`${join(root, 'full')} is not empty, pass recursive: true to remove the entire tree`)
    expect(read(join(root, 'full/a.txt'))).toBe('a')
    expect(confirm).not.toHaveBeenCalled()
  })

  it('a directory holding only an empty subdirectory is not empty', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    mkdirSync(join(root, 'a/b'), { recursive: true })
    expect((await ws.call('remove_dir', { path: 'a' })).code).toBe('NOT_EMPTY')
    expect(existsSync(join(root, 'a/b'))).toBe(true)
  })

  it('missing: NOT_FOUND `<abs> does not exist`', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const result = await ws.call('remove_dir', { path: 'nope' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(`${join(root, 'nope')} does not exist`)
  })

  it('a file: `<abs> is a file, use delete_file instead`, with the configured delete tool name', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'f.txt': 'f' })
    for (const recursive of [false, true]) {
      const result = await ws.call('remove_dir', { path: 'f.txt', recursive })
      expect(result.status).toBe('error')
      expect(result.code).toBe('NOT_A_DIRECTORY')
      expect(result.output).toContain(`${join(root, 'f.txt')} is a file, use delete_file instead`)
    }
    expect(read(join(root, 'f.txt'))).toBe('f')

    const renamed = tempWorkspace({ permissions: ALL, tools: { delete_file: { name: 'remove_file' } } })
    writeTree(renamed.root, { 'f.txt': 'f' })
    const r = await renamed.ws.call('remove_dir', { path: 'f.txt' })
    expect(r.output).toContain(`${join(renamed.root, 'f.txt')} is a file, use remove_file instead`)
  })

  it('a symlink to a directory is refused; neither the link nor its target is touched', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeTree(root, { 'real/a.txt': 'a' })
    symlinkOrSkip('real', join(root, 'link'))
    for (const recursive of [false, true]) {
      const result = await ws.call('remove_dir', { path: 'link', recursive })
      expect(result.status).toBe('error')
      expect(result.output).toContain('delete_file')
    }
    expect(lstatSync(join(root, 'link')).isSymbolicLink()).toBe(true)
    expect(read(join(root, 'real/a.txt'))).toBe('a')
  })

  it('bad arguments: INVALID_ARGUMENTS naming the field', async () => {
    const { ws } = tempWorkspace({ permissions: ALL })
    expect((await ws.call('remove_dir' as string, {})).code).toBe('INVALID_ARGUMENTS')
    const r = await ws.call('remove_dir' as string, { path: 'x', recursive: 1 })
    expect(r.code).toBe('INVALID_ARGUMENTS')
    expect(r.output).toContain('recursive')
  })

  it('formatCall: path / path (recursive)', () => {
    const { ws } = tempWorkspace()
    expect(ws.formatCall('remove_dir', { path: 'build' })).toBe('build')
    expect(ws.formatCall('remove_dir', { path: 'build', recursive: true })).toBe('build (recursive)')
    expect(ws.formatCall('remove_dir', { path: 'build', recursive: false })).toBe('build')
  })
})

describe('remove_dir recursive', () => {
  it('moves the whole tree into one archive; output says recursively and names the archive', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => true })
    buildTree(join(root, 'proj'))
    const result = await ws.call('remove_dir', { path: 'proj', recursive: true })
    expect(result.status).toBe('ok')
    expect(existsSync(join(root, 'proj'))).toBe(false)
    const trashedTo = result.data!.trashedTo as string
    expect(result.data).toMatchObject({ recursive: true })
    expect(result.output.startsWith(`Removed ${join(root, 'proj')} recursively`)).toBe(true)
    expect(result.output).toContain(trashedTo)
    expect(archiveNames(dataDir, root)).toHaveLength(1)
    expect(dirname(trashedTo)).toBe(bucketDir(dataDir, root))
    const meta = tarMetadata(trashedTo)
    expect(meta).toMatchObject({ kind: 'directory', relativePath: 'proj', originalPath: join(root, 'proj'), fileCount: 4 })
    const entries = tarList(trashedTo).map((e) => e.replace(/\/$/, ''))
    expect(entries[0]).toBe('metadata.json')
    expect(entries[1]).toBe('proj')
    for (const e of ['proj/empty', 'proj/src/deep/er/leaf.bin', 'proj/src/readme-link', 'proj/bin/run.sh', 'proj/dangling']) {
      expect(entries).toContain(e)
    }
  })

  it('round trip: remove_dir recursive → restore_file gives back the identical tree', async () => {
    const { ws, root } = tempWorkspace({ confirm: () => true })
    const tree = join(root, 'proj')
    buildTree(tree)
    utimesSync(tree, 1_300_000_000, 1_300_000_000)
    const before = snapshot(tree)
    const removed = await ws.call('remove_dir', { path: 'proj', recursive: true })
    expect(removed.status).toBe('ok')
    const restored = await ws.call('restore_file', { trashedPath: removed.data!.trashedTo as string })
    expect(restored.status).toBe('ok')
    expect(restored.data).toMatchObject({ kind: 'directory' })
    const after = snapshot(tree)
    expect(Object.keys(after)).toEqual(Object.keys(before))
    // Paths, types, modes, bytes and link targets.
    const shape = (s: typeof before) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, { ...v, mtimeNs: undefined }]))
    expect(shape(after)).toEqual(shape(before))
    expect(after['bin/run.sh']!.mode).toBe(0o755)
    expect(after['src/readme-link']).toMatchObject({ type: 'symlink', link: '../README.md' })
    expect(after['empty']!.type).toBe('dir')
    expect(read(join(tree, 'src/readme-link'))).toBe('# readme\n')
    // mtimes kept (files, dirs and the tree's root).
    expect(after['README.md']!.mtimeNs).toBe(before['README.md']!.mtimeNs)
    expect(after['src/deep/er']!.mtimeNs).toBe(before['src/deep/er']!.mtimeNs)
    expect(after['']!.mtimeNs).toBe(before['']!.mtimeNs)
  })

  it('an empty directory with recursive: true goes to the trash too', async () => {
    const { ws, root } = tempWorkspace({ confirm: () => true })
    mkdirSync(join(root, 'e'))
    const result = await ws.call('remove_dir', { path: 'e', recursive: true })
    expect(result.status).toBe('ok')
    expect(tarMetadata(result.data!.trashedTo as string)).toMatchObject({ kind: 'directory', fileCount: 0, size: 0 })
  })

  it('permanent: true removes the tree without an archive', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => true })
    buildTree(join(root, 'proj'))
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'keep.txt'), 'keep')
    symlinkOrSkip(outside, join(root, 'proj/out-link'))
    const result = await ws.call('remove_dir', { path: 'proj', recursive: true, permanent: true })
    expect(result.status).toBe('ok')
    expect(existsSync(join(root, 'proj'))).toBe(false)
    expect(archiveNames(dataDir, root)).toEqual([])
    expect(result.data?.trashedTo).toBeUndefined()
    // A symlink inside the tree is removed as a link, never followed.
    expect(read(join(outside, 'keep.txt'))).toBe('keep')
  })

  it('a symlink inside the tree pointing outside is archived as a link; the outside stays', async () => {
    const { ws, root } = tempWorkspace({ confirm: () => true })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'keep.txt'), 'keep')
    writeTree(root, { 'd/a.txt': 'a' })
    symlinkOrSkip(outside, join(root, 'd/out'))
    const result = await ws.call('remove_dir', { path: 'd', recursive: true })
    expect(result.status).toBe('ok')
    expect(read(join(outside, 'keep.txt'))).toBe('keep')
    expect(tarList(result.data!.trashedTo as string)).not.toContain('d/out/keep.txt')
  })

  it('a tree holding a FIFO: NOT_A_REGULAR_FILE and nothing removed', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => true })
    writeTree(root, { 'd/a.txt': 'a' })
    mkfifo(join(root, 'd/pipe'))
    const result = await ws.call('remove_dir', { path: 'd', recursive: true })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
    expect(read(join(root, 'd/a.txt'))).toBe('a')
    expect(lstatSync(join(root, 'd/pipe')).isFIFO()).toBe(true)
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('a tree outside root (global scope) is archived under absolute/', async () => {
    const { ws, root } = tempWorkspace({ confirm: () => true })
    const outside = siblingDir(root)
    writeTree(outside, { 'gone/x.txt': 'x' })
    const result = await ws.call('remove_dir', { path: join(outside, 'gone'), recursive: true })
    expect(result.status).toBe('ok')
    expect(existsSync(join(outside, 'gone'))).toBe(false)
    const rel = `absolute/${join(outside, 'gone').slice(1)}`
    expect(tarMetadata(result.data!.trashedTo as string).relativePath).toBe(rel)
    expect(tarList(result.data!.trashedTo as string)).toContain(`${rel}/x.txt`)
  })
})

describe('remove_dir permissions and confirmation', () => {
  it('not granted: asks `Remove directory?` with the absolute path as detail; denial text; kept', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdRemoveFile: true, cwdWriteFile: true } })
    mkdirSync(join(root, 'e'))
    const result = await ws.call('remove_dir', { path: 'e' })
    expect(result.status).toBe('denied')
    expect(result.output).toContain('The user denied this remove.')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ tool: 'remove_dir', label: 'Remove directory?', path: join(root, 'e'), detail: join(root, 'e') })
    expect(requests[0]!.recursive).toBeUndefined()
    expect(requests[0]!.permanent).toBeUndefined()
    expect(existsSync(join(root, 'e'))).toBe(true)
  })

  it('prompted and approved: removed', async () => {
    const { confirm, requests } = recorder(true)
    const { ws, root } = tempWorkspace({ confirm })
    mkdirSync(join(root, 'e'))
    expect((await ws.call('remove_dir', { path: 'e' })).status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(existsSync(join(root, 'e'))).toBe(false)
  })

  it('global scope: cwdRemoveDir does not cover a directory outside root; globalRemoveDir does', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdRemoveDir: true } })
    const outside = siblingDir(root)
    mkdirSync(join(outside, 'e'))
    expect((await ws.call('remove_dir', { path: join(outside, 'e') })).status).toBe('denied')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ label: 'Remove directory?', detail: `${join(outside, 'e')}\nOutside the project (${root}): ${join(outside, 'e')}` })
    expect(existsSync(join(outside, 'e'))).toBe(true)
    const granted = await ws.call('remove_dir', { path: join(outside, 'e') }, { permissions: { globalRemoveDir: true } })
    expect(granted.status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(existsSync(join(outside, 'e'))).toBe(false)
  })

  it('globalRemoveDir does not cover a directory inside root', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { globalRemoveDir: true } })
    mkdirSync(join(root, 'e'))
    expect((await ws.call('remove_dir', { path: 'e' })).status).toBe('denied')
    expect(requests).toHaveLength(1)
  })

  it('recursive always asks, even with every permission, in cwd and global scope; label and detail', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: ALL })
    writeTree(root, { 'd/a.txt': 'a' })
    const outside = siblingDir(root)
    writeTree(outside, { 'g/b.txt': 'b' })
    const inside = await ws.call('remove_dir', { path: 'd', recursive: true })
    const global = await ws.call('remove_dir', { path: join(outside, 'g'), recursive: true })
    expect(inside.status).toBe('denied')
    expect(global.status).toBe('denied')
    expect(inside.output).toContain('The user denied this remove.')
    expect(requests).toHaveLength(2)
    expect(requests[0]).toMatchObject({
      tool: 'remove_dir',
      label: 'Remove directory recursively?',
      path: join(root, 'd'),
      detail: `${join(root, 'd')} (recursive): 1 file, 1 byte`,
      recursive: true,
    })
    expect(requests[0]!.permanent).toBeUndefined()
    expect(requests[1]).toMatchObject({
      label: 'Remove directory recursively?',
      detail: `${join(outside, 'g')} (recursive): 1 file, 1 byte\nOutside the project (${root}): ${join(outside, 'g')}`,
      recursive: true,
    })
    expect(read(join(root, 'd/a.txt'))).toBe('a')
    expect(read(join(outside, 'g/b.txt'))).toBe('b')
  })

  it('recursive on an empty directory still asks', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: ALL })
    mkdirSync(join(root, 'e'))
    expect((await ws.call('remove_dir', { path: 'e', recursive: true })).status).toBe('denied')
    expect(requests).toHaveLength(1)
    expect(existsSync(join(root, 'e'))).toBe(true)
  })

  it('permanent always asks, even non-recursive with every permission; detail has (permanent)', async () => {
    const { confirm, requests } = recorder(false)
    const { ws, root } = tempWorkspace({ confirm, permissions: ALL })
    mkdirSync(join(root, 'e'))
    writeTree(root, { 'd/a.txt': 'a' })
    expect((await ws.call('remove_dir', { path: 'e', permanent: true })).status).toBe('denied')
    expect((await ws.call('remove_dir', { path: 'd', recursive: true, permanent: true })).status).toBe('denied')
    expect(requests).toHaveLength(2)
    expect(requests[0]).toMatchObject({ label: 'Remove directory?', detail: `${join(root, 'e')} (permanent)`, permanent: true })
    expect(requests[1]).toMatchObject({
      label: 'Remove directory recursively?',
      detail: `${join(root, 'd')} (recursive) (permanent): 1 file, 1 byte`,
      recursive: true,
      permanent: true,
    })
    expect(existsSync(join(root, 'e'))).toBe(true)
    expect(read(join(root, 'd/a.txt'))).toBe('a')
  })

  it('a confirm handler that throws counts as no', async () => {
    const { ws, root } = tempWorkspace({
      confirm: () => {
        throw new Error('boom')
      },
    })
    writeTree(root, { 'd/a.txt': 'a' })
    expect((await ws.call('remove_dir', { path: 'd', recursive: true })).status).toBe('denied')
    expect(read(join(root, 'd/a.txt'))).toBe('a')
  })
})

describe('remove_dir DANGEROUS_PATH (decided before any prompt)', () => {
  async function expectDangerous(ws: Workspace, confirm: ReturnType<typeof vi.fn>, path: string): Promise<void> {
    for (const args of [{ path }, { path, recursive: true }, { path, recursive: true, permanent: true }]) {
      const result = await ws.call('remove_dir', args)
      expect(result.status, `${path} ${JSON.stringify(args)}`).toBe('error')
      expect(result.code, path).toBe('DANGEROUS_PATH')
    }
    expect(confirm).not.toHaveBeenCalled()
  }

  it('the filesystem root', async () => {
    // The handler says no: even a bug past the check could not remove anything.
    const confirm = vi.fn(() => false)
    const { ws } = tempWorkspace({ permissions: ALL, confirm })
    await expectDangerous(ws, confirm, '/')
  })

  it('the home directory (never actually removed: the handler would say no)', async () => {
    const confirm = vi.fn(() => false)
    const { ws } = tempWorkspace({ permissions: ALL, confirm })
    const home = homedir()
    expect(existsSync(home)).toBe(true)
    await expectDangerous(ws, confirm, home)
    await expectDangerous(ws, confirm, '~/')
    expect(existsSync(home)).toBe(true)
  })

  it('the workspace root, as absolute and as `.`', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm })
    writeTree(root, { 'a.txt': 'a' })
    await expectDangerous(ws, confirm, root)
    await expectDangerous(ws, confirm, '.')
    expect(read(join(root, 'a.txt'))).toBe('a')
  })

  it('the root, reached from a pushed cwd with `..`', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm })
    mkdirSync(join(root, 'sub'))
    expect((await ws.call('cwd_push', { path: 'sub' })).status).toBe('ok')
    await expectDangerous(ws, confirm, '..')
  })

  it('an ancestor of root', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm })
    await expectDangerous(ws, confirm, dirname(root))
    await expectDangerous(ws, confirm, '..')
    await expectDangerous(ws, confirm, dirname(dirname(root)))
    expect(existsSync(root)).toBe(true)
  })

  it('the ancestor of a root given through a symlink (canonical comparison)', async () => {
    const dirs = tempWorkspaceDirs()
    const alias = join(dirname(dirs.root), 'alias')
    symlinkOrSkip(dirs.root, alias)
    const confirm = vi.fn(() => false)
    const ws = new Workspace({ root: alias, trash: { dataDir: dirs.dataDir }, permissions: ALL, confirm })
    await expectDangerous(ws, confirm, dirs.root)
  })

  it('the trash directory, its bucket, and a data dir that contains it', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm })
    writeTree(root, { 'a.txt': 'a' })
    expect((await ws.call('delete_file', { path: 'a.txt' })).status).toBe('ok')
    await expectDangerous(ws, confirm, join(dataDir, 'trash'))
    await expectDangerous(ws, confirm, bucketDir(dataDir, root))
    await expectDangerous(ws, confirm, dataDir)
    expect(archiveNames(dataDir, root)).toHaveLength(1)
  })

  it('a data dir inside root: the directory holding it is refused', async () => {
    const dirs = tempWorkspaceDirs()
    const dataDir = join(dirs.root, 'state/.agent-data')
    mkdirSync(dataDir, { recursive: true })
    const confirm = vi.fn(() => false)
    const ws = new Workspace({ root: dirs.root, trash: { dataDir }, permissions: ALL, confirm })
    await expectDangerous(ws, confirm, 'state')
    await expectDangerous(ws, confirm, 'state/.agent-data')
    expect(existsSync(dataDir)).toBe(true)
  })
})
