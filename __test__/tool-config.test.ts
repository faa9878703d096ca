/** readOnly, disabled and renamed tools, unknown tools (../docs/hosts.md#the-workspace-api). */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace, type ConfirmHandler } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { numbered, read, writeTree } from './helpers/files.js'

const WRITE_TOOLS = ['write_file', 'append_file', 'edit_file', 'create_directory'] as const
const READ_TOOLS = ['read_file', 'list_directory', 'cwd_get', 'cwd_push', 'cwd_pop'] as const

const writeArgs: Record<(typeof WRITE_TOOLS)[number], Record<string, unknown>> = {
  write_file: { path: 'a.txt', content: 'x' },
  append_file: { path: 'a.txt', content: 'x' },
  edit_file: { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b' }] },
  create_directory: { path: 'd' },
}

const toolNames = (defs: Array<{ name: string }>): string[] => defs.map((d) => d.name)

describe('definitions', () => {
  it('lists every tool of this issue by default, each with a description and a closed schema', () => {
    const { ws } = tempWorkspace()
    const defs = ws.definitions()
    expect(toolNames(defs)).toEqual(expect.arrayContaining([...WRITE_TOOLS, ...READ_TOOLS]))
    for (const def of defs) {
      expect(def.description.length).toBeGreaterThan(20)
      expect(def.inputSchema).toMatchObject({ type: 'object', additionalProperties: false })
    }
    const byName = Object.fromEntries(defs.map((d) => [d.name, d]))
    for (const name of WRITE_TOOLS) expect(byName[name]!.annotations.readOnly, name).toBe(false)
    for (const name of READ_TOOLS) expect(byName[name]!.annotations.readOnly, name).toBe(true)
    expect(byName.read_file!.inputSchema.required).toEqual(['path'])
    expect(byName.write_file!.inputSchema.required).toEqual(expect.arrayContaining(['path', 'content']))
    expect(byName.list_directory!.inputSchema.required).toEqual([])
  })
})

describe('readOnly', () => {
  it('write tools are absent from definitions; read and cwd tools stay', () => {
    const { ws } = tempWorkspace({ readOnly: true })
    const names = toolNames(ws.definitions())
    for (const name of WRITE_TOOLS) expect(names).not.toContain(name)
    expect(names).toEqual(expect.arrayContaining([...READ_TOOLS]))
    for (const def of ws.definitions()) expect(def.annotations.readOnly, def.name).toBe(true)
  })

  it.each(WRITE_TOOLS)('calling %s is READ_ONLY, even with every permission and a yes handler, and nothing changes', async (tool) => {
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const { ws, root } = tempWorkspace({
      readOnly: true,
      confirm,
      permissions: { cwdWriteFile: true, globalWriteFile: true },
    })
    writeTree(root, { 'a.txt': 'a\n' })
    const result = await ws.call(tool as string, writeArgs[tool])
    expect(result).toMatchObject({ status: 'error', code: 'READ_ONLY' })
    expect(result.output.length).toBeGreaterThan(0)
    expect(confirm).not.toHaveBeenCalled()
    expect(read(join(root, 'a.txt'))).toBe('a\n')
    expect(existsSync(join(root, 'd'))).toBe(false)
  })

  it('reading, listing and the cwd stack still work', async () => {
    const { ws, root } = tempWorkspace({ readOnly: true })
    writeTree(root, { 'sub/a.txt': 'a\n' })
    expect((await ws.call('cwd_push', { path: 'sub' })).status).toBe('ok')
    expect((await ws.call('read_file', { path: 'a.txt' })).output).toBe(numbered(1, 'a'))
    expect((await ws.call('list_directory', {})).status).toBe('ok')
    expect((await ws.call('cwd_pop', {})).status).toBe('ok')
  })
})

describe('a disabled tool', () => {
  it('is absent from definitions and its calls are TOOL_DISABLED, changing nothing', async () => {
    const { ws, root } = tempWorkspace({
      tools: { write_file: { enabled: false }, read_file: { enabled: false } },
      permissions: { cwdWriteFile: true },
    })
    writeTree(root, { 'a.txt': 'a\n' })
    const names = toolNames(ws.definitions())
    expect(names).not.toContain('write_file')
    expect(names).not.toContain('read_file')
    expect(names).toContain('append_file')
    const write = await ws.call('write_file', { path: 'a.txt', content: 'x' })
    expect(write).toMatchObject({ status: 'error', code: 'TOOL_DISABLED' })
    expect(read(join(root, 'a.txt'))).toBe('a\n')
    const readResult = await ws.call('read_file', { path: 'a.txt' })
    expect(readResult).toMatchObject({ status: 'error', code: 'TOOL_DISABLED' })
    expect(readResult.output).not.toContain(numbered(1, 'a'))
    // Other tools are unaffected.
    expect((await ws.call('append_file', { path: 'a.txt', content: 'b\n' })).status).toBe('ok')
  })

  it('enabled: true changes nothing', () => {
    const { ws } = tempWorkspace({ tools: { read_file: { enabled: true } } })
    expect(toolNames(ws.definitions())).toContain('read_file')
  })

  it('a disabled and renamed tool is TOOL_DISABLED under either name', async () => {
    const { ws } = tempWorkspace({ tools: { read_file: { enabled: false, name: 'cat' } } })
    expect(toolNames(ws.definitions())).not.toContain('cat')
    expect((await ws.call('cat', { path: 'x' })).code).toBe('TOOL_DISABLED')
    expect((await ws.call('read_file', { path: 'x' })).code).toBe('TOOL_DISABLED')
  })
})

describe('a renamed tool', () => {
  it('definitions and calls use the new name; the old name is UNKNOWN_TOOL', async () => {
    const { ws, root } = tempWorkspace({
      tools: { read_file: { name: 'view_file' }, write_file: { name: 'save_file' } },
      permissions: { cwdWriteFile: true },
    })
    const names = toolNames(ws.definitions())
    expect(names).toContain('view_file')
    expect(names).toContain('save_file')
    expect(names).not.toContain('read_file')
    expect(names).not.toContain('write_file')
    expect(ws.definitions().find((d) => d.name === 'view_file')!.inputSchema.required).toEqual(['path'])

    expect((await ws.call('save_file', { path: 'a.txt', content: 'hi\n' })).status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('hi\n')
    expect((await ws.call('view_file', { path: 'a.txt' })).output).toBe(numbered(1, 'hi'))

    const old = await ws.call('read_file', { path: 'a.txt' })
    expect(old).toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL' })
    expect(old.output).not.toContain(numbered(1, 'hi'))
    const oldWrite = await ws.call('write_file', { path: 'a.txt', content: 'changed' })
    expect(oldWrite.code).toBe('UNKNOWN_TOOL')
    expect(read(join(root, 'a.txt'))).toBe('hi\n')
  })

  it('formatCall of a tool renamed to the name of a disabled tool uses the renamed tool', () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const ws = new Workspace({
      root,
      trash: { dataDir },
      tools: { remove_dir: { enabled: false }, delete_file: { name: 'remove_dir' } },
    })
    expect(ws.formatCall('remove_dir', { path: 'a.txt', permanent: true })).toBe('a.txt (permanent)')
  })

  it('formatCall works with the new name', () => {
    const { ws } = tempWorkspace({ tools: { list_directory: { name: 'ls' } } })
    expect(ws.formatCall('ls', { path: 'src', recursive: true })).toBe('src (recursive)')
  })

  it('a renamed write tool is still removed by readOnly and refused with READ_ONLY', async () => {
    const { ws } = tempWorkspace({ readOnly: true, tools: { write_file: { name: 'save_file' } } })
    expect(toolNames(ws.definitions())).not.toContain('save_file')
    expect((await ws.call('save_file', { path: 'a', content: 'x' })).code).toBe('READ_ONLY')
  })
})

describe('an unknown tool', () => {
  it.each(['no_such_tool', 'READ_FILE', 'read_file ', '', 'delete_everything'])('%j is UNKNOWN_TOOL', async (name) => {
    const { ws } = tempWorkspace()
    const result = await ws.call(name, { path: 'a' })
    expect(result).toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL' })
    expect(result.output.length).toBeGreaterThan(0)
  })

  it('UNKNOWN_TOOL is decided before the arguments are looked at', async () => {
    const { ws } = tempWorkspace()
    expect((await ws.call('nope', 'not even an object')).code).toBe('UNKNOWN_TOOL')
  })
})

describe('formatCall', () => {
  it('a path tool with no range or flag gives the path exactly as the model gave it', () => {
    const { ws } = tempWorkspace()
    for (const tool of ['read_file', 'write_file', 'append_file', 'create_directory', 'list_directory', 'cwd_push']) {
      expect(ws.formatCall(tool, { path: ' ./odd  name.txt', content: 'x' }), tool).toBe(' ./odd  name.txt')
    }
    expect(ws.formatCall('list_directory', { path: 'build', recursive: true })).toBe('build (recursive)')
  })
})

describe('tool options are validated at construction', () => {
  it.each([
    [{ tools: { no_such_tool: {} } }, 'no_such_tool'],
    [{ tools: { write_file: { enabled: 'no' } } }, 'tools.write_file.enabled'],
    [{ tools: { write_file: { name: 5 } } }, 'tools.write_file.name'],
    [{ tools: { write_file: { name: '' } } }, 'tools.write_file.name'],
    [{ tools: { write_file: { name: 'read_file' } } }, 'tools.write_file.name'],
    [{ tools: { write_file: { name: 'x' }, read_file: { name: 'x' } } }, 'name'],
    [{ tools: { write_file: { bogus: true } } }, 'tools.write_file.bogus'],
    [{ readOnly: 1 }, 'readOnly'],
    [{ limits: { readMaxLines: 0 } }, 'limits.readMaxLines'],
    [{ limits: { listMaxEntries: -1 } }, 'limits.listMaxEntries'],
    [{ limits: { cwdMaxDepth: 1.5 } }, 'limits.cwdMaxDepth'],
    [{ limits: { writeMaxBytes: '1mb' } }, 'limits.writeMaxBytes'],
    [{ limits: { bogus: 1 } }, 'limits.bogus'],
    [{ permissions: { cwdWrite: true } }, 'permissions.cwdWrite'],
    [{ permissions: { cwdWriteFile: 'yes' } }, 'permissions.cwdWriteFile'],
    [{ allowedPaths: 'x' }, 'allowedPaths'],
    [{ confirmTimeoutMs: -1 }, 'confirmTimeoutMs'],
  ])('%j throws a TypeError naming %s', (options, name) => {
    const { root } = tempWorkspaceDirs()
    expect(() => new Workspace({ root, ...(options as object) })).toThrow(TypeError)
    expect(() => new Workspace({ root, ...(options as object) })).toThrow(name)
  })
})
