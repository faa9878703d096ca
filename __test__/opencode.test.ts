/**
 * `agent-fs-tools/opencode` driven by a context of opencode's shape (`__test__/hosts/opencode.test.ts`
 * runs it inside the real opencode): prefixed names, permission requests with every path, denials
 * and failures thrown as opencode expects, the diff in the metadata, aborts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { createOpencodePlugin, OpencodeToolError, type OpencodeAskInput, type OpencodeToolContext } from 'agent-fs-tools/opencode'
import { siblingDir } from './helpers/files.js'
import { tempWorkspaceDirs } from './helpers/temp.js'

/** The plugin's tools for a project at a fresh root (its worktree). */
async function pluginTools(options: Parameters<typeof createOpencodePlugin>[0] = {}) {
  const { root, dataDir } = tempWorkspaceDirs()
  const hooks = await createOpencodePlugin({ ...options, trash: { dataDir } })({ directory: root, worktree: root })
  return { root, tools: hooks.tool }
}

/** An opencode tool context whose `ask` records requests and allows, or throws as a deny rule does. */
function context(allow = true, extra: Partial<OpencodeToolContext> = {}) {
  const asked: OpencodeAskInput[] = []
  const ctx: OpencodeToolContext = {
    directory: '',
    worktree: '',
    abort: new AbortController().signal,
    metadata: vi.fn(),
    ask: async (input) => {
      asked.push(input)
      if (!allow) throw new Error('The user has specified a rule which prevents you from using this specific tool call.')
    },
    ...extra,
  }
  return { ctx, asked }
}

describe('names', () => {
  it('every tool is offered as fs_<name>, and the descriptions name the others that way', async () => {
    const { tools } = await pluginTools()
    const names = Object.keys(tools)
    expect(names).toContain('fs_apply_patch')
    expect(names).toContain('fs_glob')
    expect(names.every((name) => name.startsWith('fs_'))).toBe(true)
    const description = tools['fs_edit_file']!.description
    expect(description).toContain('fs_read_file')
    expect(description).not.toMatch(/(?<!fs_)\bread_file\b/)
  })

  it('the prefix is configurable and combines with a rename', async () => {
    const { tools } = await pluginTools({ prefix: 'afs_', tools: { delete_file: { name: 'remove_file' }, grep: { enabled: false } } })
    expect(Object.keys(tools)).toContain('afs_remove_file')
    expect(Object.keys(tools)).not.toContain('afs_grep')
  })

  it('args are a zod shape opencode can wrap in z.object', async () => {
    const { tools } = await pluginTools()
    const args = tools['fs_write_file']!.args
    expect(Object.keys(args).sort()).toEqual(['content', 'path'])
    expect(args['path']!.safeParse('a.txt').success).toBe(true)
  })
})

describe('permission requests (ctx.ask)', () => {
  it('a patch asks once, named after the tool, with every path as a pattern relative to the worktree, and the diff', async () => {
    const { root, tools } = await pluginTools()
    writeFileSync(join(root, 'a.txt'), 'one\n')
    writeFileSync(join(root, 'b.txt'), 'two\n')
    const { ctx, asked } = context(true, { worktree: root })
    const input = '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-two\n+TWO\n*** End Patch'
    const out = await tools['fs_apply_patch']!.execute({ input }, ctx)
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ permission: 'fs_apply_patch', patterns: ['a.txt', 'b.txt'], always: ['*'] })
    expect(asked[0]!.metadata['diff']).toContain('--- a/b.txt')
    expect(out.output.startsWith('Success. Updated the following files:')).toBe(true)
    expect(out.metadata['diff']).toContain('+TWO')
    expect(out.title).toBe('a.txt, b.txt')
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('TWO\n')
  })

  it('a deny rule or a rejected prompt (ask throws) is a denied result, thrown as a tool failure; nothing changes', async () => {
    const { root, tools } = await pluginTools()
    const { ctx } = context(false, { worktree: root })
    const failure = await tools['fs_write_file']!.execute({ path: 'a.txt', content: 'x' }, ctx).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(OpencodeToolError)
    expect((failure as OpencodeToolError).status).toBe('denied')
    expect((failure as OpencodeToolError).message).toContain('The user denied this write.')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('reads ask too (opencode decides), and a path outside the project is refused without asking', async () => {
    const { root, tools } = await pluginTools()
    writeFileSync(join(root, 'a.txt'), 'hello\n')
    const { ctx, asked } = context(true, { worktree: root })
    expect((await tools['fs_read_file']!.execute({ path: 'a.txt' }, ctx)).output).toContain('hello')
    expect(asked.map((a) => a.permission)).toEqual(['fs_read_file'])
    const outside = join(siblingDir(root), 'x.txt')
    const failure = (await tools['fs_write_file']!.execute({ path: outside, content: 'x' }, ctx).catch((error: unknown) => error)) as OpencodeToolError
    expect(failure.code).toBe('PATH_NOT_ALLOWED')
    expect(asked).toHaveLength(1)
  })

  it('allowedPaths: null reaches outside the project; the request says so and uses the absolute path', async () => {
    const { root, tools } = await pluginTools({ allowedPaths: null })
    const outside = join(siblingDir(root), 'x.txt')
    const { ctx, asked } = context(true, { worktree: root })
    await tools['fs_write_file']!.execute({ path: outside, content: 'x' }, ctx)
    expect(asked[0]!.patterns).toEqual([outside])
    expect(asked[0]!.metadata['detail']).toBe(`${outside}\nOutside the project (${root}): ${outside}`)
  })
})

describe('abort and progress', () => {
  it("opencode's abort signal stops the call: ABORTED, thrown, nothing changed", async () => {
    const { root, tools } = await pluginTools()
    const controller = new AbortController()
    controller.abort()
    const { ctx } = context(true, { worktree: root, abort: controller.signal })
    const failure = (await tools['fs_write_file']!.execute({ path: 'a.txt', content: 'x' }, ctx).catch((error: unknown) => error)) as OpencodeToolError
    expect(failure.code).toBe('ABORTED')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('progress goes to ctx.metadata as a title', async () => {
    const { root, tools } = await pluginTools()
    mkdirSync(join(root, 'dir'))
    writeFileSync(join(root, 'dir/x.txt'), 'needle\n')
    const { ctx } = context(true, { worktree: root })
    await tools['fs_grep']!.execute({ pattern: 'needle' }, ctx)
    expect(ctx.metadata).toHaveBeenCalledWith({ title: expect.stringMatching(/^Working: /) })
  })
})
