/** Hierarchical per-path locks (../docs/hosts.md#the-workspace-api): a recursive remove_dir and writes inside its tree are serialised. */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ToolResult } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { read, sleep, writeTree } from './helpers/files.js'
import { ALL, tarList } from './helpers/trash.js'

/** Files written inside the removed tree, at several depths (some in directories that exist). */
const WRITES = ['a/new.txt', 'a/b/new.txt', 'a/b/c/deep.txt', 'a/x/y/fresh.txt']
const content = (path: string): string => `content of ${path}\n`

describe('locks on nested paths', () => {
  it('a recursive remove_dir and parallel writes inside the tree each run wholly before or after it', async () => {
    for (let round = 0; round < 24; round++) {
      // The remove holds its lock while the (sometimes slow) confirmation is pending.
      const confirm = async (): Promise<boolean> => {
        await sleep(round % 3)
        return true
      }
      const { ws, root } = tempWorkspace({ permissions: ALL, confirm })
      writeTree(root, { 'a/b/old.txt': 'old\n', 'a/b/c/keep.txt': 'keep\n', 'a/ab.txt': 'ab\n' })
      const writes = WRITES.map((path) => () => ws.call('write_file', { path, content: content(path) }))
      const remove = (): Promise<ToolResult> => ws.call('remove_dir', { path: 'a', recursive: true })
      // The remove is issued first, in the middle or last, and a sibling with a common string prefix
      // (`ab`, not inside `a`) is written alongside.
      const at = round % (WRITES.length + 1)
      const calls = [...writes.slice(0, at), remove, ...writes.slice(at)]
      const sibling = ws.call('write_file', { path: 'ab/sibling.txt', content: 'sibling\n' })
      const [results, siblingResult] = await Promise.all([Promise.all(calls.map((call) => call())), sibling])

      for (const result of [...results, siblingResult]) expect(result.status, result.output).toBe('ok')
      expect(read(join(root, 'ab/sibling.txt'))).toBe('sibling\n')
      const archived = tarList(results[at]!.data!.trashedTo as string).map((e) => e.replace(/\/$/, ''))
      for (const path of ['a/b/old.txt', 'a/b/c/keep.txt', 'a/ab.txt']) {
        expect(archived, path).toContain(path)
        expect(existsSync(join(root, path)), path).toBe(false)
      }
      // Each write landed either before the remove (so it is in the archive and gone) or after it
      // (so it is on disk, complete); never lost, never both.
      for (const path of WRITES) {
        const onDisk = existsSync(join(root, path))
        expect(onDisk !== archived.includes(path), `${path} in round ${round}`).toBe(true)
        if (onDisk) expect(read(join(root, path))).toBe(content(path))
      }
    }
  })
})
