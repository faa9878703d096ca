/**
 * The data directory is trusted only as far as nobody else can have written it (issue 26, item 2):
 * one another user made first, or one others may write to, is refused with the fix named, so a
 * history entry and an archive planted there never reach the project through the user's own undo;
 * a name read from it never leaves its folder; and a data directory swapped after it was checked
 * is never the one used. Tests run as root: "another user" is uid 65534 (nobody).
 */
import { chmodSync, existsSync, lchownSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace, type ToolResult } from 'agent-fs-tools'
import { tempWorkspaceDirs } from './helpers/temp.js'
import { ALL } from './helpers/trash.js'
import { skipOnWindows } from './helpers/skip.js'

const asRoot = process.getuid?.() === 0
const HOOK = '.git/hooks/pre-commit'

function open(root: string, dataDir: string): Workspace {
  return new Workspace({ root, trash: { dataDir }, permissions: ALL, confirm: () => true })
}

function ok(result: ToolResult): ToolResult {
  expect(result.status, result.output).toBe('ok')
  return result
}

/** Gives `path` and everything beneath it to `uid`. */
function chownTree(path: string, uid: number): void {
  lchownSync(path, uid, uid)
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name), uid)
}

/** Every directory in `dir` (itself included). */
function dirsIn(dir: string): string[] {
  const found = [dir]
  for (const name of readdirSync(dir)) if (statSync(join(dir, name)).isDirectory()) found.push(...dirsIn(join(dir, name)))
  return found
}

/**
 * What another user who made the data directory first plants in it: a history entry saying the
 * project's git hook was deleted, and the archive that takes it back — made here by a workspace
 * over the same root, as the planter can make them byte for byte.
 */
async function plantDeletedHook(root: string, dataDir: string): Promise<void> {
  const planter = open(root, dataDir)
  ok(await planter.call('write_file', { path: HOOK, content: '#!/bin/sh\necho planted\n' }))
  chmodSync(join(root, HOOK), 0o755)
  ok(await planter.call('delete_file', { path: HOOK }))
  expect(existsSync(join(root, HOOK))).toBe(false)
  // A planter leaves no journal (nor its key) and no audit log: the user's workspace makes them.
  for (const dir of ['journal', 'audit']) rmSync(join(dataDir, dir), { recursive: true, force: true })
}

describe('a data directory someone else could have written is refused', () => {
  it.skipIf(!asRoot)('one another user made first: the planted history entry writes no git hook', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    await plantDeletedHook(root, dataDir)
    chownTree(dataDir, 65534)
    const ws = open(root, dataDir)
    const undone = await ws.undo()
    expect(undone).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
    expect(undone.output).toContain(`the data directory ${dataDir} is owned by another user (uid 65534; this process runs as uid 0)`)
    expect(undone.output).toContain('Choose another data directory (trash.dataDir, or AGENT_FS_TOOLS_DATA_DIR)')
    expect(existsSync(join(root, HOOK))).toBe(false)
    // Nothing else reads it either, and a change that needs the trash is refused before it starts.
    await expect(ws.history()).rejects.toThrow('is owned by another user')
    const listed = await ws.call('trash_list', {})
    expect(listed).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
    writeFileSync(join(root, 'kept.txt'), 'mine\n')
    // Read first, so the write is refused for the data directory, not as a blind overwrite.
    ok(await ws.call('read_file', { path: 'kept.txt' }))
    const overwrite = await ws.call('write_file', { path: 'kept.txt', content: 'new\n' })
    expect(overwrite).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
    expect(overwrite.output).toContain('nothing was changed')
    expect(readFileSync(join(root, 'kept.txt'), 'utf8')).toBe('mine\n')
  })

  it('one others may write to (the data directory, or any directory in it): refused until chmod go-w', async () => {
    skipOnWindows('on Windows who may write a directory is its access list: scripts/windows/data-dir-acl.mjs checks it')
    const { root, dataDir } = tempWorkspaceDirs()
    await plantDeletedHook(root, dataDir)
    for (const dir of dirsIn(dataDir)) {
      for (const mode of [0o777, 0o775, 0o1777]) {
        chmodSync(dir, mode)
        const undone = await open(root, dataDir).undo()
        expect(undone, `${dir} ${mode.toString(8)}`).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
        expect(undone.output).toContain(`${dir} can be written by others (mode ${mode.toString(8).padStart(4, '0')})`)
        expect(undone.output).toContain(`Run chmod go-w ${dir}`)
        expect(existsSync(join(root, HOOK))).toBe(false)
      }
      chmodSync(dir, 0o700)
    }
    // Once private, it is the user's own history: its undo is theirs to make.
    ok(await open(root, dataDir).undo())
    expect(existsSync(join(root, HOOK))).toBe(true)
  })

  it.skipIf(!asRoot)('a history log or an archive another user owns, in directories of ours, is refused', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    await plantDeletedHook(root, dataDir)
    const [bucket] = readdirSync(join(dataDir, 'trash'))
    const [historyDir] = readdirSync(join(dataDir, 'history'))
    const log = join(dataDir, 'history', historyDir!, 'changes.jsonl')
    lchownSync(log, 65534, 65534)
    const undone = await open(root, dataDir).undo()
    expect(undone).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
    expect(undone.output).toContain(`the file ${log} is owned by another user`)
    lchownSync(log, 0, 0)
    const [archive] = readdirSync(join(dataDir, 'trash', bucket!))
    lchownSync(join(dataDir, 'trash', bucket!, archive!), 65534, 65534)
    const ws = open(root, dataDir)
    const again = await ws.undo()
    expect(again.status, again.output).toBe('error')
    expect(existsSync(join(root, HOOK))).toBe(false)
    const restored = await ws.call('restore_file', { trashedPath: join(dataDir, 'trash', bucket!, archive!) })
    expect(restored).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
    expect(restored.output).toContain('is owned by another user')
    expect(existsSync(join(root, HOOK))).toBe(false)
  })
})

describe('names read from the data directory', () => {
  it('a delta named with ../ is never read from outside the deltas folder', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const ws = open(root, dataDir)
    writeFileSync(join(root, 'a.txt'), 'one\ntwo\n')
    ok(await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'two', newString: 'TWO' }] }))
    const [historyDir] = readdirSync(join(dataDir, 'history'))
    const history = join(dataDir, 'history', historyDir!)
    const [delta] = readdirSync(join(history, 'deltas'))
    // The delta is moved out of its folder and the record names it there through `..`.
    renameSync(join(history, 'deltas', delta!), join(history, 'outside.delta'))
    const log = join(history, 'changes.jsonl')
    writeFileSync(log, readFileSync(log, 'utf8').replace(`"delta":"${delta}"`, '"delta":"../outside.delta"'))
    const undone = await open(root, dataDir).undo()
    expect(undone).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(undone.output).toContain(`its record names "../outside.delta" as what takes ${join(root, 'a.txt')} back`)
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\nTWO\n')
  })
})

describe('a data directory swapped after it was checked', () => {
  it('is never the one used: the workspace keeps the directory it checked', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const ws = open(root, dataDir)
    writeFileSync(join(root, 'a.txt'), 'mine\n')
    const trashed = ok(await ws.call('delete_file', { path: 'a.txt' }))
    const archive = trashed.data!.trashedTo as string
    // Another data directory, made by the same user (it passes every check), with an archive of
    // other content under the same name, takes the checked one's place.
    const other = tempWorkspaceDirs()
    const planter = open(root, other.dataDir)
    writeFileSync(join(root, 'a.txt'), 'swapped in\n')
    const planted = ok(await planter.call('delete_file', { path: 'a.txt' })).data!.trashedTo as string
    renameSync(planted, join(other.dataDir, archive.slice(dataDir.length)))
    renameSync(dataDir, `${dataDir}.moved`)
    renameSync(other.dataDir, dataDir)

    if (process.platform === 'win32') {
      // Windows does not hold the data directory between calls (docs/windows.md, "What Windows
      // cannot keep", 10): the one swapped in is refused, and used for nothing.
      await expect(ws.trashList()).rejects.toThrow('is not the directory this workspace checked')
      const refused = await ws.call('restore_file', { trashedPath: archive })
      expect(refused.status).toBe('error')
      expect(refused.output).toContain('is not the directory this workspace checked')
      expect(existsSync(join(root, 'a.txt'))).toBe(false)
      expect(existsSync(archive)).toBe(true)
      return
    }
    const listed = (await ws.trashList()).map((e) => e.archivePath)
    expect(listed).toEqual([archive])
    const restored = await ws.call('restore_file', { trashedPath: archive })
    expect(restored.status, restored.output).toBe('ok')
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('mine\n')
    expect(existsSync(`${dataDir}.moved${archive.slice(dataDir.length)}`)).toBe(false)
    expect(existsSync(archive)).toBe(true)
    // Its undo and history are the checked directory's too: the undo of the restore puts the
    // file back in the trash it holds, beside nothing of the swapped-in one.
    ok(await ws.undo())
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(readdirSync(dirname(`${dataDir}.moved${archive.slice(dataDir.length)}`))).toHaveLength(1)
    expect(readdirSync(dirname(archive))).toEqual([basename(archive)])
    expect((await ws.history()).map((c) => c.tool)).toEqual(['undo', 'restore_file', 'delete_file'])
  })
})
