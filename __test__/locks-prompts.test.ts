/**
 * Per-path locks and prompts (../docs/hosts.md#the-workspace-api, ../docs/permissions-and-prompts.md): a change holds its paths against other changes from its
 * plan through its prompt, but reads go on, so a confirm handler can show the file it is asked about.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import type { ConfirmHandler, ToolResult } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { deferred, numbered, read, sleep, writeTree } from './helpers/files.js'
import { ALL, tarList } from './helpers/trash.js'

/** A call that waits forever fails the test after this long instead of hanging the run. */
const HANG_MS = 10_000

describe('locks and prompts', () => {
  it.each([
    ['write_file', { path: 'a.txt', content: 'new\n' }],
    ['edit_file', { path: 'a.txt', edits: [{ oldString: 'old', newString: 'new' }] }],
    ['append_file', { path: 'a.txt', content: 'more\n' }],
    ['delete_file', { path: 'a.txt' }],
  ])(
    'a confirm handler of %s can read the file through ws.call, and the change completes',
    async (tool, args) => {
      const { ws, root } = tempWorkspace()
      writeTree(root, { 'a.txt': 'old\n' })
      await ws.call('read_file', { path: 'a.txt' })
      let shown: ToolResult | undefined
      const confirm: ConfirmHandler = async () => {
        shown = await ws.call('read_file', { path: 'a.txt' })
        return true
      }
      const result = await ws.call(tool, args, { confirm })
      expect(result.status, result.output).toBe('ok')
      // The handler saw the file as it was before the change.
      expect(shown?.status).toBe('ok')
      expect(shown?.output).toContain(numbered(1, 'old'))
      if (tool === 'delete_file') expect(existsSync(join(root, 'a.txt'))).toBe(false)
      else expect(read(join(root, 'a.txt'))).not.toBe('old\n')
    },
    HANG_MS,
  )

  it(
    'reads of a path and below it go on while changes of it wait for their prompts',
    async () => {
      const { ws, root } = tempWorkspace()
      writeTree(root, { 'd/e/f.txt': 'in d\n', 'g.txt': 'g\n' })
      await ws.call('read_file', { path: 'g.txt' })
      const gate = deferred<boolean>()
      const asked = vi.fn<ConfirmHandler>(() => gate.promise)
      const remove = ws.call('remove_dir', { path: 'd', recursive: true }, { confirm: asked })
      const write = ws.call('write_file', { path: 'g.txt', content: 'new\n' }, { confirm: asked })
      await vi.waitFor(() => expect(asked).toHaveBeenCalledTimes(2))
      const [below, file] = await Promise.all([
        ws.call('read_file', { path: 'd/e/f.txt' }),
        ws.call('read_file', { path: 'g.txt' }),
      ])
      expect(below.output).toContain(numbered(1, 'in d'))
      expect(file.output).toContain(numbered(1, 'g'))
      gate.resolve(true)
      expect((await remove).status).toBe('ok')
      expect((await write).status).toBe('ok')
      expect(existsSync(join(root, 'd'))).toBe(false)
      expect(read(join(root, 'g.txt'))).toBe('new\n')
    },
    HANG_MS,
  )

  it(
    'two writes of one file issued together, each asked about, both succeed one after the other',
    async () => {
      const { ws, root } = tempWorkspace()
      writeTree(root, { 'f.txt': 'base\n' })
      await ws.call('read_file', { path: 'f.txt' })
      const diffs: string[] = []
      const confirm: ConfirmHandler = async (request) => {
        diffs.push(request.diff ?? '')
        await sleep(5)
        return true
      }
      const results = await Promise.all(
        ['A', 'B'].map((content) => ws.call('write_file', { path: 'f.txt', content: `${content}\n` }, { confirm })),
      )
      for (const result of results) expect(result.status, result.output).toBe('ok')
      // The second was planned (and its diff shown) only once the first had committed.
      const last = read(join(root, 'f.txt'))
      const first = last === 'A\n' ? 'B' : 'A'
      expect(diffs).toHaveLength(2)
      expect(diffs[0]).toContain('-base')
      expect(diffs[0]).toContain(`+${first}`)
      expect(diffs[1]).toContain(`-${first}`)
      expect(diffs[1]).toContain(`+${last.trim()}`)
    },
    HANG_MS,
  )

  it(
    'a recursive remove_dir queued behind a write below it goes before the writes below it issued later',
    async () => {
      const { ws, root } = tempWorkspace({ permissions: ALL })
      writeTree(root, { 'a/old.txt': 'old\n' })
      const gate = deferred<boolean>()
      const asked = vi.fn<ConfirmHandler>(() => gate.promise)
      const first = ws.call(
        'write_file',
        { path: 'a/first.txt', content: 'first\n' },
        { confirm: asked, permissions: { cwdWriteFile: false } },
      )
      await vi.waitFor(() => expect(asked).toHaveBeenCalledOnce())
      const remove = ws.call('remove_dir', { path: 'a', recursive: true }, { confirm: () => true })
      // Only orders the calls (the remove queues first); nothing is timed.
      await sleep(50)
      const later = ['a/later.txt', 'a/b/later.txt'].map((path) => ws.call('write_file', { path, content: `${path}\n` }))
      // Reads below the queued remove still go on.
      expect((await ws.call('read_file', { path: 'a/old.txt' })).status).toBe('ok')
      gate.resolve(true)
      const results = await Promise.all([first, remove, ...later])
      for (const result of results) expect(result.status, result.output).toBe('ok')
      const archived = tarList(results[1]!.data!.trashedTo as string)
      expect(archived).toContain('a/old.txt')
      expect(archived).toContain('a/first.txt')
      for (const path of ['a/later.txt', 'a/b/later.txt']) {
        expect(archived).not.toContain(path)
        expect(read(join(root, path))).toBe(`${path}\n`)
      }
    },
    HANG_MS,
  )

  it(
    'a confirm handler that changes the path it is asked about gets CONFLICT at once instead of waiting for itself',
    async () => {
      const { ws, root } = tempWorkspace()
      writeTree(root, { 'a.txt': 'old\n', 'd/f.txt': 'f\n' })
      await ws.call('read_file', { path: 'a.txt' })
      const inner: ToolResult[] = []
      const grant = { permissions: { cwdWriteFile: true, cwdRemoveFile: true } }
      const confirm: ConfirmHandler = async (request) => {
        if (request.tool === 'write_file') {
          inner.push(await ws.call('append_file', { path: 'a.txt', content: 'inner\n' }, grant))
        } else {
          inner.push(await ws.call('delete_file', { path: 'd/f.txt' }, grant))
          // A change the asking call does not hold goes through.
          inner.push(await ws.call('write_file', { path: 'b.txt', content: 'b\n' }, grant))
        }
        return true
      }
      const write = await ws.call('write_file', { path: 'a.txt', content: 'outer\n' }, { confirm })
      const remove = await ws.call('remove_dir', { path: 'd', recursive: true }, { confirm })
      expect(write.status, write.output).toBe('ok')
      expect(remove.status, remove.output).toBe('ok')
      expect(inner.map((r) => r.code ?? r.status)).toEqual(['CONFLICT', 'CONFLICT', 'ok'])
      expect(inner[0]!.output).toContain(join(root, 'a.txt'))
      expect(read(join(root, 'a.txt'))).toBe('outer\n')
      expect(read(join(root, 'b.txt'))).toBe('b\n')
      expect(existsSync(join(root, 'd'))).toBe(false)
    },
    HANG_MS,
  )

  it(
    'a change made from a confirm handler waits as usual for a change of another call',
    async () => {
      const { ws, root } = tempWorkspace()
      writeTree(root, { 'a.txt': 'old\n' })
      await ws.call('read_file', { path: 'a.txt' })
      const gate = deferred<boolean>()
      const slow = vi.fn<ConfirmHandler>(() => gate.promise)
      // Another call (not the one asking) holds a.txt while its prompt is pending.
      const other = ws.call('write_file', { path: 'a.txt', content: 'other\n' }, { confirm: slow })
      await vi.waitFor(() => expect(slow).toHaveBeenCalledOnce())
      let inner: Promise<ToolResult> | undefined
      const confirm: ConfirmHandler = () => {
        inner = ws.call('append_file', { path: 'a.txt', content: 'inner\n' }, { permissions: { cwdWriteFile: true } })
        return true
      }
      const asking = await ws.call('write_file', { path: 'c.txt', content: 'c\n' }, { confirm })
      expect(asking.status).toBe('ok')
      gate.resolve(true)
      expect((await other).status).toBe('ok')
      expect((await inner!).status).toBe('ok')
      expect(read(join(root, 'a.txt'))).toBe('other\ninner\n')
    },
    HANG_MS,
  )
})
