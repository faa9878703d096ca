/**
 * Permissions and confirmation (../docs/hosts.md#the-workspace-api, ../docs/permissions-and-prompts.md): granted vs prompted vs denied, cwd vs global scope,
 * per-call overrides, the ConfirmRequest, handlers that fail or never answer, and abort signals.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace, type ConfirmHandler, type ConfirmRequest } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { numbered, read, siblingDir, sleep, writeTree } from './helpers/files.js'
import { symlinkOrSkip } from './helpers/links.js'

describe('granted, prompted, denied', () => {
  it('defaults: reads inside root are granted, writes are not', async () => {
    const confirm = vi.fn<ConfirmHandler>(() => false)
    const { ws, root } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'a\n' })
    expect((await ws.call('read_file', { path: 'a.txt' })).status).toBe('ok')
    expect((await ws.call('list_directory', {})).status).toBe('ok')
    expect(confirm).not.toHaveBeenCalled()
    expect((await ws.call('write_file', { path: 'a.txt', content: 'b' })).status).toBe('denied')
    expect(confirm).toHaveBeenCalledOnce()
    expect(read(join(root, 'a.txt'))).toBe('a\n')
  })

  it('a granted permission never calls the handler; an ungranted one calls it exactly once', async () => {
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const { ws } = tempWorkspace({ confirm, permissions: { cwdWriteFile: true } })
    await ws.call('write_file', { path: 'a.txt', content: 'x' })
    await ws.call('append_file', { path: 'a.txt', content: 'y' })
    await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'xy', newString: 'z' }] })
    await ws.call('create_directory', { path: 'd' })
    expect(confirm).not.toHaveBeenCalled()
    await ws.call('write_file', { path: 'a.txt', content: 'x' }, { permissions: { cwdWriteFile: false } })
    expect(confirm).toHaveBeenCalledOnce()
  })

  it('a partial permissions option merges with the defaults (cwdReadFile stays true)', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    writeTree(root, { 'a.txt': 'a\n' })
    expect((await ws.call('read_file', { path: 'a.txt' })).status).toBe('ok')
  })

  it('no handler: anything that needs confirmation is denied and nothing changes', async () => {
    // The model may not read it: let it write what it has not read (../docs/tools.md#stale-views) to see the denial.
    const { ws, root } = tempWorkspace({ permissions: { cwdReadFile: false }, staleWrites: 'allow' })
    writeTree(root, { 'a.txt': 'a\n' })
    const results = await Promise.all([
      ws.call('read_file', { path: 'a.txt' }),
      ws.call('list_directory', {}),
      ws.call('write_file', { path: 'a.txt', content: 'x' }),
      ws.call('append_file', { path: 'a.txt', content: 'x' }),
      ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b' }] }),
      ws.call('create_directory', { path: 'd' }),
    ])
    for (const result of results) {
      expect(result.status).toBe('denied')
      expect(result.code).toBe('NO_CONFIRM_HANDLER')
      expect(result.output).not.toContain('The user denied')
    }
    expect(results[0]!.output).toContain('Nobody was asked to approve this read')
    expect(results[1]!.output).toContain('Nobody was asked to approve this read')
    expect(results[2]!.output).toContain('Nobody was asked to approve this write')
    expect(results[3]!.output).toContain('Nobody was asked to approve this write')
    expect(results[4]!.output).toContain('Nobody was asked to approve this edit')
    expect(results[5]!.output).toContain('Nobody was asked to approve this write')
    expect(results[0]!.data).toEqual({ grant: ['cwdReadFile'] })
    expect(read(join(root, 'a.txt'))).toBe('a\n')
    expect(existsSync(join(root, 'd'))).toBe(false)
  })
})

describe('cwd vs global scope', () => {
  it('cwd* applies inside root and global* outside it (a second directory beside root)', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdReadFile: true, cwdWriteFile: true } })
    const outside = siblingDir(root)
    writeTree(outside, { 'o.txt': 'o\n' })
    writeTree(root, { 'i.txt': 'i\n' })
    expect((await ws.call('read_file', { path: 'i.txt' })).status).toBe('ok')
    expect((await ws.call('read_file', { path: join(outside, 'o.txt') })).status).toBe('denied')
    expect((await ws.call('write_file', { path: join(outside, 'n.txt'), content: 'n' })).status).toBe('denied')
    expect(existsSync(join(outside, 'n.txt'))).toBe(false)

    const global = { cwdReadFile: false, cwdWriteFile: false, globalReadFile: true, globalWriteFile: true }
    expect((await ws.call('read_file', { path: join(outside, 'o.txt') }, { permissions: global })).status).toBe('ok')
    expect((await ws.call('write_file', { path: join(outside, 'n.txt'), content: 'n' }, { permissions: global })).status).toBe('ok')
    expect(read(join(outside, 'n.txt'))).toBe('n')
    // …and global* does not grant inside root.
    expect((await ws.call('read_file', { path: 'i.txt' }, { permissions: global })).status).toBe('denied')
    expect((await ws.call('write_file', { path: 'i.txt', content: 'x' }, { permissions: global })).status).toBe('denied')
    expect(read(join(root, 'i.txt'))).toBe('i\n')
  })

  it('scope is root, not the pushed cwd', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const outside = siblingDir(root)
    writeTree(root, { 'sub/s.txt': 's\n', 'top.txt': 't\n' })
    writeTree(outside, { 'o.txt': 'o\n' })
    await ws.call('cwd_push', { path: 'sub' })
    // ../top.txt is outside the pushed cwd but inside root: cwd scope.
    expect((await ws.call('read_file', { path: '../top.txt' })).status).toBe('ok')
    expect((await ws.call('write_file', { path: '../top2.txt', content: 'x' })).status).toBe('ok')
    await ws.call('cwd_push', { path: outside })
    // Pushed outside root: relative paths there are global scope.
    expect((await ws.call('read_file', { path: 'o.txt' })).status).toBe('denied')
    expect((await ws.call('write_file', { path: 'o2.txt', content: 'x' })).status).toBe('denied')
    expect(existsSync(join(outside, 'o2.txt'))).toBe(false)
  })

  it('scope is decided on the canonical path: a link inside root to a file outside is global', async () => {
    // Not read (it may not be): the write is let through to its permission decision (../docs/tools.md#stale-views).
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true }, staleWrites: 'allow' })
    const outside = siblingDir(root)
    writeTree(outside, { 'o.txt': 'o\n' })
    symlinkOrSkip(join(outside, 'o.txt'), join(root, 'link.txt'))
    const confirm = vi.fn<ConfirmHandler>(() => false)
    expect((await ws.call('read_file', { path: 'link.txt' }, { confirm })).status).toBe('denied')
    expect((await ws.call('write_file', { path: 'link.txt', content: 'x' }, { confirm })).status).toBe('denied')
    expect(confirm).toHaveBeenCalledTimes(2)
    expect(confirm.mock.calls[0]![0].path).toBe(join(outside, 'o.txt'))
    expect(read(join(outside, 'o.txt'))).toBe('o\n')
  })

  it('a root given through a symlink is canonicalised for the scope', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const alias = join(root, '..', 'alias')
    symlinkOrSkip(root, alias)
    const ws = new Workspace({ root: alias, trash: { dataDir }, permissions: { cwdWriteFile: true } })
    expect(ws.cwd().cwd).toBe(root)
    expect((await ws.call('write_file', { path: join(root, 'a.txt'), content: 'x' })).status).toBe('ok')
    expect((await ws.call('write_file', { path: join(alias, 'b.txt'), content: 'x' })).status).toBe('ok')
    expect(read(join(root, 'b.txt'))).toBe('x')
  })
})

describe('per-call overrides', () => {
  it('ctx.permissions grants for this call only', async () => {
    const { ws, root } = tempWorkspace()
    expect((await ws.call('write_file', { path: 'a.txt', content: '1' }, { permissions: { cwdWriteFile: true } })).status).toBe('ok')
    expect((await ws.call('write_file', { path: 'a.txt', content: '2' })).status).toBe('denied')
    expect(read(join(root, 'a.txt'))).toBe('1')
  })

  it('ctx.permissions can revoke a workspace grant, and merges over the workspace permissions', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    writeTree(root, { 'a.txt': 'a\n' })
    expect((await ws.call('read_file', { path: 'a.txt' })).status).toBe('ok')
    expect((await ws.call('read_file', { path: 'a.txt' }, { permissions: { cwdReadFile: false } })).status).toBe('denied')
    // Only cwdReadFile is overridden: cwdWriteFile from the workspace still applies.
    expect((await ws.call('write_file', { path: 'a.txt', content: 'b' }, { permissions: { cwdReadFile: false } })).status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('b')
  })

  it('an unknown key in ctx.permissions never grants anything', async () => {
    const { ws, root } = tempWorkspace()
    const outcome = await ws
      .call('write_file', { path: 'a.txt', content: 'x' }, { permissions: { cwdWrite: true } as never })
      .catch((error: unknown) => ({ status: 'rejected', error }))
    expect(outcome.status).not.toBe('ok')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  // A host's mistake, not the model's: a TypeError naming the key (ws.call may reject
  // for host bugs: ../docs/hosts.md#the-workspace-api), never an INVALID_ARGUMENTS result that the model would try to fix.
  it.each([
    [{ cwdWrite: true }, 'ctx.permissions.cwdWrite: unknown permission; known permissions are cwdReadFile'],
    [{ cwdWriteFile: 'yes' }, 'ctx.permissions.cwdWriteFile: must be a boolean'],
  ])('a bad ctx.permissions %j rejects with a TypeError naming it', async (permissions, message) => {
    const { ws, root } = tempWorkspace()
    const call = ws.call('write_file', { path: 'a.txt', content: 'x' }, { permissions: permissions as never })
    await expect(call).rejects.toThrow(TypeError)
    await expect(call).rejects.toThrow(message)
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('ctx.confirm overrides the workspace handler in both directions', async () => {
    const wsYes = vi.fn<ConfirmHandler>(() => true)
    const { ws, root } = tempWorkspace({ confirm: wsYes })
    const callNo = vi.fn<ConfirmHandler>(() => false)
    expect((await ws.call('write_file', { path: 'a.txt', content: 'x' }, { confirm: callNo })).status).toBe('denied')
    expect(callNo).toHaveBeenCalledOnce()
    expect(wsYes).not.toHaveBeenCalled()
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect((await ws.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe('ok')
    expect(wsYes).toHaveBeenCalledOnce()
  })
})

describe('the ConfirmRequest', () => {
  it('write_file, append_file and edit_file send tool, label, path, detail and the diff', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'f.txt': 'alpha\nbeta\n' })
    await ws.call('read_file', { path: 'f.txt' })
    const requests: ConfirmRequest[] = []
    const confirm: ConfirmHandler = (req) => {
      requests.push(req)
      return true
    }
    const write = await ws.call('write_file', { path: 'f.txt', content: 'alpha\ngamma\n' }, { confirm })
    const append = await ws.call('append_file', { path: 'f.txt', content: 'delta\n' }, { confirm })
    const edit = await ws.call('edit_file', { path: 'f.txt', edits: [{ oldString: 'gamma', newString: 'GAMMA' }] }, { confirm })
    const abs = join(root, 'f.txt')
    expect(requests).toEqual([
      expect.objectContaining({ tool: 'write_file', label: 'Write file?', path: abs, detail: abs, diff: write.diff }),
      expect.objectContaining({ tool: 'append_file', label: 'Append to file?', path: abs, detail: abs, diff: append.diff }),
      expect.objectContaining({ tool: 'edit_file', label: 'Edit file?', path: abs, detail: abs, diff: edit.diff }),
    ])
    expect(requests[0]!.diff).toMatch(/^-beta$/m)
    expect(requests[0]!.diff).toMatch(/^\+gamma$/m)
    expect(requests[1]!.diff).toMatch(/^\+delta$/m)
    expect(requests[2]!.diff).toMatch(/^-gamma$/m)
    expect(requests[2]!.diff).toMatch(/^\+GAMMA$/m)
    expect(read(abs)).toBe('alpha\nGAMMA\ndelta\n')
  })

  it('a renamed tool is named by its new name in the request', async () => {
    const { ws } = tempWorkspace({ tools: { write_file: { name: 'save_file' } } })
    const confirm = vi.fn<ConfirmHandler>(() => true)
    await ws.call('save_file', { path: 'a.txt', content: 'x' }, { confirm })
    expect(confirm.mock.calls[0]![0].tool).toBe('save_file')
  })

  it('read_file and list_directory requests carry no diff', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdReadFile: false } })
    writeTree(root, { 'a.txt': 'a' })
    const confirm = vi.fn<ConfirmHandler>(() => true)
    await ws.call('read_file', { path: 'a.txt' }, { confirm })
    await ws.call('list_directory', {}, { confirm })
    for (const [req] of confirm.mock.calls) expect(req.diff).toBeUndefined()
  })
})

describe('handlers that do not say yes', () => {
  const cases: Array<[string, ConfirmHandler]> = [
    ['returns false', () => false],
    ['throws', () => {
      throw new Error('boom')
    }],
    ['rejects', async () => {
      throw new Error('boom')
    }],
    ['returns a string', () => 'true' as never],
    ['returns 1', () => 1 as never],
    ['returns undefined', () => undefined as never],
    ['returns an object', () => ({ ok: true }) as never],
    ['resolves to null', () => Promise.resolve(null as never)],
  ]

  it.each(cases)('a handler that %s: denied, nothing written, appended, edited or created', async (_name, confirm) => {
    const { ws, root } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'a\n' })
    await ws.call('read_file', { path: 'a.txt' })
    const results = [
      await ws.call('write_file', { path: 'a.txt', content: 'x' }),
      await ws.call('write_file', { path: 'new.txt', content: 'x' }),
      await ws.call('append_file', { path: 'a.txt', content: 'x' }),
      await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b' }] }),
      await ws.call('create_directory', { path: 'd' }),
    ]
    for (const result of results) expect(result.status).toBe('denied')
    expect(read(join(root, 'a.txt'))).toBe('a\n')
    expect(existsSync(join(root, 'new.txt'))).toBe(false)
    expect(existsSync(join(root, 'd'))).toBe(false)
  })

  it('a handler that never answers is denied after confirmTimeoutMs, and a late yes changes nothing', async () => {
    let answerLate: ((v: boolean) => void) | undefined
    const confirm = vi.fn<ConfirmHandler>(() => new Promise<boolean>((resolve) => (answerLate = resolve)))
    const { ws, root } = tempWorkspace({ confirm, confirmTimeoutMs: 100 })
    const started = Date.now()
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' })
    const elapsed = Date.now() - started
    expect(result.status).toBe('denied')
    expect(result.output).toContain('The user denied this write.')
    expect(elapsed).toBeGreaterThanOrEqual(90)
    expect(elapsed).toBeLessThan(5000)
    answerLate!(true)
    await sleep(50)
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('confirmTimeoutMs applies to a per-call handler too and to every prompting tool', async () => {
    const { ws, root } = tempWorkspace({ confirmTimeoutMs: 50, permissions: { cwdReadFile: false } })
    writeTree(root, { 'a.txt': 'secret\n' })
    const never: ConfirmHandler = () => new Promise<boolean>(() => {})
    const read1 = await ws.call('read_file', { path: 'a.txt' }, { confirm: never })
    expect(read1.status).toBe('denied')
    expect(read1.output).not.toContain('secret')
    expect((await ws.call('create_directory', { path: 'd' }, { confirm: never })).status).toBe('denied')
    expect(existsSync(join(root, 'd'))).toBe(false)
  })

  it('a handler that answers within confirmTimeoutMs is honoured', async () => {
    const { ws, root } = tempWorkspace({ confirmTimeoutMs: 2000 })
    const confirm: ConfirmHandler = async () => {
      await sleep(30)
      return true
    }
    expect((await ws.call('write_file', { path: 'a.txt', content: 'x' }, { confirm })).status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('x')
  })

  it('the event loop keeps running while a confirmation is pending', async () => {
    const { ws, root } = tempWorkspace()
    let ticks = 0
    const timer = setInterval(() => ticks++, 5)
    const confirm: ConfirmHandler = async () => {
      await sleep(100)
      return true
    }
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' }, { confirm })
    clearInterval(timer)
    expect(result.status).toBe('ok')
    expect(ticks).toBeGreaterThan(5)
    expect(existsSync(join(root, 'a.txt'))).toBe(true)
  })
})

describe('ctx.signal', () => {
  it('aborted before the call: ABORTED for every tool and nothing changes', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    writeTree(root, { 'a.txt': 'a\n' })
    mkdirSync(join(root, 'sub'))
    const controller = new AbortController()
    controller.abort()
    const signal = controller.signal
    const results = [
      await ws.call('write_file', { path: 'a.txt', content: 'x' }, { signal }),
      await ws.call('write_file', { path: 'n.txt', content: 'x' }, { signal }),
      await ws.call('append_file', { path: 'a.txt', content: 'x' }, { signal }),
      await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b' }] }, { signal }),
      await ws.call('create_directory', { path: 'd' }, { signal }),
      await ws.call('cwd_push', { path: 'sub' }, { signal }),
    ]
    for (const result of results) expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(read(join(root, 'a.txt'))).toBe('a\n')
    expect(existsSync(join(root, 'n.txt'))).toBe(false)
    expect(existsSync(join(root, 'd'))).toBe(false)
    expect(ws.cwd().depth).toBe(0)
  })

  it('aborted while the confirmation is pending: ABORTED, nothing changes, without waiting for the handler', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'a\n' })
    await ws.call('read_file', { path: 'a.txt' })
    const controller = new AbortController()
    const confirm = vi.fn<ConfirmHandler>(() => new Promise<boolean>(() => {}))
    const pending = ws.call('write_file', { path: 'a.txt', content: 'x' }, { confirm, signal: controller.signal })
    await vi.waitFor(() => expect(confirm).toHaveBeenCalled())
    controller.abort()
    const result = await pending
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(read(join(root, 'a.txt'))).toBe('a\n')
  })

  it('aborted while pending and then answered yes: still ABORTED', async () => {
    const { ws, root } = tempWorkspace()
    const controller = new AbortController()
    const confirm: ConfirmHandler = async () => {
      controller.abort()
      await sleep(10)
      return true
    }
    for (const [tool, args] of [
      ['append_file', { path: 'a.txt', content: 'x' }],
      ['create_directory', { path: 'd' }],
    ] as const) {
      const result = await ws.call(tool, args, { confirm, signal: controller.signal })
      expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    }
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    expect(existsSync(join(root, 'd'))).toBe(false)
  })

  it('a signal that is never aborted does not disturb the call', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const controller = new AbortController()
    expect((await ws.call('write_file', { path: 'a.txt', content: 'x' }, { signal: controller.signal })).status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('x')
  })

  it('aborting after the call finished changes nothing', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const controller = new AbortController()
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' }, { signal: controller.signal })
    controller.abort()
    expect(result.status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('x')
  })

  it('a read aborted before the call returns ABORTED and no content', async () => {
    const { ws, root } = tempWorkspace()
    writeFileSync(join(root, 'a.txt'), 'secret\n')
    const controller = new AbortController()
    controller.abort()
    const result = await ws.call('read_file', { path: 'a.txt' }, { signal: controller.signal })
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(result.output).not.toContain(numbered(1, 'secret'))
  })
})
