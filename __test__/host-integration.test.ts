/**
 * Host integration (issue 21): the blast radius in the prompt, progress, a withdrawn prompt, and
 * denials that say who (if anyone) was asked.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import type { ConfirmRequest, ToolProgress } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { siblingDir, writeTree } from './helpers/files.js'

/** A confirm handler that records what it was asked and answers `answer`. */
function asked(answer: boolean): { confirm: (request: ConfirmRequest) => boolean; requests: ConfirmRequest[] } {
  const requests: ConfirmRequest[] = []
  return {
    requests,
    confirm: (request) => {
      requests.push(request)
      return answer
    },
  }
}

/** 3 files (1 + 2000 + 30 bytes), 2 directories below the tree, 1 link. */
function buildTree(dir: string): void {
  writeTree(dir, { 'a.txt': 'x', 'sub/big.bin': Buffer.alloc(2000, 1), 'sub/deeper/c.txt': 'c'.repeat(30) })
  mkdirSync(join(dir, 'sub/empty'))
}

describe('the blast radius before "yes" (summary and detail)', () => {
  it('a recursive remove_dir counts files, directories, bytes and the largest files', async () => {
    const { ws, root } = tempWorkspace()
    buildTree(join(root, 'build'))
    const { confirm, requests } = asked(false)
    const result = await ws.call('remove_dir', { path: 'build', recursive: true }, { confirm })
    expect(result.status).toBe('denied')
    expect(requests).toHaveLength(1)
    const request = requests[0]!
    expect(request.summary).toEqual({
      kind: 'tree',
      path: join(root, 'build'),
      files: 3,
      dirs: 3,
      links: 0,
      bytes: 2031,
      complete: true,
      largest: [
        { path: join(root, 'build/sub/big.bin'), bytes: 2000 },
        { path: join(root, 'build/sub/deeper/c.txt'), bytes: 30 },
        { path: join(root, 'build/a.txt'), bytes: 1 },
      ],
    })
    expect(request.detail).toBe(
      `${join(root, 'build')} (recursive): 3 files and 3 directories, 2.0 KiB (largest: ${join('sub', 'big.bin')} 2.0 KiB, ${join('sub', 'deeper', 'c.txt')} 30 bytes, a.txt 1 byte)`,
    )
    expect(existsSync(join(root, 'build/sub/big.bin'))).toBe(true)
  })

  it('an empty directory removed recursively says there is nothing in it; a plain removal has no summary', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'empty'))
    const { confirm, requests } = asked(false)
    await ws.call('remove_dir', { path: 'empty', recursive: true }, { confirm })
    await ws.call('remove_dir', { path: 'empty' }, { confirm })
    expect(requests[0]!.detail).toBe(`${join(root, 'empty')} (recursive): nothing in it`)
    expect(requests[0]!.summary).toMatchObject({ kind: 'tree', files: 0, dirs: 0, bytes: 0, complete: true })
    expect(requests[1]!.summary).toBeUndefined()
    expect(requests[1]!.detail).toBe(join(root, 'empty'))
  })

  it('move_file and restore_file that replace a directory count what goes', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true, cwdRemoveFile: true } })
    buildTree(join(root, 'dest'))
    mkdirSync(join(root, 'src'))
    const { confirm, requests } = asked(false)
    const moved = await ws.call('move_file', { source: 'src', destination: 'dest', overwrite: true }, { confirm })
    expect(moved.status).toBe('denied')
    expect(requests[0]!.summary).toMatchObject({ kind: 'tree', path: join(root, 'dest'), files: 3, dirs: 3, bytes: 2031, complete: true })
    expect(requests[0]!.detail).toContain('which goes to the trash first: 3 files and 3 directories, 2.0 KiB')

    writeFileSync(join(root, 'gone.txt'), 'old\n')
    const removed = await ws.call('delete_file', { path: 'gone.txt' }, { confirm: () => true })
    const archive = removed.data!.trashedTo as string
    mkdirSync(join(root, 'gone.txt'))
    writeFileSync(join(root, 'gone.txt/inside'), '12345')
    const restored = await ws.call('restore_file', { trashedPath: archive, overwrite: true }, { confirm })
    expect(restored.status).toBe('denied')
    expect(requests[1]!.summary).toMatchObject({ kind: 'tree', path: join(root, 'gone.txt'), files: 1, dirs: 0, bytes: 5 })
    // Replacing a file is no tree: no summary.
    writeFileSync(join(root, 'file.txt'), 'f')
    await ws.call('move_file', { source: 'a-missing-one', destination: 'file.txt', overwrite: true }, { confirm })
    expect(requests).toHaveLength(2)
  })

  it('apply_patch counts files added, updated, deleted and lines', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bye\n' })
    const { confirm, requests } = asked(false)
    const patch = [
      '*** Begin Patch',
      '*** Update File: a.txt',
      '@@',
      ' one',
      '-two',
      '+TWO',
      '+2',
      '*** Add File: c.txt',
      '+new',
      '*** Delete File: b.txt',
      '*** End Patch',
    ].join('\n')
    const result = await ws.call('apply_patch', { input: patch }, { confirm })
    expect(result.status).toBe('denied')
    expect(requests[0]!.summary).toEqual({ kind: 'files', added: 1, updated: 1, deleted: 1, moved: 0, linesAdded: 3, linesRemoved: 2 })
    expect(requests[0]!.detail.split('\n')).toEqual([
      `update ${join(root, 'a.txt')} (+2 -1)`,
      `add ${join(root, 'c.txt')} (+1 -0)`,
      `delete ${join(root, 'b.txt')} (+0 -1)`,
      '1 file added, 1 file updated, 1 file deleted: +3 -2 lines',
    ])
  })
})

describe('every path a change touches (ConfirmRequest.paths), and the ones outside the project', () => {
  it('a patch over two files asks once with both; a move with its source and destination', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'one\n', 'b.txt': 'two\n' })
    const { confirm, requests } = asked(false)
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-two\n+TWO\n*** End Patch'
    expect((await ws.call('apply_patch', { input: patch }, { confirm })).status).toBe('denied')
    await ws.call('move_file', { source: 'a.txt', destination: 'c.txt' }, { confirm })
    expect(requests.map((r) => r.paths)).toEqual([
      [join(root, 'a.txt'), join(root, 'b.txt')],
      [join(root, 'a.txt'), join(root, 'c.txt')],
    ])
  })

  it('without allowedPaths, a path outside the root asks with a last detail line saying so; one inside keeps the plain detail', async () => {
    const { ws, root } = tempWorkspace()
    const outside = join(siblingDir(root), 'x.txt')
    const { confirm, requests } = asked(false)
    await ws.call('write_file', { path: 'in.txt', content: 'x' }, { confirm })
    await ws.call('write_file', { path: outside, content: 'x' }, { confirm })
    expect(requests.map((r) => r.detail)).toEqual([join(root, 'in.txt'), `${outside}\nOutside the project (${root}): ${outside}`])
    expect(requests[1]!.paths).toEqual([outside])
  })
})

describe('onProgress', () => {
  it('a recursive trash reports bytes, from 0 to the counted total', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(join(root, 'tree'), { 'a.bin': Buffer.alloc(300_000, 7), 'b/c.bin': Buffer.alloc(100_000, 8) })
    const updates: ToolProgress[] = []
    const result = await ws.call('remove_dir', { path: 'tree', recursive: true }, { confirm: () => true, onProgress: (p) => updates.push(p) })
    expect(result.status).toBe('ok')
    expect(updates.length).toBeGreaterThanOrEqual(1)
    expect(updates[0]).toEqual({ done: 0, total: 400_000, unit: 'bytes' })
    for (const [i, update] of updates.entries()) {
      expect(update.unit).toBe('bytes')
      expect(update.done).toBeLessThanOrEqual(update.total!)
      if (i > 0) expect(update.done).toBeGreaterThanOrEqual(updates[i - 1]!.done)
    }
  })

  it('a restore of a trashed tree reports bytes out of the archived size', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(join(root, 'tree'), { 'a.bin': Buffer.alloc(150_000, 7), 'b/c.bin': Buffer.alloc(50_000, 8) })
    const removed = await ws.call('remove_dir', { path: 'tree', recursive: true }, { confirm: () => true })
    const updates: ToolProgress[] = []
    const restored = await ws.call('restore_file', { trashedPath: removed.data!.trashedTo as string }, { confirm: () => true, onProgress: (p) => updates.push(p) })
    expect(restored.status).toBe('ok')
    expect(updates[0]).toEqual({ done: 0, total: 200_000, unit: 'bytes' })
    expect(updates.every((u) => u.unit === 'bytes' && u.done <= 200_000)).toBe(true)
  })

  it('grep and glob report files; apply_patch reports its files out of the total; none after the call resolved', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true, cwdRemoveFile: true } })
    writeTree(root, Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`d/f${i}.txt`, `line ${i}\n`])))
    const grep: ToolProgress[] = []
    expect((await ws.call('grep', { pattern: 'line', path: '.' }, { onProgress: (p) => grep.push(p) })).status).toBe('ok')
    expect(grep[0]).toEqual({ done: 0, unit: 'files' })
    const glob: ToolProgress[] = []
    expect((await ws.call('glob', { pattern: '**/*.txt' }, { onProgress: (p) => glob.push(p) })).status).toBe('ok')
    expect(glob[0]).toEqual({ done: 0, unit: 'files' })
    const patch: ToolProgress[] = []
    const patched = await ws.call(
      'apply_patch',
      { input: '*** Begin Patch\n*** Add File: n1.txt\n+1\n*** Add File: n2.txt\n+2\n*** End Patch' },
      { onProgress: (p) => patch.push(p) },
    )
    expect(patched.status).toBe('ok')
    expect(patch[0]).toEqual({ done: 0, total: 2, unit: 'files' })
    const seen = patch.length + grep.length + glob.length
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(patch.length + grep.length + glob.length).toBe(seen)
  })

  it('a throwing onProgress does not fail the call; a non-function is a TypeError', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'x.txt': 'x\n' })
    const onProgress = vi.fn(() => {
      throw new Error('display broke')
    })
    expect((await ws.call('grep', { pattern: 'x' }, { onProgress })).status).toBe('ok')
    expect(onProgress).toHaveBeenCalled()
    await expect(ws.call('grep', { pattern: 'x' }, { onProgress: 3 as never })).rejects.toThrow(TypeError)
  })
})

describe('a withdrawn prompt (ConfirmRequest.signal)', () => {
  it('fires when the call is aborted while its prompt is open; the call is ABORTED', async () => {
    const { ws, root } = tempWorkspace()
    const controller = new AbortController()
    let withdrawn: Event | undefined
    const confirm = (request: ConfirmRequest): Promise<boolean> =>
      new Promise(() => {
        expect(request.signal?.aborted).toBe(false)
        request.signal!.addEventListener('abort', (event) => (withdrawn = event))
        controller.abort()
      })
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' }, { confirm, signal: controller.signal })
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(withdrawn?.type).toBe('abort')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('fires when the prompt times out, and not for a prompt that was answered', async () => {
    const { ws } = tempWorkspace({ confirmTimeoutMs: 50 })
    let signal: AbortSignal | undefined
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' }, {
      confirm: (request) => {
        signal = request.signal
        return new Promise<boolean>(() => {})
      },
    })
    expect(result).toMatchObject({ status: 'denied', code: 'CONFIRM_TIMEOUT' })
    expect(signal?.aborted).toBe(true)
    let answered: AbortSignal | undefined
    await ws.call('write_file', { path: 'b.txt', content: 'x' }, {
      confirm: (request) => {
        answered = request.signal
        return true
      },
    })
    expect(answered?.aborted).toBe(false)
  })
})

describe('denied is not "the user denied"', () => {
  it('with no confirm handler, says nobody was asked and which permission the host can grant', async () => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' })
    expect(result.status).toBe('denied')
    expect(result.code).toBe('NO_CONFIRM_HANDLER')
    expect(result.output).not.toContain('The user denied')
    expect(result.output).toBe(
      'Nobody was asked to approve this write: the host has no way to ask the user (no confirmation handler), so nothing was changed. For the host: give the workspace or the call a confirm handler, or grant cwdWriteFile in its permissions to allow it without asking. Do not retry it or work around it (with another tool or path); ask the user what to do instead.',
    )
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('an action that always asks says so instead of naming a permission', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdRemoveDir: true } })
    mkdirSync(join(root, 'd/e'), { recursive: true })
    const result = await ws.call('remove_dir', { path: 'd', recursive: true })
    expect(result.code).toBe('NO_CONFIRM_HANDLER')
    expect(result.output).toContain('it always needs a confirmation, whatever the permissions')
  })

  it("the user's no is USER_DENIED with the documented text, then what the model should do next", async () => {
    const { ws } = tempWorkspace({ confirm: () => false })
    expect(await ws.call('write_file', { path: 'a.txt', content: 'x' })).toEqual({
      status: 'denied',
      code: 'USER_DENIED',
      output: 'The user denied this write. Do not retry it or work around it (with another tool or path); ask the user what to do instead.',
    })
  })
})

describe('ws.check: the permission decision without running the call', () => {
  it('allow, ask with the request the handler would get, or fail; nothing changes', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    buildTree(join(root, 'build'))
    expect(await ws.check('write_file', { path: 'a.txt', content: 'x' })).toEqual({ decision: 'allow' })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(await ws.check('cwd_get', {})).toEqual({ decision: 'allow' })
    const removal = await ws.check('remove_dir', { path: 'build', recursive: true })
    expect(removal).toMatchObject({
      decision: 'ask',
      request: { tool: 'remove_dir', label: 'Remove directory recursively?', recursive: true, summary: { kind: 'tree', files: 3, bytes: 2031 } },
    })
    expect(existsSync(join(root, 'build/sub/big.bin'))).toBe(true)
    const asked = await ws.check('write_file', { path: 'a.txt', content: 'x' }, { permissions: { cwdWriteFile: false } })
    expect(asked).toMatchObject({ decision: 'ask', request: { label: 'Write file?', diff: expect.stringContaining('+x') } })
    expect(await ws.check('read_file', { path: 'missing.txt' })).toMatchObject({ decision: 'fail', result: { status: 'error', code: 'NOT_FOUND' } })
    expect(await ws.check('write_file', { path: 1 })).toMatchObject({ decision: 'fail', result: { code: 'INVALID_ARGUMENTS' } })
    expect(await ws.check('no_such_tool', {})).toMatchObject({ decision: 'fail', result: { code: 'UNKNOWN_TOOL' } })
    // Nothing was audited either.
    expect(existsSync(join(dataDir, 'audit'))).toBe(false)
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })
})
