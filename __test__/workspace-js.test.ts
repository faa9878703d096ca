/**
 * The JS layer of `Workspace` (what the native core cannot see): option errors as TypeErrors,
 * strict argument serialisation, confirm-handler mapping, abort wiring, definition caching.
 */
import { existsSync, readFileSync } from 'node:fs'
import { getEventListeners } from 'node:events'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { ERROR_CODES, Workspace, type ConfirmHandler } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'

describe('new Workspace', () => {
  it('throws a TypeError for a non-object', () => {
    expect(() => new Workspace(undefined as never)).toThrow(TypeError)
    expect(() => new Workspace('/tmp' as never)).toThrow(/options/)
    expect(() => new Workspace([] as never)).toThrow(TypeError)
  })

  it('turns the native InvalidArg error into a TypeError naming the option', () => {
    expect(() => new Workspace({} as never)).toThrow(TypeError)
    expect(() => new Workspace({} as never)).toThrow(/^root/)
    const { root } = tempWorkspaceDirs()
    expect(() => new Workspace({ root, readOnly: 'yes' as never })).toThrow(TypeError)
    expect(() => new Workspace({ root, readOnly: 'yes' as never })).toThrow(/readOnly/)
    expect(() => new Workspace({ root, tools: { no_such_tool: {} } as never })).toThrow(/no_such_tool/)
  })

  it('validates what only JS can see', () => {
    const { root } = tempWorkspaceDirs()
    expect(() => new Workspace({ root, confirm: 'yes' as never })).toThrow(new TypeError('confirm: must be a function'))
    expect(() => new Workspace({ root, limits: { readMaxBytes: 10n as never } })).toThrow(
      new TypeError('limits.readMaxBytes: must be a JSON value, got a bigint'),
    )
    expect(() => new Workspace({ root, limits: { readMaxLines: Number.NaN } })).toThrow(/limits\.readMaxLines/)
  })

  it('accepts a confirm function (it stays in JS)', () => {
    const { root } = tempWorkspaceDirs()
    expect(() => new Workspace({ root, confirm: () => true })).not.toThrow()
  })
})

describe('definitions', () => {
  it('returns a fresh copy each time', () => {
    const { ws } = tempWorkspace()
    const first = ws.definitions()
    first[0]!.name = 'mutated'
    first.pop()
    const second = ws.definitions()
    expect(second[0]!.name).not.toBe('mutated')
    expect(second.length).toBe(first.length + 1)
  })

  it('gives closed object schemas and annotations', () => {
    const { ws } = tempWorkspace()
    for (const def of ws.definitions()) {
      expect(def.inputSchema).toMatchObject({ type: 'object', additionalProperties: false })
      expect(Array.isArray(def.inputSchema.required)).toBe(true)
      expect(typeof def.annotations.readOnly).toBe('boolean')
      expect(typeof def.annotations.destructive).toBe('boolean')
    }
  })
})

describe('call', () => {
  it('treats undefined args as {}', async () => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('cwd_get', undefined)
    expect(result.status).toBe('ok')
    expect(result.output).toContain(`CWD: ${root}`)
  })

  it('returns INVALID_ARGUMENTS naming the field for values JSON cannot carry, changing nothing', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const bigint = await ws.call('write_file' as string, { path: 'a.txt', content: 1n })
    expect(bigint).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(bigint.output).toContain('content')
    const cyclic: Record<string, unknown> = { path: 'a.txt' }
    cyclic.content = cyclic
    const cycle = await ws.call('write_file' as string, cyclic)
    expect(cycle).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(cycle.output).toContain('content')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('resolves an unknown tool to UNKNOWN_TOOL', async () => {
    const { ws } = tempWorkspace()
    await expect(ws.call('no_such_tool', {})).resolves.toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL' })
    await expect(ws.call(42 as never, {})).resolves.toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL' })
  })

  it('only the documented error codes come back (docs/tools.md#error-codes)', async () => {
    const { ws } = tempWorkspace()
    const results = await Promise.all([
      ws.call('read_file', { path: 'missing.txt' }),
      ws.call('read_file' as string, {}),
      ws.call('nope', {}),
    ])
    for (const result of results) expect(ERROR_CODES).toContain(result.code)
  })

  it('rejects (host bug) for a non-function ctx.confirm', async () => {
    const { ws } = tempWorkspace()
    await expect(ws.call('cwd_get', {}, { confirm: 1 as never })).rejects.toThrow(TypeError)
  })
})

describe('confirmation', () => {
  const denyCases: Array<[string, ConfirmHandler]> = [
    ['returns false', () => false],
    ['throws', () => {
      throw new Error('boom')
    }],
    ['rejects', () => Promise.reject(new Error('boom'))],
    ['returns a truthy non-boolean', () => 'yes' as never],
    ['resolves to 1', () => Promise.resolve(1 as never)],
  ]

  it.each(denyCases)('a handler that %s denies and nothing changes', async (_name, handler) => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' }, { confirm: handler })
    expect(result.status).toBe('denied')
    expect(result.output).toContain('The user denied this write.')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('true (sync or async) approves; the request carries label, detail and diff', async () => {
    const { ws, root } = tempWorkspace()
    const handler = vi.fn(async () => true)
    const result = await ws.call('write_file', { path: 'a.txt', content: 'hello\n' }, { confirm: handler })
    expect(result.status).toBe('ok')
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('hello\n')
    expect(handler).toHaveBeenCalledOnce()
    expect(handler.mock.calls[0]).toEqual([
      expect.objectContaining({
        tool: 'write_file',
        label: 'Write file?',
        path: join(root, 'a.txt'),
        detail: join(root, 'a.txt'),
        diff: expect.stringContaining('+hello'),
      }),
    ])
    const sync = await ws.call('write_file', { path: 'b.txt', content: 'x' }, { confirm: () => true })
    expect(sync.status).toBe('ok')
  })

  it('ctx.confirm overrides the workspace handler', async () => {
    const workspaceHandler = vi.fn(() => false)
    const { ws } = tempWorkspace({ confirm: workspaceHandler })
    expect((await ws.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe('denied')
    expect(workspaceHandler).toHaveBeenCalledOnce()
    expect((await ws.call('write_file', { path: 'a.txt', content: 'x' }, { confirm: () => true })).status).toBe('ok')
    expect(workspaceHandler).toHaveBeenCalledOnce()
  })

  it('ctx.permissions skip the prompt', async () => {
    const handler = vi.fn(() => false)
    const { ws } = tempWorkspace({ confirm: handler })
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' }, { permissions: { cwdWriteFile: true } })
    expect(result.status).toBe('ok')
    expect(handler).not.toHaveBeenCalled()
  })
})

describe('abort', () => {
  it('an already aborted signal gives ABORTED and nothing changes', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const controller = new AbortController()
    controller.abort()
    const result = await ws.call('write_file', { path: 'a.txt', content: 'x' }, { signal: controller.signal })
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('aborting while the confirmation is pending gives ABORTED', async () => {
    const { ws, root } = tempWorkspace()
    const controller = new AbortController()
    const result = await ws.call(
      'write_file',
      { path: 'a.txt', content: 'x' },
      {
        signal: controller.signal,
        confirm: () => {
          controller.abort()
          return true
        },
      },
    )
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('removes its abort listener when the call is done', async () => {
    const { ws } = tempWorkspace()
    const controller = new AbortController()
    await ws.call('cwd_get', {}, { signal: controller.signal })
    await ws.call('read_file', { path: 'missing' }, { signal: controller.signal })
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('one signal shared by many calls: one listener, no MaxListenersExceededWarning, and an abort reaches every call', async () => {
    const { ws } = tempWorkspace()
    const warnings: Error[] = []
    const onWarning = (warning: Error): void => {
      warnings.push(warning)
    }
    process.on('warning', onWarning)
    try {
      const controller = new AbortController()
      let asked = 0
      // Every call waits on a prompt that is never answered, until the abort.
      const never: ConfirmHandler = () => {
        asked += 1
        return new Promise<boolean>(() => {})
      }
      const calls = Array.from({ length: 25 }, (_, i) =>
        ws.call('write_file', { path: `f${i}.txt`, content: 'x' }, { signal: controller.signal, confirm: never }),
      )
      await vi.waitFor(() => expect(asked).toBe(25))
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
      controller.abort()
      for (const result of await Promise.all(calls)) expect(result.code).toBe('ABORTED')
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('a ctx.signal that is not an AbortSignal is a TypeError naming it', async () => {
    const { ws } = tempWorkspace()
    await expect(ws.call('cwd_get', {}, { signal: {} as never })).rejects.toThrow(new TypeError('ctx.signal: must be an AbortSignal'))
  })
})

describe('formatCall and cwd', () => {
  it('formatCall gives the path as the model gave it', () => {
    const { ws } = tempWorkspace()
    expect(ws.formatCall('read_file', { path: './a b.txt' })).toBe('./a b.txt')
    expect(ws.formatCall('read_file', { path: 1n })).toBe('')
  })

  it('cwd() reports the root', () => {
    const { ws, root } = tempWorkspace()
    expect(ws.cwd()).toEqual({ cwd: root, projectRoot: root, depth: 0 })
  })
})
