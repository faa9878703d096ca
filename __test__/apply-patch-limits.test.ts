/**
 * `apply_patch` at scale and at its edges (issue 26, items 5 and 9): what one patch may read and
 * write in all (`patchMaxTotalBytes`), the combined diff bounded by `patchMaxBytes`, and what a
 * failed or refused patch leaves (nothing: no directories, no archives), paths that name a
 * directory, hard links and symlinks.
 */
import { existsSync, linkSync, lstatSync, readlinkSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ToolResult, Workspace } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { read, writeTree } from './helpers/files.js'
import { ALL, archiveNames, newestDeltaSizes, recorder } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

function setup(files: Record<string, string> = {}, options = {}) {
  const dirs = tempWorkspace({ permissions: ALL, ...options })
  writeTree(dirs.root, files)
  return dirs
}

const patch = (body: string): string => `*** Begin Patch\n${body}*** End Patch\n`

function applyPatch(ws: Workspace, input: string, ctx?: Parameters<Workspace['call']>[2]): Promise<ToolResult> {
  return ws.call('apply_patch', { input }, ctx)
}

/** Distinct lines of text, about `bytes` long in all. */
function text(tag: string, bytes: number): string {
  let out = ''
  for (let i = 0; out.length < bytes; i++) out += `${tag} ${i} ${'x'.repeat(60)}\n`
  return out
}

describe('apply_patch: what one patch may read and write (patchMaxTotalBytes)', () => {
  const files = { 'a.txt': text('a', 40_000), 'b.txt': text('b', 40_000), 'c.txt': text('c', 40_000) }
  const deleteAll = patch('*** Delete File: a.txt\n*** Delete File: b.txt\n*** Delete File: c.txt\n')

  it('a patch over it is TOO_LARGE before anything is written, saying to split it', async () => {
    const { ws, root, dataDir } = setup(files, { limits: { patchMaxTotalBytes: 100_000 } })
    const result = await applyPatch(ws, deleteAll)
    expect(result.code, result.output).toBe('TOO_LARGE')
    expect(result.output).toMatch(/^the patch reads and writes more than 100000 bytes in all \(patchMaxTotalBytes: .*\), reached at .*c\.txt; split it into several patches/)
    expect(result.output.endsWith('No files were modified.')).toBe(true)
    for (const [name, content] of Object.entries(files)) expect(read(join(root, name))).toBe(content)
    expect(archiveNames(dataDir, root)).toEqual([])
    expect(await ws.history()).toEqual([])
  })

  it('an update counts its file before and after', async () => {
    const { ws, root } = setup({ 'a.txt': files['a.txt'] }, { limits: { patchMaxTotalBytes: 70_000 } })
    const first = files['a.txt'].split('\n')[0]
    const result = await applyPatch(ws, patch(`*** Update File: a.txt\n@@\n-${first}\n+changed\n`))
    expect(result.code, result.output).toBe('TOO_LARGE')
    expect(read(join(root, 'a.txt'))).toBe(files['a.txt'])
  })

  it('a patch just under it is applied, and the call resolves', async () => {
    const { ws, root } = setup(files, { limits: { patchMaxTotalBytes: 125_000 } })
    const result = await applyPatch(ws, deleteAll)
    expect(result.status, result.output).toBe('ok')
    for (const name of Object.keys(files)) expect(existsSync(join(root, name))).toBe(false)
  })

  it('is a known limit with a default of 64 MiB (a bad value is refused at construction)', () => {
    expect(() => setup({}, { limits: { patchMaxTotalBytes: 0 } })).toThrow(/limits\.patchMaxTotalBytes: must be at least 1/)
    expect(() => setup({}, { limits: { patchMaxTotalByte: 1 } })).toThrow(/patchMaxTotalBytes/)
  })
})

describe('apply_patch: the combined diff is bounded by patchMaxBytes', () => {
  it('cut at a line with a last line saying what was left out, in the result and the prompt alike', async () => {
    const files = { 'big.txt': text('big', 20_000), 'other.txt': text('other', 5_000), 'keep.txt': 'k\n' }
    const { ws, root } = setup(files, { permissions: { cwdReadFile: true }, limits: { patchMaxBytes: 4_000 } })
    const { confirm, requests } = recorder()
    const result = await applyPatch(ws, patch('*** Delete File: big.txt\n*** Delete File: other.txt\n'), { confirm })
    expect(result.status, result.output).toBe('ok')
    expect(existsSync(join(root, 'big.txt'))).toBe(false)
    const diff = result.diff!
    const [shown, note] = [diff.slice(0, diff.lastIndexOf('[')), diff.slice(diff.lastIndexOf('['))]
    expect(shown.length).toBeLessThanOrEqual(4_000)
    expect(shown.startsWith('--- a/big.txt\n+++ /dev/null\n@@ ')).toBe(true)
    expect(shown.endsWith('\n')).toBe(true)
    const totalLines = files['big.txt'].split('\n').length - 1 + files['other.txt'].split('\n').length - 1 + 2 * 3
    const left = totalLines - (shown.split('\n').length - 1)
    expect(note).toBe(`[diff truncated at 4000 bytes (patchMaxBytes): ${left} more lines not shown, of the rest of big.txt, other.txt]\n`)
    expect(requests[0]!.diff).toBe(diff)
    expect(result.output).toContain(note.trim())
  })
})

describe('apply_patch: new contents past what the plan keeps are derived again at the commit', () => {
  const files = { 'a.txt': text('a', 20_000), 'b.txt': text('b', 1_000) }
  const x = 'x'.repeat(60)
  // The plan keeps new contents up to the larger of patchMaxBytes and editMaxFileBytes: b.txt's
  // (~1 KB) fits, a.txt's (~20 KB, just under the edit limit) no longer does after it.
  const limits = { patchMaxBytes: 300, editMaxFileBytes: 20_100 }
  const input = patch(`*** Update File: b.txt\n@@\n-b 5 ${x}\n+B5\n*** Update File: a.txt\n@@\n-a 3 ${x}\n+A3\n@@\n-a 290 ${x}\n+A290\n`)

  it('with the same result, and deltas of the changed lines only', async () => {
    expect(files['a.txt'].length).toBeLessThanOrEqual(limits.editMaxFileBytes)
    expect(files['a.txt'].length + files['b.txt'].length).toBeGreaterThan(limits.editMaxFileBytes)
    const { ws, root, dataDir } = setup(files, { limits })
    const result = await applyPatch(ws, input, { confirm: () => true })
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe(files['a.txt'].replace(`a 3 ${x}\n`, 'A3\n').replace(`a 290 ${x}\n`, 'A290\n'))
    expect(read(join(root, 'b.txt'))).toBe(files['b.txt'].replace(`b 5 ${x}\n`, 'B5\n'))
    // What takes them back was recorded from the bytes read again: the changed lines, not
    // everything between a.txt's first and last change (~19 KB).
    expect(archiveNames(dataDir, root)).toEqual([])
    const sizes = newestDeltaSizes(dataDir, root)
    expect(sizes).toHaveLength(2)
    expect(Math.max(...sizes), `delta sizes ${sizes}`).toBeLessThan(300)
    expect((await ws.undo()).status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe(files['a.txt'])
    expect(read(join(root, 'b.txt'))).toBe(files['b.txt'])
  })

  it('a file changed since it was planned is a CONFLICT, and nothing changes', async () => {
    const { ws, root } = setup(files, { permissions: { cwdReadFile: true }, limits })
    const result = await applyPatch(ws, input, {
      confirm: () => {
        writeFileSync(join(root, 'a.txt'), files['a.txt'] + 'appended\n')
        return true
      },
    })
    expect(result.code, result.output).toBe('CONFLICT')
    expect(result.output).toContain(`${join(root, 'a.txt')} changed since the patch was planned; read it again and redo the patch`)
    expect(read(join(root, 'b.txt'))).toBe(files['b.txt'])
    expect(read(join(root, 'a.txt'))).toBe(files['a.txt'] + 'appended\n')
  })
})

describe('apply_patch: what a failed or refused patch leaves', () => {
  it('a CONFLICT leaves no directory the patch made, and no archive', async () => {
    const { ws, root, dataDir } = setup({ 'b.txt': 'b\n', 'old.txt': 'old\n' }, { permissions: { cwdReadFile: true } })
    const result = await applyPatch(
      ws,
      patch('*** Delete File: old.txt\n*** Add File: newdir/sub/a.txt\n+a\n*** Update File: b.txt\n@@\n-b\n+B\n'),
      {
        confirm: () => {
          writeFileSync(join(root, 'b.txt'), 'edited meanwhile\n')
          return true
        },
      },
    )
    expect(result.code, result.output).toBe('CONFLICT')
    expect(result.output).toContain(join(root, 'b.txt'))
    expect(existsSync(join(root, 'newdir')), 'the directories it made are gone').toBe(false)
    expect(read(join(root, 'old.txt'))).toBe('old\n')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('a directory that was there before stays, and one that is not empty any more stays', async () => {
    const { ws, root } = setup({ 'b.txt': 'b\n', 'there/x.txt': 'x\n' }, { permissions: { cwdReadFile: true } })
    const result = await applyPatch(
      ws,
      patch('*** Add File: there/a.txt\n+a\n*** Add File: made/a.txt\n+a\n*** Update File: b.txt\n@@\n-b\n+B\n'),
      {
        confirm: () => {
          writeFileSync(join(root, 'b.txt'), 'edited meanwhile\n')
          return true
        },
      },
    )
    expect(result.code, result.output).toBe('CONFLICT')
    expect(read(join(root, 'there/x.txt'))).toBe('x\n')
    expect(existsSync(join(root, 'there/a.txt'))).toBe(false)
    expect(existsSync(join(root, 'made'))).toBe(false)
  })
})

describe('apply_patch: paths it refuses', () => {
  it('`*** Add File: newdir/` names a directory: refused, no file `newdir`', async () => {
    const { ws, root } = setup()
    const result = await applyPatch(ws, patch('*** Add File: newdir/\n+x\n'))
    expect(result.code, result.output).toBe('INVALID_ARGUMENTS')
    expect(result.output).toMatch(/`newdir\/` names a directory \(it ends with `\/` or `\/\.`\)/)
    expect(existsSync(join(root, 'newdir'))).toBe(false)
  })

  it('two hard links of one file in one patch: refused, the link kept', async () => {
    const { ws, root } = setup({ 'a.txt': 'one\n' })
    linkSync(join(root, 'a.txt'), join(root, 'b.txt'))
    const result = await applyPatch(ws, patch('*** Update File: a.txt\n@@\n-one\n+two\n*** Update File: b.txt\n@@\n-one\n+two\n'))
    expect(result.code, result.output).toBe('INVALID_ARGUMENTS')
    expect(result.output).toContain(`${join(root, 'a.txt')} (file 1) and ${join(root, 'b.txt')} (file 2`)
    expect(result.output).toContain('are two names of one file (hard links)')
    expect(statSync(join(root, 'a.txt')).ino).toBe(statSync(join(root, 'b.txt')).ino)
    expect(read(join(root, 'a.txt'))).toBe('one\n')
    // Deleting both names is fine: nothing is split.
    const both = await applyPatch(ws, patch('*** Delete File: a.txt\n*** Delete File: b.txt\n'))
    expect(both.status, both.output).toBe('ok')
  })

  it('one name of a hard-linked file: patched, and the result says the other links keep the old content', async () => {
    const { ws, root } = setup({ 'a.txt': 'one\n' })
    linkSync(join(root, 'a.txt'), join(root, 'b.txt'))
    const result = await applyPatch(ws, patch('*** Update File: a.txt\n@@\n-one\n+two\n'))
    expect(result.status, result.output).toBe('ok')
    expect(result.output).toContain(`${join(root, 'a.txt')} had 2 hard links: the patch wrote a new file in its place, so the other links keep the old content`)
    expect(read(join(root, 'a.txt'))).toBe('two\n')
    expect(read(join(root, 'b.txt'))).toBe('one\n')
  })

  it('a `*** Move to:` of a symlink: refused (it would move the file it points to); updating it changes that file', async () => {
    const { ws, root } = setup({ 'target.txt': 'one\n' })
    symlinkOrSkip('target.txt', join(root, 'link.txt'))
    const result = await applyPatch(ws, patch('*** Update File: link.txt\n*** Move to: moved.txt\n@@\n-one\n+two\n'))
    expect(result.code, result.output).toBe('INVALID_ARGUMENTS')
    expect(result.output).toContain(`${join(root, 'link.txt')} is a symlink to ${join(root, 'target.txt')}`)
    expect(result.output).toContain(`to move the link itself, use move_file; to move the file it points to, name ${join(root, 'target.txt')} in the patch`)
    expect(readlinkSync(join(root, 'link.txt'))).toBe('target.txt')
    expect(read(join(root, 'target.txt'))).toBe('one\n')
    expect(existsSync(join(root, 'moved.txt'))).toBe(false)
    const update = await applyPatch(ws, patch('*** Update File: link.txt\n@@\n-one\n+two\n'))
    expect(update.status, update.output).toBe('ok')
    expect(lstatSync(join(root, 'link.txt')).isSymbolicLink()).toBe(true)
    expect(read(join(root, 'target.txt'))).toBe('two\n')
  })
})
