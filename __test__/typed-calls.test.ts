/**
 * Typed calls (issue 21 item 4): `ws.call` by canonical name takes that tool's arguments and gives
 * its `data`; any other name still works with `unknown` arguments. The `expectTypeOf` assertions
 * are checked by `tsc` (typecheck.test.ts); the `@ts-expect-error` lines fail it if they compile.
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { CallContext, ToolArgs, ToolData, ToolName, ToolResult, TrashEntry, Workspace } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'

describe('typed calls', () => {
  it('a canonical name takes its arguments and gives its data', async () => {
    const { ws } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const written = await ws.call('write_file', { path: 'a.txt', content: 'hi\n' })
    expectTypeOf(written).toEqualTypeOf<ToolResult<ToolData['write_file']>>()
    expectTypeOf(written.data).toEqualTypeOf<ToolData['write_file'] | undefined>()
    expectTypeOf(written.data!.created).toEqualTypeOf<boolean>()
    expect(written.data?.created).toBe(true)

    const read = await ws.call('read_file', { path: 'a.txt', startLine: 1 })
    expectTypeOf(read.data!.totalLines).toEqualTypeOf<number>()
    expect(read.data?.totalLines).toBe(1)

    const trash = await ws.call('trash_list')
    expectTypeOf(trash.data!.entries).toEqualTypeOf<TrashEntry[]>()
    const cwd = await ws.call('cwd_get', {}, { signal: new AbortController().signal })
    expectTypeOf(cwd.data!.depth).toEqualTypeOf<number>()
    expect(cwd.data?.depth).toBe(0)
  })

  it('wrong arguments for a canonical name do not compile', () => {
    const ws = undefined as unknown as Workspace
    const never = (): void => {
      // @ts-expect-error path must be a string
      void ws.call('write_file', { path: 1, content: 'x' })
      // @ts-expect-error content is required
      void ws.call('write_file', { path: 'a' })
      // @ts-expect-error an unknown argument
      void ws.call('delete_file', { path: 'a', force: true })
      // @ts-expect-error edits need oldString and newString
      void ws.call('edit_file', { path: 'a', edits: [{ oldString: 'x' }] })
      // @ts-expect-error a tool with required arguments needs them
      void ws.call('read_file')
    }
    expect(typeof never).toBe('function')
  })

  it("any other name (a renamed tool, the model's name) takes unknown arguments and gives plain data", async () => {
    const { ws } = tempWorkspace({ tools: { delete_file: { name: 'remove_file' } } })
    const fromModel: string = 'read_file'
    const modelArgs: unknown = { path: 'missing.txt' }
    const result = await ws.call(fromModel, modelArgs)
    expectTypeOf(result).toEqualTypeOf<ToolResult>()
    expect(result.code).toBe('NOT_FOUND')
    const renamed = await ws.call('remove_file', { path: 'missing.txt' })
    expectTypeOf(renamed.data).toEqualTypeOf<Record<string, unknown> | undefined>()
    expect(renamed.code).toBe('NOT_FOUND')
    // A typed result is still a ToolResult for code that takes any.
    const anyResult: ToolResult = await ws.call('cwd_get')
    expect(anyResult.status).toBe('ok')
  })

  it('the maps cover every tool, and the parameters line up', () => {
    expectTypeOf<keyof ToolArgs>().toEqualTypeOf<ToolName>()
    expectTypeOf<keyof ToolData>().toEqualTypeOf<ToolName>()
    expectTypeOf<ToolArgs['move_file']>().toEqualTypeOf<{ source: string; destination: string; overwrite?: boolean | null }>()
    expectTypeOf<Parameters<Workspace['check']>[2]>().toEqualTypeOf<{ permissions?: CallContext['permissions']; signal?: AbortSignal } | undefined>()
  })

  it('ToolName lists the tools a workspace defines', () => {
    const { ws } = tempWorkspace()
    const names: ToolName[] = ['read_file', 'write_file', 'append_file', 'edit_file', 'apply_patch', 'list_directory', 'create_directory', 'delete_file', 'remove_dir', 'move_file', 'copy_file', 'restore_file', 'trash_list', 'cwd_get', 'cwd_push', 'cwd_pop', 'glob', 'grep']
    expect(ws.definitions().map((d) => d.name).sort()).toEqual([...names].sort())
  })
})
