/**
 * History and undo (../docs/history-and-undo.md) through the public API, on real temporary directories: for every
 * tool that changes something, change → undo gives back the exact tree (content, modes, kinds,
 * links); conflicts refuse and change nothing; redo, session undo, dry run, confirm, restart and
 * trashClear behave as ../docs/history-and-undo.md says.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { Workspace, type ToolResult } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { ALL, recorder, snapshot, type Node } from './helpers/trash.js'
import { scaled } from './helpers/time.js'
import { symlinkOrSkip } from './helpers/links.js'
import { NO_UNIX_MODES, skipOnWindows } from './helpers/skip.js'

/** A tree as undo must give it back: kind, mode, content, link target (times are not compared). */
function tree(root: string): Record<string, Omit<Node, 'mtimeNs'>> {
  const out: Record<string, Omit<Node, 'mtimeNs'>> = {}
  for (const [path, { mtimeNs: _, ...rest }] of Object.entries(snapshot(root))) out[path] = rest
  return out
}

function ok(result: ToolResult): ToolResult {
  expect(result.output).not.toMatch(/^Error/)
  expect(result.status, result.output).toBe('ok')
  return result
}

function setup(files: (root: string) => void = () => {}) {
  const made = tempWorkspace({ permissions: ALL, confirm: () => true })
  files(made.root)
  return { ...made, before: tree(made.root) }
}

describe('change → undo gives back the exact tree', () => {
  const cases: Array<{
    name: string
    files?: (root: string) => void
    change: (ws: Workspace, root: string) => Promise<ToolResult>
  }> = [
    {
      name: 'write_file of a new file',
      change: (ws) => ws.call('write_file', { path: 'new.txt', content: 'hello\n' }),
    },
    {
      name: 'write_file over a file (its mode kept)',
      files: (root) => {
        writeFileSync(join(root, 'a.sh'), '#!/bin/sh\necho old\n')
        chmodSync(join(root, 'a.sh'), 0o750)
      },
      change: async (ws) => {
        await ws.call('read_file', { path: 'a.sh' })
        return ws.call('write_file', { path: 'a.sh', content: 'echo new\n' })
      },
    },
    {
      name: 'edit_file of a CRLF file with a BOM',
      files: (root) => writeFileSync(join(root, 'w.txt'), '\ufeffone\r\ntwo\r\nthree\r\n'),
      change: (ws) => ws.call('edit_file', { path: 'w.txt', edits: [{ oldString: 'two', newString: 'TWO\nand more' }] }),
    },
    {
      name: 'append_file',
      files: (root) => writeFileSync(join(root, 'log.txt'), 'first\n'),
      change: (ws) => ws.call('append_file', { path: 'log.txt', content: 'second\n' }),
    },
    {
      name: 'append_file creating the file',
      change: (ws) => ws.call('append_file', { path: 'fresh.log', content: 'only\n' }),
    },
    {
      name: 'delete_file of a file',
      files: (root) => {
        writeFileSync(join(root, 'gone.bin'), Buffer.from([0, 1, 2, 255]))
        chmodSync(join(root, 'gone.bin'), 0o600)
      },
      change: (ws) => ws.call('delete_file', { path: 'gone.bin' }),
    },
    {
      name: 'delete_file of a symlink',
      files: (root) => symlinkOrSkip('does/not/exist', join(root, 'link')),
      change: (ws) => ws.call('delete_file', { path: 'link' }),
    },
    {
      name: 'remove_dir of a tree with links, modes and a sparse file',
      files: (root) => {
        mkdirSync(join(root, 'tree/sub'), { recursive: true })
        writeFileSync(join(root, 'tree/a.txt'), 'a\n')
        writeFileSync(join(root, 'tree/sub/b.txt'), 'b\n')
        chmodSync(join(root, 'tree/sub'), 0o711)
        symlinkOrSkip('../a.txt', join(root, 'tree/sub/to-a'))
        writeFileSync(join(root, 'tree/sparse'), '')
        truncateSync(join(root, 'tree/sparse'), 8 << 20)
      },
      change: (ws) => ws.call('remove_dir', { path: 'tree', recursive: true }),
    },
    {
      name: 'remove_dir of an empty directory',
      files: (root) => {
        mkdirSync(join(root, 'empty'))
        chmodSync(join(root, 'empty'), 0o705)
      },
      change: (ws) => ws.call('remove_dir', { path: 'empty' }),
    },
    {
      name: 'move_file of a file',
      files: (root) => writeFileSync(join(root, 'from.txt'), 'moving\n'),
      change: (ws) => ws.call('move_file', { source: 'from.txt', destination: 'to.txt' }),
    },
    {
      name: 'move_file of a directory over an existing file',
      files: (root) => {
        mkdirSync(join(root, 'd/e'), { recursive: true })
        writeFileSync(join(root, 'd/e/x'), 'x\n')
        writeFileSync(join(root, 'target'), 'replaced\n')
      },
      change: (ws) => ws.call('move_file', { source: 'd', destination: 'target', overwrite: true }),
    },
    {
      name: 'create_directory',
      change: (ws) => ws.call('create_directory', { path: 'made' }),
    },
    {
      name: 'apply_patch adding, updating, deleting and moving files',
      files: (root) => {
        writeFileSync(join(root, 'upd.txt'), 'one\ntwo\n')
        writeFileSync(join(root, 'del.txt'), 'bye\n')
        writeFileSync(join(root, 'mv.txt'), 'keep\nme\n')
        chmodSync(join(root, 'mv.txt'), 0o640)
      },
      change: (ws) =>
        ws.call('apply_patch', {
          input: [
            '*** Begin Patch',
            '*** Add File: added.txt',
            '+brand new',
            '*** Update File: upd.txt',
            '@@',
            ' one',
            '-two',
            '+TWO',
            '*** Delete File: del.txt',
            '*** Update File: mv.txt',
            '*** Move to: moved.txt',
            '@@',
            ' keep',
            '-me',
            '+you',
            '*** End Patch',
          ].join('\n'),
        }),
    },
  ]

  for (const c of cases) {
    it(c.name, async () => {
      const { ws, root, before } = setup(c.files)
      const changed = ok(await c.change(ws, root))
      expect(changed.data?.changeId).toEqual(expect.any(String))
      expect(tree(root)).not.toEqual(before)
      const undone = ok(await ws.undo())
      expect(undone.data?.undoes).toEqual([changed.data?.changeId])
      expect(tree(root)).toEqual(before)
      const [latest, original] = await ws.history()
      expect(latest).toMatchObject({ id: undone.data?.changeId, tool: 'undo', undoes: [changed.data?.changeId], undoable: true })
      expect(original).toMatchObject({ id: changed.data?.changeId, undoable: false, undoneBy: latest!.id })
    })
  }

  it('restore_file (the restored entry goes back to the trash)', async () => {
    const { ws, root } = setup((r) => writeFileSync(join(r, 'r.txt'), 'restore me\n'))
    const deleted = ok(await ws.call('delete_file', { path: 'r.txt' }))
    const trashed = tree(root)
    ok(await ws.call('restore_file', { trashedPath: deleted.data?.trashedTo as string }))
    expect(readFileSync(join(root, 'r.txt'), 'utf8')).toBe('restore me\n')
    ok(await ws.undo())
    expect(tree(root)).toEqual(trashed)
  })
})

describe('redo, conflicts and sessions', () => {
  it('undoing an undo redoes the change', async () => {
    const { ws, root } = setup((r) => writeFileSync(join(r, 'a.txt'), 'one\n'))
    ok(await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'one', newString: 'two' }] }))
    const after = tree(root)
    const undo = ok(await ws.undo())
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\n')
    ok(await ws.undo({ id: undo.data?.changeId as string }))
    expect(tree(root)).toEqual(after)
    // And the change can be undone again.
    ok(await ws.undo())
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\n')
  })

  it('walks back past what an earlier undo put back under a new inode (a recreated directory, a moved tree)', async () => {
    const { ws, root, before } = setup()
    ok(await ws.call('create_directory', { path: 'd' }))
    ok(await ws.call('remove_dir', { path: 'd' }))
    ok(await ws.undo()) // d recreated: a new inode
    expect(existsSync(join(root, 'd'))).toBe(true)
    ok(await ws.undo()) // the create_directory, checked against what the undo recorded
    expect(tree(root)).toEqual(before)

    mkdirSync(join(root, 't/u'), { recursive: true })
    writeFileSync(join(root, 't/u/f'), 'f\n')
    const start = tree(root)
    ok(await ws.call('move_file', { source: 't', destination: 'm' }))
    ok(await ws.call('remove_dir', { path: 'm', recursive: true }))
    ok(await ws.undo()) // m restored from the trash: a new inode
    ok(await ws.undo()) // the move goes back
    expect(tree(root)).toEqual(start)
  })

  it('walks back through a delete, its restore_file and the file written before', async () => {
    const { ws, root, before } = setup()
    ok(await ws.call('write_file', { path: 'x.txt', content: 'x\n' }))
    const deleted = ok(await ws.call('delete_file', { path: 'x.txt' }))
    ok(await ws.call('restore_file', { trashedPath: deleted.data?.trashedTo as string }))
    ok(await ws.undo()) // the restore: x.txt back into the trash, to a new archive
    expect(existsSync(join(root, 'x.txt'))).toBe(false)
    // The delete needed the archive the restore consumed; the new one stands in for it.
    expect((await ws.history()).find((c) => c.tool === 'delete_file')).toMatchObject({ undoable: true })
    ok(await ws.undo()) // the delete
    expect(readFileSync(join(root, 'x.txt'), 'utf8')).toBe('x\n')
    ok(await ws.undo()) // the write
    expect(tree(root)).toEqual(before)
  })

  it('removes the parent directories a change made, unless something else is in them now', async () => {
    const { ws, root, before } = setup()
    ok(await ws.call('write_file', { path: 'a/b/c.txt', content: 'c\n' }))
    ok(await ws.call('create_directory', { path: 'x/y/z' }))
    ok(await ws.call('move_file', { source: 'a/b/c.txt', destination: 'm/n/c.txt' }))
    ok(await ws.undo())
    expect(existsSync(join(root, 'm'))).toBe(false)
    ok(await ws.undo())
    expect(existsSync(join(root, 'x'))).toBe(false)
    writeFileSync(join(root, 'a/mine.txt'), 'user\n')
    ok(await ws.undo())
    expect(existsSync(join(root, 'a/b'))).toBe(false)
    expect(readFileSync(join(root, 'a/mine.txt'), 'utf8')).toBe('user\n')
    rmSync(join(root, 'a'), { recursive: true })
    expect(tree(root)).toEqual(before)
  })

  it('refuses with CONFLICT naming the path when the user changed it since, and changes nothing', async () => {
    const { ws, root } = setup((r) => writeFileSync(join(r, 'a.txt'), 'one\n'))
    ok(await ws.call('read_file', { path: 'a.txt' }))
    ok(await ws.call('write_file', { path: 'a.txt', content: 'agent\n' }))
    writeFileSync(join(root, 'a.txt'), 'user edit\n')
    const now = tree(root)
    const refused = await ws.undo()
    expect(refused).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(refused.output).toContain(join(root, 'a.txt'))
    expect(refused.output).toContain('content changed')
    expect(tree(root)).toEqual(now)
  })

  it('refuses with CONFLICT when a file deep inside a restored tree changed since, and changes nothing', async () => {
    const { ws, root } = setup((r) => {
      mkdirSync(join(r, 'pkg/src/deep'), { recursive: true })
      writeFileSync(join(r, 'pkg/src/deep/x.txt'), 'restored\n')
      writeFileSync(join(r, 'pkg/top.txt'), 'top\n')
    })
    const removed = ok(await ws.call('remove_dir', { path: 'pkg', recursive: true }))
    ok(await ws.call('restore_file', { trashedPath: removed.data?.trashedTo as string }))
    // The user changes a file deep inside: the tree keeps its inode, only its digest tells.
    writeFileSync(join(root, 'pkg/src/deep/x.txt'), 'the user was here\n')
    const now = tree(root)
    const trash = await ws.trashList()
    const refused = await ws.undo()
    expect(refused).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(refused.output).toContain(join(root, 'pkg'))
    expect(refused.output).toContain('something inside it changed since')
    expect(tree(root)).toEqual(now)
    expect(await ws.trashList()).toEqual(trash)
    // As the restore left it, the tree goes back to the trash.
    writeFileSync(join(root, 'pkg/src/deep/x.txt'), 'restored\n')
    ok(await ws.undo())
    expect(existsSync(join(root, 'pkg'))).toBe(false)
  })

  it('a later change to the same path must be undone first, and the error says which', async () => {
    const { ws, root } = setup((r) => writeFileSync(join(r, 'a.txt'), 'one\n'))
    const first = ok(await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'one', newString: 'two' }] }))
    const second = ok(await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'two', newString: 'three' }] }))
    const refused = await ws.undo({ id: first.data?.changeId as string })
    expect(refused).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(refused.output).toContain(second.data?.changeId as string)
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('three\n')
    // Walking back one by one works.
    ok(await ws.undo())
    ok(await ws.undo())
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\n')
  })

  it('undo({ sessionId }) takes back every change of the session as one change', async () => {
    const made = tempWorkspace({ permissions: ALL, trash: { sessionId: 'S1' } })
    const { ws, root } = made
    writeFileSync(join(root, 'keep.txt'), 'k\n')
    const before = tree(root)
    ok(await ws.call('create_directory', { path: 'pkg' }))
    ok(await ws.call('write_file', { path: 'pkg/index.ts', content: 'export {}\n' }))
    ok(await ws.call('edit_file', { path: 'pkg/index.ts', edits: [{ oldString: '{}', newString: '{ a }' }] }))
    ok(await ws.call('move_file', { source: 'keep.txt', destination: 'pkg/keep.txt' }))
    ok(await ws.call('delete_file', { path: 'pkg/keep.txt' }))
    const undone = ok(await ws.undo({ sessionId: 'S1' }))
    expect(undone.data?.undoes).toHaveLength(5)
    expect(tree(root)).toEqual(before)
    const history = await ws.history({ sessionId: 'S1' })
    expect(history[0]).toMatchObject({ tool: 'undo', summary: 'undo session S1' })
    expect(history.slice(1).every((c) => c.undoneBy === history[0]!.id)).toBe(true)
    // Redo the whole session.
    ok(await ws.undo({ id: history[0]!.id }))
    expect(existsSync(join(root, 'pkg/index.ts'))).toBe(true)
    expect(readFileSync(join(root, 'pkg/index.ts'), 'utf8')).toBe('export { a }\n')
    expect(existsSync(join(root, 'keep.txt'))).toBe(false)
  })

  it('a session that deleted a file and restored it is undone in one step (the restored file stands in for the archive)', async () => {
    const made = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: 'S2' } })
    const { ws, root } = made
    writeFileSync(join(root, 'x.txt'), 'x\n')
    const before = tree(root)
    const deleted = ok(await ws.call('delete_file', { path: 'x.txt' }))
    ok(await ws.call('restore_file', { trashedPath: deleted.data?.trashedTo as string }))
    ok(await ws.call('edit_file', { path: 'x.txt', edits: [{ oldString: 'x', newString: 'y' }] }))
    ok(await ws.undo({ sessionId: 'S2' }))
    expect(tree(root)).toEqual(before)
  })

  it('reports progress over the paths it takes back, through onProgress', async () => {
    const made = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: 'S3' } })
    for (let i = 0; i < 5; i++) ok(await made.ws.call('write_file', { path: `f${i}.txt`, content: `${i}\n` }))
    const updates: Array<{ done: number; total?: number; unit: string }> = []
    ok(await made.ws.undo({ sessionId: 'S3', onProgress: (p) => updates.push(p) }))
    expect(updates.length).toBeGreaterThan(0)
    expect(updates.at(-1)).toMatchObject({ unit: 'files', total: 5 })
    expect(updates.every((u) => u.done <= 5)).toBe(true)
  })

  it('a directory the change created is removed only if empty', async () => {
    const { ws, root } = setup()
    ok(await ws.call('create_directory', { path: 'made' }))
    writeFileSync(join(root, 'made/user.txt'), 'mine\n')
    const refused = await ws.undo()
    expect(refused).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(refused.output).toContain('not empty')
    expect(readFileSync(join(root, 'made/user.txt'), 'utf8')).toBe('mine\n')
  })

  it('a read-only workspace refuses to undo (READ_ONLY) but can show a dry run', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true })
    ok(await ws.call('write_file', { path: 'a.txt', content: 'a\n' }))
    const readOnly = new Workspace({ root, readOnly: true, trash: { dataDir } })
    expect(await readOnly.undo()).toMatchObject({ status: 'error', code: 'READ_ONLY' })
    ok(await readOnly.undo({ dryRun: true }))
    expect(existsSync(join(root, 'a.txt'))).toBe(true)
  })

  it('history() filters by session and limits, newest first', async () => {
    const { root, dataDir } = tempWorkspace()
    const one = new Workspace({ root, permissions: ALL, trash: { dataDir, sessionId: 'one' } })
    const two = new Workspace({ root, permissions: ALL, trash: { dataDir, sessionId: 'two' } })
    ok(await one.call('write_file', { path: 'a.txt', content: 'a\n' }))
    ok(await two.call('write_file', { path: 'b.txt', content: 'b\n' }))
    ok(await one.call('write_file', { path: 'c.txt', content: 'c\n' }))
    expect((await two.history()).map((c) => c.summary)).toEqual(['c.txt', 'b.txt', 'a.txt'])
    expect((await two.history({ sessionId: 'one' })).map((c) => c.summary)).toEqual(['c.txt', 'a.txt'])
    expect((await two.history({ limit: 1 })).map((c) => c.summary)).toEqual(['c.txt'])
    await expect(two.history({ limit: -1 })).rejects.toThrow(TypeError)
  })

  it('nothing to undo is NOT_FOUND; an unknown id too', async () => {
    const { ws } = setup()
    expect(await ws.undo()).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(await ws.undo({ id: 'c-nope' })).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
  })
})

describe('session undo through trees the session removed, and moves that trade places', () => {
  /** A workspace of session `id` on a small tree: a/x.txt, a/y.txt (0o640), a/sub/z.txt, a link. */
  function sessionSetup(id: string) {
    const made = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: id } })
    const { root } = made
    mkdirSync(join(root, 'a/sub'), { recursive: true })
    writeFileSync(join(root, 'a/x.txt'), 'x one\n')
    writeFileSync(join(root, 'a/y.txt'), 'y one\ny two\n')
    chmodSync(join(root, 'a/y.txt'), 0o640)
    writeFileSync(join(root, 'a/sub/z.txt'), 'z\n')
    symlinkOrSkip('x.txt', join(root, 'a/to-x'))
    chmodSync(join(root, 'a/sub'), 0o750)
    writeFileSync(join(root, 'b.txt'), 'b\n')
    return { ...made, before: tree(root) }
  }

  async function undoSession(ws: Workspace, id: string, root: string, before: ReturnType<typeof tree>, count: number): Promise<void> {
    const after = tree(root)
    const undone = ok(await ws.undo({ sessionId: id }))
    expect(undone.data?.undoes).toHaveLength(count)
    expect(tree(root)).toEqual(before)
    // And the redo gives back the tree as the session left it.
    ok(await ws.undo({ id: undone.data?.changeId as string }))
    expect(tree(root)).toEqual(after)
  }

  it('an empty directory trashed, restored, then removed without an archive', async () => {
    const made = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: 'ED' } })
    const { ws, root } = made
    mkdirSync(join(root, 'empty'))
    chmodSync(join(root, 'empty'), 0o750)
    const before = tree(root)
    const trashed = ok(await ws.call('remove_dir', { path: 'empty', recursive: true }))
    ok(await ws.call('restore_file', { trashedPath: trashed.data?.trashedTo as string }))
    ok(await ws.call('remove_dir', { path: 'empty' }))
    // The restore is checked against the directory the removal's undo brings back, by the digest
    // of an empty directory with its mode.
    await undoSession(ws, 'ED', root, before, 3)
  })

  it('a file written inside a tree the session then removed', async () => {
    const { ws, root, before } = sessionSetup('IN1')
    ok(await ws.call('read_file', { path: 'a/x.txt' }))
    ok(await ws.call('write_file', { path: 'a/x.txt', content: 'x two\n' }))
    ok(await ws.call('write_file', { path: 'a/new.txt', content: 'new\n' }))
    ok(await ws.call('write_file', { path: 'a/deep/er/n.txt', content: 'n\n' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'IN1', root, before, 4)
  })

  it('an edit, a delete, a move out and a new directory inside a tree the session then removed', async () => {
    const { ws, root, before } = sessionSetup('IN2')
    ok(await ws.call('edit_file', { path: 'a/y.txt', edits: [{ oldString: 'y two', newString: 'Y TWO' }] }))
    ok(await ws.call('delete_file', { path: 'a/to-x' }))
    ok(await ws.call('remove_dir', { path: 'a/sub', recursive: true }))
    ok(await ws.call('move_file', { source: 'a/x.txt', destination: 'x-out.txt' }))
    ok(await ws.call('create_directory', { path: 'a/made' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'IN2', root, before, 6)
  })

  it('files moved within a tree the session then removed come back to their places with it', async () => {
    const { ws, root, before } = sessionSetup('IN6')
    ok(await ws.call('move_file', { source: 'a/x.txt', destination: 'a/x2.txt' }))
    ok(await ws.call('move_file', { source: 'a/sub/z.txt', destination: 'a/z.txt' }))
    ok(await ws.call('move_file', { source: 'a/y.txt', destination: 'a/sub/y.txt' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'IN6', root, before, 4)
    // After the redo, the session is undone again, byte for byte.
    ok(await ws.undo({ sessionId: 'IN6' }))
    expect(tree(root)).toEqual(before)
  })

  it('files moved into and within a tree the session then removed come back to their places with it', async () => {
    const { ws, root, before } = sessionSetup('IN5')
    ok(await ws.call('move_file', { source: 'a/sub/z.txt', destination: 'a/z-moved.txt' }))
    ok(await ws.call('move_file', { source: 'b.txt', destination: 'a/b-in.txt' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'IN5', root, before, 3)
    // The changes stand again after the redo: a second session undo takes them back too.
    ok(await ws.undo({ sessionId: 'IN5' }))
    expect(tree(root)).toEqual(before)
  })

  /** A directory `d` beside the tree: a file (0o600), a link and a subdirectory (0o700) in it. */
  function withDirectory(root: string): void {
    mkdirSync(join(root, 'd/inner'), { recursive: true })
    writeFileSync(join(root, 'd/f.txt'), 'f\n')
    chmodSync(join(root, 'd/f.txt'), 0o600)
    symlinkOrSkip('f.txt', join(root, 'd/to-f'))
    writeFileSync(join(root, 'd/inner/g.txt'), 'g\n')
    chmodSync(join(root, 'd/inner'), 0o700)
    chmodSync(join(root, 'd'), 0o750)
  }

  it('a directory moved into a tree the session then removed comes back out of it', async () => {
    const { ws, root } = sessionSetup('ID1')
    withDirectory(root)
    const before = tree(root)
    ok(await ws.call('move_file', { source: 'd', destination: 'a/d-in' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'ID1', root, before, 2)
    // After the redo, the session is undone again, byte for byte.
    ok(await ws.undo({ sessionId: 'ID1' }))
    expect(tree(root)).toEqual(before)
  })

  it('a directory moved into the tree, changed inside there, then the tree removed', async () => {
    const { ws, root } = sessionSetup('ID2')
    withDirectory(root)
    const before = tree(root)
    ok(await ws.call('move_file', { source: 'd', destination: 'a/sub/d-in' }))
    ok(await ws.call('read_file', { path: 'a/sub/d-in/f.txt' }))
    ok(await ws.call('write_file', { path: 'a/sub/d-in/f.txt', content: 'f two\n' }))
    ok(await ws.call('delete_file', { path: 'a/sub/d-in/to-f' }))
    ok(await ws.call('move_file', { source: 'a/sub/d-in/inner/g.txt', destination: 'a/g-out.txt' }))
    ok(await ws.call('write_file', { path: 'a/sub/d-in/new.txt', content: 'new\n' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'ID2', root, before, 6)
    ok(await ws.undo({ sessionId: 'ID2' }))
    expect(tree(root)).toEqual(before)
  })

  it('directories moved within a tree the session then removed come back to their places with it', async () => {
    const { ws, root, before } = sessionSetup('ID3')
    ok(await ws.call('move_file', { source: 'a/sub', destination: 'a/sub2' }))
    ok(await ws.call('move_file', { source: 'a/x.txt', destination: 'a/sub2/x.txt' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'ID3', root, before, 3)
    ok(await ws.undo({ sessionId: 'ID3' }))
    expect(tree(root)).toEqual(before)
  })

  it('a directory moved deeper within a tree the session then removed, and a file out of it', async () => {
    const { ws, root, before } = sessionSetup('ID4')
    ok(await ws.call('move_file', { source: 'a/sub', destination: 'a/other/sub' }))
    ok(await ws.call('move_file', { source: 'a/other/sub/z.txt', destination: 'a/z.txt' }))
    ok(await ws.call('write_file', { path: 'a/other/sub/w.txt', content: 'w\n' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'ID4', root, before, 4)
    ok(await ws.undo({ sessionId: 'ID4' }))
    expect(tree(root)).toEqual(before)
  })

  it('entries moved into a tree from a directory the session removed too go back into it', async () => {
    const { ws, root } = sessionSetup('ID5')
    withDirectory(root)
    const before = tree(root)
    ok(await ws.call('move_file', { source: 'd/f.txt', destination: 'a/f.txt' }))
    ok(await ws.call('move_file', { source: 'd/inner', destination: 'a/sub/inner' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    ok(await ws.call('remove_dir', { path: 'd', recursive: true }))
    await undoSession(ws, 'ID5', root, before, 4)
    ok(await ws.undo({ sessionId: 'ID5' }))
    expect(tree(root)).toEqual(before)
  })

  it('an entry that would come out of a tree that does not come back is not followed: CONFLICT, nothing changed', async () => {
    const { ws, root } = sessionSetup('ID6')
    withDirectory(root)
    // The session made the tree (x.txt's directory), moved d into it, then removed it: undone,
    // the tree is gone and d is back, but d would come out of an archive never put back.
    ok(await ws.call('write_file', { path: 'made/x.txt', content: 'x\n' }))
    ok(await ws.call('move_file', { source: 'd', destination: 'made/d-in' }))
    ok(await ws.call('remove_dir', { path: 'made', recursive: true }))
    const now = tree(root)
    const trash = await ws.trashList()
    const refused = await ws.undo({ sessionId: 'ID6' })
    expect(refused).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(refused.output).toBe(
      `cannot undo these changes in one step: ${join(root, 'd')} would come from inside a tree in the trash to another place. Nothing was undone; undo the changes one at a time`,
    )
    expect(tree(root)).toEqual(now)
    expect(await ws.trashList()).toEqual(trash)
    // One at a time, it is taken back.
    for (let i = 0; i < 3; i++) ok(await ws.undo())
    expect(tree(root)['d/inner/g.txt']).toBeDefined()
    expect(tree(root)['made']).toBeUndefined()
  })

  it('a tree restored from before the session and edited inside (its digest is not checked against the tree on disk)', async () => {
    const { ws: earlier, root, dataDir } = sessionSetup('PRE')
    const removed = ok(await earlier.call('remove_dir', { path: 'a', recursive: true }))
    const before = tree(root)
    const ws = new Workspace({ root, permissions: ALL, confirm: () => true, trash: { dataDir, sessionId: 'IN5' } })
    ok(await ws.call('restore_file', { trashedPath: removed.data?.trashedTo as string }))
    ok(await ws.call('edit_file', { path: 'a/x.txt', edits: [{ oldString: 'one', newString: 'ONE' }] }))
    await undoSession(ws, 'IN5', root, before, 2)
  })

  it('a tree removed, restored, edited and removed again', async () => {
    const { ws, root, before } = sessionSetup('IN3')
    const removed = ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    ok(await ws.call('restore_file', { trashedPath: removed.data?.trashedTo as string }))
    ok(await ws.call('edit_file', { path: 'a/x.txt', edits: [{ oldString: 'one', newString: 'ONE' }] }))
    ok(await ws.call('write_file', { path: 'a/sub/w.txt', content: 'w\n' }))
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    await undoSession(ws, 'IN3', root, before, 5)
  })

  it('entries that trade places (a → t, b → a, t → b) go back in one step', async () => {
    const made = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: 'CY' } })
    const { ws, root } = made
    writeFileSync(join(root, 'a'), 'A\n')
    mkdirSync(join(root, 'b'))
    writeFileSync(join(root, 'b/inside'), 'B\n')
    const before = tree(root)
    ok(await ws.call('move_file', { source: 'a', destination: 't' }))
    ok(await ws.call('move_file', { source: 'b', destination: 'a' }))
    ok(await ws.call('move_file', { source: 't', destination: 'b' }))
    await undoSession(ws, 'CY', root, before, 3)
  })

  it('refuses with CONFLICT, changing nothing, when a path inside the removed tree is not what the older change left', async () => {
    const { ws, root } = sessionSetup('IN4')
    ok(await ws.call('edit_file', { path: 'a/y.txt', edits: [{ oldString: 'y two', newString: 'Y TWO' }] }))
    // The user changes the file before the agent removes the tree.
    writeFileSync(join(root, 'a/y.txt'), 'the user was here\n')
    ok(await ws.call('remove_dir', { path: 'a', recursive: true }))
    const now = tree(root)
    const trash = await ws.trashList()
    const refused = await ws.undo({ sessionId: 'IN4' })
    expect(refused).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(refused.output).toContain(join(root, 'a/y.txt'))
    expect(refused.output).toContain('content changed')
    expect(tree(root)).toEqual(now)
    expect(await ws.trashList()).toEqual(trash)
  })
})

describe('session undo as a user the modes apply to', () => {
  beforeEach(() => skipOnWindows(NO_UNIX_MODES))

  /**
   * Runs `steps` (a tool call, or `undo` with its options) on a Workspace of the session `S` over
   * `root` in a child process, as `nobody` when we are root (root passes every mode check).
   */
  function asUnprivileged(root: string, steps: Array<[string, unknown]>): ToolResult[] {
    const script = `
      import { Workspace } from 'agent-fs-tools'
      const ws = new Workspace({ ...${JSON.stringify({ root, trash: { dataDir: join(root, '.data'), sessionId: 'S' }, permissions: ALL })}, confirm: () => true })
      const out = []
      for (const [step, args] of ${JSON.stringify(steps)}) out.push(step === 'undo' ? await ws.undo(args) : await ws.call(step, args))
      process.stdout.write(JSON.stringify(out))
    `
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], unprivileged)
    expect(result.status, result.stderr).toBe(0)
    return JSON.parse(result.stdout) as ToolResult[]
  }

  const unprivileged = {
    cwd: process.cwd(),
    encoding: 'utf8' as const,
    timeout: scaled(20_000),
    ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
  }
  /** Whether this node binary runs as that user (one in root's cache may not be reachable). */
  const runsUnprivileged = spawnSync(process.execPath, ['-e', ''], unprivileged).status === 0

  /** The tree but the data directory (`.data`, where the calls log what they did). */
  function outside(t: ReturnType<typeof tree>): ReturnType<typeof tree> {
    return Object.fromEntries(Object.entries(t).filter(([p]) => !p.startsWith('.data')))
  }

  it.skipIf(!runsUnprivileged)('a directory that cannot be written moving out of the tree it comes back in: OS_PERMISSION, nothing changed; one at a time once it can', () => {
    const { root } = tempWorkspaceDirs()
    chmodSync(dirname(root), 0o755)
    chmodSync(root, 0o777)
    mkdirSync(join(root, 'a'))
    writeFileSync(join(root, 'a/x.txt'), 'x\n')
    mkdirSync(join(root, 'd'))
    if (process.getuid?.() === 0) for (const rel of ['a', 'a/x.txt', 'd']) chownSync(join(root, rel), 65534, 65534)
    const before = tree(root)
    const [moved] = asUnprivileged(root, [['move_file', { source: 'd', destination: 'a/d-in' }]])
    expect(moved, moved!.output).toMatchObject({ status: 'ok' })
    // The user makes it read-only; it is empty, so the tree can still be removed.
    chmodSync(join(root, 'a/d-in'), 0o555)
    const [removed] = asUnprivileged(root, [['remove_dir', { path: 'a', recursive: true }]])
    expect(removed, removed!.output).toMatchObject({ status: 'ok' })
    const now = outside(tree(root))
    // Moving a directory to another parent rewrites its "..": the system refuses it in a
    // directory without write permission, once the tree is back. The commit takes the tree away.
    const [refused, listed] = asUnprivileged(root, [
      ['undo', { sessionId: 'S' }],
      ['trash_list', {}],
    ])
    expect(refused, refused!.output).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
    expect(refused!.output).toContain(join(root, 'd'))
    expect(outside(tree(root))).toEqual(now)
    expect(listed!.data!.total).toBe(1)
    // One at a time: the tree comes back; once the directory can be written, the move too.
    const [restored] = asUnprivileged(root, [['undo', {}]])
    expect(restored, restored!.output).toMatchObject({ status: 'ok' })
    chmodSync(join(root, 'a/d-in'), 0o755)
    const [back] = asUnprivileged(root, [['undo', {}]])
    expect(back, back!.output).toMatchObject({ status: 'ok' })
    expect(outside(tree(root))).toEqual(outside(before))
  })
})

describe('dry run, confirm, restart, trashClear', () => {
  it('dryRun reports what would happen and changes nothing', async () => {
    const { ws, root } = setup((r) => writeFileSync(join(r, 'a.txt'), 'one\n'))
    ok(await ws.call('delete_file', { path: 'a.txt' }))
    const now = tree(root)
    const dry = ok(await ws.undo({ dryRun: true }))
    expect(dry.output).toContain('Would undo')
    expect(dry.output).toContain(join(root, 'a.txt'))
    expect(tree(root)).toEqual(now)
    expect((await ws.history())[0]!.tool).toBe('delete_file')
  })

  it('confirm asks once with "Undo change?", a detail per file and the diff; "no" changes nothing', async () => {
    const { ws, root } = setup((r) => writeFileSync(join(r, 'a.txt'), 'one\ntwo\n'))
    ok(await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'two', newString: 'zwei' }] }))
    const no = recorder(false)
    const denied = await ws.undo({ confirm: no.confirm })
    expect(denied.status).toBe('denied')
    expect(no.requests).toHaveLength(1)
    expect(no.requests[0]).toMatchObject({ tool: 'undo', label: 'Undo change?' })
    expect(no.requests[0]!.detail).toContain(join(root, 'a.txt'))
    expect(no.requests[0]!.diff).toContain('-zwei')
    expect(no.requests[0]!.diff).toContain('+two')
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\nzwei\n')
    const yes = recorder(true)
    ok(await ws.undo({ confirm: yes.confirm }))
    expect(yes.requests).toHaveLength(1)
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\ntwo\n')
  })

  it('the history survives a restart, and undo works from the new Workspace', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true })
    writeFileSync(join(root, 'a.txt'), 'one\n')
    ok(await ws.call('read_file', { path: 'a.txt' }))
    const changed = ok(await ws.call('write_file', { path: 'a.txt', content: 'two\n' }))
    const again = new Workspace({ root, permissions: ALL, trash: { dataDir } })
    expect((await again.history())[0]).toMatchObject({ id: changed.data?.changeId, undoable: true })
    ok(await again.undo())
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\n')
  })

  it('trashClear makes changes that need a cleared archive report undoable: false with a reason', async () => {
    const { ws, root } = setup((r) => writeFileSync(join(r, 'a.txt'), 'one\n'))
    ok(await ws.call('delete_file', { path: 'a.txt' }))
    ok(await ws.call('write_file', { path: 'b.txt', content: 'b\n' }))
    ok(await ws.call('edit_file', { path: 'b.txt', edits: [{ oldString: 'b', newString: 'c' }] }))
    expect((await ws.history())[0]).toMatchObject({ tool: 'edit_file', undoable: true })
    await ws.trashClear()
    const [edit, write, del] = await ws.history()
    // The edit's delta went with the trash; the new file needs nothing kept.
    expect(edit).toMatchObject({ tool: 'edit_file', undoable: false, reason: expect.stringContaining('trashClear') })
    expect(write).toMatchObject({ tool: 'write_file', undoable: true })
    expect(del).toMatchObject({ tool: 'delete_file', undoable: false })
    expect(del!.reason).toContain('trash')
    const refused = await ws.undo({ id: del!.id })
    expect(refused).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('a permanent delete and an overwrite without keepOverwrites are listed as not undoable', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { keepOverwrites: false } })
    writeFileSync(join(root, 'a.txt'), 'one\n')
    writeFileSync(join(root, 'b.txt'), 'b\n')
    ok(await ws.call('read_file', { path: 'a.txt' }))
    ok(await ws.call('write_file', { path: 'a.txt', content: 'two\n' }))
    ok(await ws.call('delete_file', { path: 'b.txt', permanent: true }, { confirm: () => true }))
    const [del, write] = await ws.history()
    expect(del).toMatchObject({ undoable: false, reason: expect.stringContaining('permanently') })
    expect(write).toMatchObject({ undoable: false, reason: expect.stringContaining('keepOverwrites') })
  })
})
