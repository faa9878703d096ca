/** `agent-fs-tools/tomo`: Tomo-shaped tools driven by a context stub of exactly Tomo's shape. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTomoTools } from 'agent-fs-tools/tomo'
import type { TomoTool } from '../examples/tomo/tomo-types.js'
import { createUndoCommands } from '../examples/tomo/undo-command.js'
import { fileTools } from '../examples/tomo/register-tools.js'
import { siblingDir } from './helpers/files.js'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { TOMO_DEFAULT_PERMISSIONS, tomoContext } from './helpers/tomo-context.js'

function tomoTools(options: Parameters<typeof tempWorkspace>[0] = {}) {
  const made = tempWorkspace(options)
  // Assignable to Tomo's own Tool type: this line is the compile-time check.
  const tools: TomoTool[] = createTomoTools(made.ws)
  const byName = (name: string): TomoTool => {
    const found = tools.find((t) => t.name === name)
    if (!found) throw new Error(`no tool ${name}`)
    return found
  }
  return { ...made, tools, byName }
}

describe('createTomoTools shape', () => {
  it('has one Tomo tool per definition', () => {
    const { ws, tools } = tomoTools()
    const defs = ws.definitions()
    expect(tools.map((t) => t.name)).toEqual(defs.map((d) => d.name))
    for (const [i, tool] of tools.entries()) {
      expect(tool.description).toBe(defs[i]!.description)
      expect(tool.parameters).toEqual(defs[i]!.inputSchema)
      expect(typeof tool.argsSchema.safeParse).toBe('function')
      expect(typeof tool.formatCall).toBe('function')
      expect(typeof tool.execute).toBe('function')
      expect(tool.displayName).toMatch(/^[A-Z]/)
    }
  })

  it('uses the host names and display names', () => {
    const { tools, byName } = tomoTools({ tools: { read_file: { name: 'view_file' } } })
    expect(tools.some((t) => t.name === 'read_file')).toBe(false)
    expect(byName('view_file').displayName).toBe('View File')
    expect(byName('write_file').displayName).toBe('Write File')
    expect(byName('cwd_get').displayName).toBe('Current Directory')
    expect(byName('remove_dir').displayName).toBe('Remove Directory')
  })

  it('argsSchema validates like the tool', () => {
    const { byName } = tomoTools()
    expect(byName('write_file').argsSchema.safeParse({ path: 'a', content: 'x' }).success).toBe(true)
    expect(byName('write_file').argsSchema.safeParse({ path: 'a' }).success).toBe(false)
  })

  it('formatCall is the workspace header', () => {
    const { byName } = tomoTools()
    expect(byName('read_file').formatCall({ path: 'src/a.ts' })).toBe('src/a.ts')
    expect(byName('edit_file').formatCall({ path: 'a.ts', edits: [{}, {}, {}] })).toBe('a.ts (3 edits)')
  })
})

describe('execute', () => {
  it('write: asks Tomo confirm(label, { label, detail, diff }) with hunks only; a new file is counted, not echoed', async () => {
    const { byName, root } = tomoTools()
    const { context, confirm } = tomoContext()
    const result = await byName('write_file').execute({ path: 'a.txt', content: 'one\ntwo\n' }, context)
    const abs = join(root, 'a.txt')
    expect(confirm).toHaveBeenCalledOnce()
    const [message, options] = confirm.mock.calls[0]!
    expect(message).toBe('Write file?')
    expect(options).toEqual({ label: 'Write file?', detail: abs, diff: expect.stringMatching(/^@@ /) })
    expect(options!.diff).not.toMatch(/^(---|\+\+\+) /m)
    expect(result.status).toBe('ok')
    // The model wrote the text: it is told how many lines, not sent them back (issue 28).
    expect(result).toEqual({ status: 'ok', format: 'plain', output: `Created ${abs} (8 bytes, 2 lines)` })
    expect(readFileSync(abs, 'utf8')).toBe('one\ntwo\n')
  })

  it('edit and append give diff results too', async () => {
    const { byName, root } = tomoTools()
    writeFileSync(join(root, 'a.txt'), 'one\ntwo\n')
    const { context } = tomoContext()
    const edit = await byName('edit_file').execute({ path: 'a.txt', edits: [{ oldString: 'two', newString: 'TWO' }] }, context)
    expect(edit).toMatchObject({ status: 'ok', format: 'diff' })
    expect(edit.output).toBe('@@ -1,2 +1,2 @@\n one\n-two\n+TWO')
    const append = await byName('append_file').execute({ path: 'a.txt', content: 'three\n' }, context)
    expect(append).toMatchObject({ status: 'ok', format: 'diff' })
    expect(append.output).toMatch(/^@@ .*\n(.*\n)*\+three$/)
  })

  it('a file that holds a diff is read as text, plain, and a write that keeps diff-like lines shows only its own change', async () => {
    const { byName, root } = tomoTools()
    const held = '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n'
    writeFileSync(join(root, 'x.patch'), held)
    const { context } = tomoContext()
    const read = await byName('read_file').execute({ path: 'x.patch' }, context)
    expect(read).toMatchObject({ status: 'ok', format: 'plain' })
    expect(read.output).toContain('+++ b/x')
    const written = await byName('write_file').execute({ path: 'x.patch', content: held.replace('+new', '+newer') }, context)
    expect(written).toMatchObject({ status: 'ok', format: 'diff' })
    // Its hunk, then where the old content went.
    expect(written.output).toMatch(/^@@ -2,4 \+2,4 @@\n \+\+\+ b\/x\n @@ -1 \+1 @@\n -old\n-\+new\n\+\+newer\nThe previous content is in the trash at [^\n]+\.$/)
  })

  it('apply_patch: the prompt shows each file by name above its hunks; the result is the documented output, plain', async () => {
    const { byName, root } = tomoTools()
    writeFileSync(join(root, 'a.txt'), 'one\ntwo\n')
    const { context, confirm } = tomoContext()
    const input = '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Add File: b.txt\n+bee\n*** End Patch\n'
    const result = await byName('apply_patch').execute({ input }, context)
    expect(confirm.mock.calls[0]![1]!.diff).toBe('a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\nb.txt (new file)\n@@ -0,0 +1 @@\n+bee')
    expect(result).toMatchObject({ status: 'ok', format: 'plain' })
    expect(result.output.startsWith('Success. Updated the following files:\nM a.txt\nA b.txt\n')).toBe(true)
    expect(result.output).toContain('\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n')
  })

  it('a large rewrite is bounded like ws.call, and keeps where the old content went in the trash', async () => {
    const { ws, byName, root } = tomoTools({ permissions: { cwdWriteFile: true } })
    const line = (i: number, word: string) => `${word} ${i} ${'x'.repeat(90)}\n`
    writeFileSync(join(root, 'big.txt'), Array.from({ length: 10_000 }, (_, i) => line(i, 'old')).join(''))
    // Every other line rewritten (a whole rewrite is counted, not diffed).
    const content = Array.from({ length: 10_000 }, (_, i) => line(i, i % 2 === 0 ? 'new' : 'old')).join('')
    const { context } = tomoContext({ permissions: { ...TOMO_DEFAULT_PERMISSIONS, cwdWriteFile: true } })
    expect((await byName('read_file').execute({ path: 'big.txt' }, context)).status).toBe('ok')
    const result = await byName('write_file').execute({ path: 'big.txt', content }, context)
    expect(result).toMatchObject({ status: 'ok', format: 'diff' })
    expect(result.output).toMatch(/^@@ /)
    expect(result.output.length).toBeLessThan(70_000)
    expect(result.output).toMatch(/\n\[diff truncated: \d+ more lines not shown; read_file shows the file as it is now\]\n/)
    const archive = (await ws.trashList())[0]!.archivePath
    expect(result.output.endsWith(`\nThe previous content is in the trash at ${archive}; restore it with restore_file { "trashedPath": ${JSON.stringify(archive)} }.`)).toBe(true)
    expect(readFileSync(join(root, 'big.txt'), 'utf8')).toBe(content)
  })

  it('a "no" from Tomo is a plain denied result and nothing is written', async () => {
    const { byName, root } = tomoTools()
    const { context } = tomoContext({}, false)
    const result = await byName('write_file').execute({ path: 'a.txt', content: 'x' }, context)
    expect(result).toEqual({ status: 'denied', format: 'plain', output: expect.stringContaining('The user denied this write.') })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('a throwing Tomo confirm is a denial', async () => {
    const { byName } = tomoTools()
    const { context } = tomoContext({
      confirm: async () => {
        throw new Error('ui gone')
      },
    })
    const result = await byName('write_file').execute({ path: 'a.txt', content: 'x' }, context)
    expect(result.status).toBe('denied')
  })

  it('permissions come from the Tomo context of each call', async () => {
    const { byName } = tomoTools()
    const granted = tomoContext({ permissions: { ...TOMO_DEFAULT_PERMISSIONS, cwdWriteFile: true } }, false)
    const ok = await byName('write_file').execute({ path: 'a.txt', content: 'x' }, granted.context)
    expect(ok.status).toBe('ok')
    expect(granted.confirm).not.toHaveBeenCalled()
    const noRead = tomoContext({ permissions: { ...TOMO_DEFAULT_PERMISSIONS, cwdReadFile: false } }, false)
    const denied = await byName('read_file').execute({ path: 'a.txt' }, noRead.context)
    expect(denied.status).toBe('denied')
    expect(noRead.confirm).toHaveBeenCalledWith('Read file?', expect.objectContaining({ label: 'Read file?' }))
  })

  it('a relabelling sub-agent confirm still decides', async () => {
    const { byName } = tomoTools()
    const { context: parent, confirm } = tomoContext()
    const child = { ...parent, confirm: (message: string, options?: { label?: string; detail?: string; diff?: string }) => parent.confirm(`[sub-agent] ${message}`, options) }
    const result = await byName('write_file').execute({ path: 'a.txt', content: 'x' }, child)
    expect(result.status).toBe('ok')
    expect(confirm).toHaveBeenCalledWith('[sub-agent] Write file?', expect.objectContaining({ label: 'Write file?' }))
  })

  it('an aborted Tomo signal gives a plain error and changes nothing', async () => {
    const { byName, root } = tomoTools()
    const controller = new AbortController()
    controller.abort()
    const { context } = tomoContext({ signal: controller.signal })
    const result = await byName('write_file').execute({ path: 'a.txt', content: 'x' }, context)
    expect(result).toMatchObject({ status: 'error', format: 'plain' })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('read and other tools give the documented output as plain text', async () => {
    const { byName, root } = tomoTools()
    writeFileSync(join(root, 'a.txt'), 'hello\n')
    const { context, confirm } = tomoContext()
    const read = await byName('read_file').execute({ path: 'a.txt' }, context)
    expect(read).toEqual({ status: 'ok', format: 'plain', output: expect.stringContaining('   1 | hello') })
    expect(confirm).not.toHaveBeenCalled()
    const cwd = await byName('cwd_get').execute({}, context)
    expect(cwd).toEqual({ status: 'ok', format: 'plain', output: expect.stringContaining(`CWD: ${root}`) })
    const missing = await byName('read_file').execute({ path: 'nope.txt' }, context)
    expect(missing).toEqual({ status: 'error', format: 'plain', output: expect.stringContaining('file not found') })
  })

  it('invalid arguments are a plain error result, not a throw', async () => {
    const { byName } = tomoTools()
    const { context } = tomoContext()
    await expect(byName('write_file').execute({ path: 'a.txt' }, context)).resolves.toMatchObject({
      status: 'error',
      format: 'plain',
    })
  })
})

describe("examples/tomo/register-tools.ts: the workspace as Tomo's config means it", () => {
  // The example keeps Tomo's default data directory; the tests keep theirs out of $HOME.
  let saved: string | undefined
  beforeEach(() => {
    saved = process.env.AGENT_FS_TOOLS_DATA_DIR
    process.env.AGENT_FS_TOOLS_DATA_DIR = tempWorkspaceDirs().dataDir
  })
  afterEach(() => {
    if (saved === undefined) delete process.env.AGENT_FS_TOOLS_DATA_DIR
    else process.env.AGENT_FS_TOOLS_DATA_DIR = saved
  })

  it("Tomo's default permissions: nothing outside the project is reachable; a global* key opens it, asking with the path marked", async () => {
    const { root } = tempWorkspace()
    const outside = join(siblingDir(root), 'x.txt')
    const tool = (tools: TomoTool[], name: string) => tools.find((t) => t.name === name)!
    const defaults = fileTools({ permissions: { ...TOMO_DEFAULT_PERMISSIONS } }, root)
    const { context, confirm } = tomoContext()
    const refused = await tool(defaults, 'write_file').execute({ path: outside, content: 'x' }, context)
    expect(refused.status).toBe('error')
    expect(refused.output).toContain('outside the allowed directories')
    expect(confirm).not.toHaveBeenCalled()

    const opened = fileTools({ permissions: { ...TOMO_DEFAULT_PERMISSIONS, globalReadFile: true } }, root)
    const written = await tool(opened, 'write_file').execute({ path: outside, content: 'x' }, context)
    expect(written.status).toBe('ok')
    expect(confirm).toHaveBeenCalledWith('Write file?', expect.objectContaining({ detail: `${outside}\nOutside the project (${root}): ${outside}` }))
  })

  it("Tomo's tool switches turn ours off; its delete tool keeps its name", () => {
    const { root } = tempWorkspace()
    const tools = fileTools({ permissions: { ...TOMO_DEFAULT_PERMISSIONS }, tools: { grep: { enabled: false }, editFile: { enabled: false } } }, root)
    const names = tools.map((t) => t.name)
    expect(names).not.toContain('grep')
    expect(names).not.toContain('edit_file')
    expect(names).not.toContain('apply_patch')
    expect(names).toContain('remove_file')
    expect(names).toContain('glob')
  })
})

describe("Tomo's /undo, /undo-session and /changes (examples/tomo/undo-command.ts)", () => {
  it('lists the history, undoes the latest change, and the whole session', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true }, trash: { sessionId: 'tomo-1' } })
    writeFileSync(join(root, 'a.txt'), 'one\n')
    await ws.call('read_file', { path: 'a.txt' })
    await ws.call('write_file', { path: 'a.txt', content: 'two\n' })
    await ws.call('write_file', { path: 'b.txt', content: 'new\n' })
    const commands = createUndoCommands(ws, 'tomo-1')
    expect(commands.map((c) => c.name)).toEqual(['undo', 'undo-session', 'changes'])
    const run = (name: string) => commands.find((c) => c.name === name)!.handler({ usage: null, contextWindow: 8192 })
    expect(await run('changes')).toMatch(/write_file b\.txt[\s\S]*write_file a\.txt/)
    expect(await run('undo')).toContain('Undid')
    expect(existsSync(join(root, 'b.txt'))).toBe(false)
    // The rest of the session: a.txt back to what it was.
    expect(await run('undo-session')).toContain('Undid')
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\n')
  })
})

describe('progress', () => {
  it("passes the call's progress to Tomo's onProgress, in words", async () => {
    const { ws, root } = tempWorkspace()
    writeFileSync(join(root, 'x.txt'), 'needle\n')
    const outputs: string[] = []
    const { context } = tomoContext({ onProgress: (output) => outputs.push(output) })
    const grep = createTomoTools(ws).find((t) => t.name === 'grep')!
    expect((await grep.execute({ pattern: 'needle' }, context)).status).toBe('ok')
    expect(outputs[0]).toBe('Working: 0 files')
  })
})
