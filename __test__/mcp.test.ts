/**
 * The MCP server (`agent-fs-tools mcp`, ../docs/mcp-server.md), driven through the SDK's own `Client` over
 * stdio against the built CLI (`npm run build` first). Every server gets its own temporary root
 * and trash data directory (`AGENT_FS_TOOLS_DATA_DIR`).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ProgressNotificationSchema,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { confirmationForm, NO_ELICITATION_NOTE } from '../ts/cli/mcp/confirm.js'
import { MAX_MESSAGE_BYTES } from '../ts/cli/mcp/stdio.js'
import { STRUCTURED_DATA_MAX_BYTES, toCallToolResult, toMcpTool } from '../ts/cli/mcp/tools.js'
import { describeProgress } from '../ts/internal/progress.js'
import { tempWorkspaceDirs, type TempWorkspaceDirs } from './helpers/temp.js'
import { scaled } from './helpers/time'

const MAIN = resolve(__dirname, '..', 'dist', 'esm', 'cli', 'main.js')

/** What a test's client offers the server. */
interface ClientSetup {
  /** Extra command-line arguments after `mcp --root <root>`. */
  args?: string[]
  /** Declares the elicitation capability and answers with this handler. */
  elicit?: (params: ElicitRequestFormParams, signal: AbortSignal) => ElicitResult | Promise<ElicitResult>
  /** Declares the roots capability (with `listChanged`) and offers these directories; mutable. */
  roots?: string[]
}

interface Connected extends TempWorkspaceDirs {
  client: Client
  /** The server's stderr so far. */
  stderr: () => string
  /** Calls a tool and returns the result (never a JSON-RPC error for tool failures). */
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>
}

const clients: Client[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
})

/** Starts `agent-fs-tools mcp --root <fresh root> …` and connects an SDK client to it. */
async function connect(setup: ClientSetup = {}, dirs: TempWorkspaceDirs = tempWorkspaceDirs()): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', '--root', dirs.root, ...(setup.args ?? [])],
    env: { ...getDefaultEnvironment(), AGENT_FS_TOOLS_DATA_DIR: dirs.dataDir },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const client = new Client(
    { name: 'agent-fs-tools-test', version: '1.0.0' },
    {
      capabilities: {
        ...(setup.elicit !== undefined && { elicitation: { form: {} } }),
        ...(setup.roots !== undefined && { roots: { listChanged: true } }),
      },
    },
  )
  const { elicit, roots } = setup
  if (elicit !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      elicit(request.params as ElicitRequestFormParams, extra.signal),
    )
  }
  if (roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: roots.map((path) => ({ uri: pathToFileURL(path).href, name: path })),
    }))
  }
  clients.push(client)
  await client.connect(transport)
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
    (await client.callTool({ name, arguments: args })) as CallToolResult
  return { client, stderr: () => stderr, call, ...dirs }
}

/** The text content of a result (the ToolResult's `output`). */
function text(result: CallToolResult): string {
  const [first] = result.content
  if (first?.type !== 'text') throw new Error(`expected text content, got ${JSON.stringify(result.content)}`)
  return first.text
}

const yes = (): ElicitResult => ({ action: 'accept', content: { approve: true } })

describe('tools/list', () => {
  it('lists every enabled tool with its JSON Schema, description, annotations and output schema', async () => {
    const { client, root, dataDir } = await connect()
    const definitions = new Workspace({ root, trash: { dataDir } }).definitions()
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(definitions.map((d) => d.name))
    const idempotent = new Set(['read_file', 'list_directory', 'cwd_get', 'trash_list', 'glob', 'grep', 'create_directory'])
    for (const def of definitions) {
      const tool = tools.find((t) => t.name === def.name)!
      expect(tool.description).toBe(def.description)
      expect(tool.inputSchema).toEqual(def.inputSchema)
      expect(tool.annotations).toEqual({
        readOnlyHint: def.annotations.readOnly,
        destructiveHint: def.annotations.destructive,
        idempotentHint: idempotent.has(def.name),
        openWorldHint: false,
      })
      expect(tool.outputSchema).toMatchObject({ type: 'object', required: ['status'] })
      expect(Object.keys((tool.outputSchema as { properties: object }).properties)).toEqual(['status', 'code', 'data'])
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.annotations]))
    expect(byName.read_file).toMatchObject({ readOnlyHint: true, idempotentHint: true })
    expect(byName.write_file).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false })
    expect(byName.delete_file).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(byName.cwd_push).toMatchObject({ idempotentHint: false })
  })

  it('idempotency comes with the tool, whatever the host calls it', () => {
    const dirs = tempWorkspaceDirs()
    const renamed = new Workspace({
      root: dirs.root,
      trash: { dataDir: dirs.dataDir },
      tools: { read_file: { name: 'view' }, write_file: { name: 'read_file' } },
    })
    const hints = Object.fromEntries(renamed.definitions().map((d) => [d.name, toMcpTool(d).annotations]))
    expect(hints.view).toMatchObject({ readOnlyHint: true, idempotentHint: true })
    expect(hints.read_file).toMatchObject({ readOnlyHint: false, idempotentHint: false })
  })

  it('--read-only hides the write tools and refuses them with READ_ONLY', async () => {
    const { client, call, root, dataDir } = await connect({ args: ['--read-only'] })
    const { tools } = await client.listTools()
    const readOnly = new Workspace({ root, trash: { dataDir } })
      .definitions()
      .filter((d) => d.annotations.readOnly)
      .map((d) => d.name)
    expect(tools.map((t) => t.name)).toEqual(readOnly)
    expect(tools.map((t) => t.name)).not.toContain('write_file')
    const result = await call('write_file', { path: 'a.txt', content: 'x' })
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toMatchObject({ status: 'error', code: 'READ_ONLY' })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })
})

describe('tools/call', () => {
  it('writes, reads, edits with a diff, deletes into the trash and restores', async () => {
    const prompts: ElicitRequestFormParams[] = []
    const { call, root } = await connect({
      elicit: (params) => {
        prompts.push(params)
        return yes()
      },
    })
    const file = join(root, 'notes.txt')

    const written = await call('write_file', { path: 'notes.txt', content: 'one\ntwo\n' })
    expect(written.isError).toBeFalsy()
    expect(written.structuredContent).toMatchObject({ status: 'ok', data: { created: true } })
    expect(text(written)).toBe(`Created ${file} (8 bytes, 2 lines)`)
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n')

    const read = await call('read_file', { path: 'notes.txt' })
    expect(text(read)).toBe('   1 | one\n   2 | two')
    expect(read.structuredContent).toMatchObject({ status: 'ok' })

    const edited = await call('edit_file', { path: 'notes.txt', edits: [{ oldString: 'two', newString: 'three' }] })
    expect(text(edited)).toContain('\n-two\n+three')
    expect(edited.structuredContent).toEqual({ status: 'ok', data: expect.objectContaining({ edits: 1 }) })
    expect(readFileSync(file, 'utf8')).toBe('one\nthree\n')

    const deleted = await call('delete_file', { path: 'notes.txt' })
    expect(deleted.structuredContent).toMatchObject({ status: 'ok', data: { trashedTo: expect.stringMatching(/\.tar\.gz$/) } })
    expect(text(deleted)).toContain(`Removed ${file}`)
    expect(existsSync(file)).toBe(false)

    const listed = await call('trash_list')
    const trashedTo = (deleted.structuredContent as { data: { trashedTo: string } }).data.trashedTo
    expect(text(listed)).toContain(trashedTo)

    const restored = await call('restore_file', { trashedPath: trashedTo })
    expect(restored.structuredContent).toMatchObject({ status: 'ok' })
    expect(readFileSync(file, 'utf8')).toBe('one\nthree\n')

    expect(prompts.map((p) => p.message.split('\n')[0])).toEqual([
      `Write file? ${file}`,
      `Edit file? ${file}`,
      `Remove file? ${file}`,
      `Restore file? ${file}`,
    ])
  })

  it('the text is sent once: structuredContent carries status, code and data, not the output again', async () => {
    const dirs = tempWorkspaceDirs()
    const line = (i: number, word: string) => `${word} ${i} ${'x'.repeat(90)}\n`
    writeFileSync(join(dirs.root, 'big.txt'), Array.from({ length: 10_000 }, (_, i) => line(i, 'old')).join(''))
    const { call } = await connect({ elicit: yes }, dirs)
    // Every other line rewritten: a diff the model needs, cut near readMaxBytes.
    const content = Array.from({ length: 10_000 }, (_, i) => line(i, i % 2 === 0 ? 'new' : 'old')).join('')
    expect((await call('read_file', { path: 'big.txt' })).isError).toBeFalsy()
    const result = await call('write_file', { path: 'big.txt', content })
    const structured = result.structuredContent as Record<string, unknown>
    expect(structured.status).toBe('ok')
    expect(Object.keys(structured).sort()).toEqual(['data', 'status'])
    expect(text(result)).toMatch(/\[diff truncated: \d+ more lines not shown; read_file shows the file as it is now\]/)
    expect(text(result)).toContain('The previous content is in the trash at ')
    expect(text(result).length).toBeLessThan(70_000)
    expect(JSON.stringify(result).length).toBeLessThan(75_000)
  })

  it('structured data is bounded too: a patch over many files lists what fits and counts the rest', () => {
    const files = Array.from({ length: 600 }, (_, i) => ({
      path: `/w/file-number-${i}.txt`,
      action: 'modified',
      trashedTo: `/home/u/.agent-fs-tools/trash/${'f'.repeat(64)}/20261125T000000000Z-aaaaaaaa-bbbbbbbb-cccccccccccc-file-number-${i}.txt.tar.gz`,
    }))
    const result = toCallToolResult({ status: 'ok', output: 'Success.', data: { files, changeId: 'c1' } })
    const data = (result.structuredContent as { data: { files: unknown[]; filesLeftOut: number; changeId: string } }).data
    expect(JSON.stringify(data).length).toBeLessThanOrEqual(STRUCTURED_DATA_MAX_BYTES)
    expect(data.files.length).toBeGreaterThan(100)
    expect(data.files.length + data.filesLeftOut).toBe(600)
    expect(data.files[0]).toEqual(files[0])
    expect(data.changeId).toBe('c1')
    const small = toCallToolResult({ status: 'ok', output: 'x', data: { files: files.slice(0, 2) } })
    expect(small.structuredContent).toEqual({ status: 'ok', data: { files: files.slice(0, 2) } })
  })

  it.each([
    ['a wrong type', 'read_file', { path: 3 }, 'path'],
    ['a missing required field', 'read_file', {}, 'path'],
    ['an unknown property', 'read_file', { path: 'a.txt', colour: 'red' }, 'colour'],
    ['an empty edits array', 'edit_file', { path: 'a.txt', edits: [] }, 'edits'],
  ])('%s is an isError result naming the field, not a JSON-RPC error', async (_, tool, args, field) => {
    const { call } = await connect()
    const result = await call(tool, args)
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(text(result)).toContain(field)
  })

  it('an unknown tool is an isError result', async () => {
    const { call } = await connect()
    const result = await call('format_disk', {})
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL' })
  })

  it('a path outside --allow is PATH_NOT_ALLOWED', async () => {
    const dirs = tempWorkspaceDirs()
    const outside = tempWorkspaceDirs().root
    writeFileSync(join(outside, 'secret.txt'), 'secret\n')
    writeFileSync(join(dirs.root, 'a.txt'), 'a\n')
    const { call } = await connect({ args: ['--allow', dirs.root] }, dirs)
    expect((await call('read_file', { path: 'a.txt' })).structuredContent).toMatchObject({ status: 'ok' })
    const result = await call('read_file', { path: join(outside, 'secret.txt') })
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toMatchObject({ status: 'error', code: 'PATH_NOT_ALLOWED' })
    expect(text(result)).not.toContain('secret\n')
  })

  it('a cancelled call aborts (nothing written) and withdraws its confirmation', async () => {
    let elicited!: () => void
    const asked = new Promise<void>((r) => (elicited = r))
    let withdrawn = false
    const { client, call, root } = await connect({
      elicit: (_, signal) =>
        new Promise<ElicitResult>((resolveAnswer) => {
          elicited()
          signal.addEventListener('abort', () => {
            withdrawn = true
            resolveAnswer({ action: 'cancel' })
          })
        }),
    })
    const controller = new AbortController()
    const pending = client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }, undefined, {
      signal: controller.signal,
    })
    await asked
    controller.abort()
    await expect(pending).rejects.toThrow()
    // The server is still serving, and nothing was written.
    expect((await call('cwd_get')).structuredContent).toMatchObject({ status: 'ok' })
    await expect.poll(() => withdrawn).toBe(true)
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })
})

describe('confirmations', () => {
  it('asks through elicitation with the label, detail and diff; yes applies the change', async () => {
    const prompts: ElicitRequestFormParams[] = []
    const { call, root } = await connect({
      elicit: (params) => {
        prompts.push(params)
        return yes()
      },
    })
    const result = await call('write_file', { path: 'a.txt', content: 'hello\n' })
    expect(result.structuredContent).toMatchObject({ status: 'ok' })
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('hello\n')
    expect(prompts).toHaveLength(1)
    const [prompt] = prompts
    expect(prompt!.message).toContain(`Write file? ${join(root, 'a.txt')}`)
    expect(prompt!.message).toContain('+hello')
    expect(prompt!.requestedSchema).toMatchObject({
      type: 'object',
      properties: { approve: { type: 'boolean', title: 'Write file?' } },
      required: ['approve'],
    })
  })

  it.each<[string, ElicitResult]>([
    ['decline', { action: 'decline' }],
    ['cancel', { action: 'cancel' }],
    ['accept without approving', { action: 'accept', content: { approve: false } }],
  ])('%s is a denial: isError, status denied, nothing changed', async (_, answer) => {
    const { call, root } = await connect({ elicit: () => answer })
    const result = await call('write_file', { path: 'a.txt', content: 'hello\n' })
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toEqual({ status: 'denied', code: 'USER_DENIED' })
    expect(text(result)).toBe('The user denied this write. Do not retry it or work around it (with another tool or path); ask the user what to do instead.')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('without the elicitation capability, an action needing confirmation is denied and the model told why', async () => {
    const { call, root } = await connect()
    const result = await call('write_file', { path: 'a.txt', content: 'hello\n' })
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toEqual({ status: 'denied', code: 'NO_CONFIRM_HANDLER', data: { grant: ['cwdWriteFile'] } })
    expect(text(result)).toBe(
      'Nobody was asked to approve this write: this MCP client does not support confirmations (elicitation), so agent-fs-tools cannot ask the user; nothing was changed. The user can grant cwdWriteFile in the --permissions file of the agent-fs-tools MCP server to allow it without asking. Do not retry it or work around it (with another tool or path); ask the user what to do instead.',
    )
    // An action that always asks cannot be granted: the model is told so.
    mkdirSync(join(root, 'tree/sub'), { recursive: true })
    const recursive = await call('remove_dir', { path: 'tree', recursive: true })
    expect(recursive.structuredContent).toMatchObject({ status: 'denied', code: 'NO_CONFIRM_HANDLER', data: { grant: [] } })
    expect(text(recursive)).toContain('It always needs a confirmation (a recursive removal, the replacement of a whole directory, anything that keeps no copy in the trash)')
    expect(text(recursive)).not.toMatch(/For the host|irreversible/)
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    // Reads inside the root need no confirmation.
    expect((await call('list_directory')).isError).toBeFalsy()
  })

  it('write_file over a file the model has not read is STALE, unless --allow-stale-writes', async () => {
    for (const allow of [false, true]) {
      const dirs = tempWorkspaceDirs()
      writeFileSync(join(dirs.root, 'a.txt'), 'user\n')
      const { call, root } = await connect({ elicit: yes, ...(allow && { args: ['--allow-stale-writes'] }) }, dirs)
      const result = await call('write_file', { path: 'a.txt', content: 'model\n' })
      if (allow) {
        expect(result.isError).toBeFalsy()
        expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('model\n')
      } else {
        expect(result.isError).toBe(true)
        expect(result.structuredContent).toMatchObject({ status: 'error', code: 'STALE' })
        expect(text(result)).toBe(
          `${join(root, 'a.txt')} exists and you have not read it. Read it first (read_file), then write it; to change a part of it, use edit_file.`,
        )
        expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('user\n')
      }
    }
  })

  it('a --permissions file granting writes skips the prompts; what it does not grant still asks', async () => {
    const dirs = tempWorkspaceDirs()
    const permissions = join(dirs.dataDir, 'permissions.json')
    writeFileSync(permissions, JSON.stringify({ cwdWriteFile: true }))
    const prompts: string[] = []
    const { call, root } = await connect(
      {
        args: ['--permissions', permissions],
        elicit: (params) => {
          prompts.push(params.message)
          return { action: 'decline' }
        },
      },
      dirs,
    )
    expect((await call('write_file', { path: 'a.txt', content: 'x\n' })).structuredContent).toMatchObject({ status: 'ok' })
    expect((await call('append_file', { path: 'a.txt', content: 'y\n' })).structuredContent).toMatchObject({ status: 'ok' })
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('x\ny\n')
    expect(prompts).toEqual([])
    const refused = await call('delete_file', { path: 'a.txt' })
    expect(refused.structuredContent).toEqual({ status: 'denied', code: 'USER_DENIED' })
    expect(prompts).toHaveLength(1)
  })
})

describe('MCP roots', () => {
  it('the client roots become the allowed paths, together with --allow, and follow roots/list_changed', async () => {
    const dirs = tempWorkspaceDirs()
    const first = join(dirs.root, 'first')
    const second = tempWorkspaceDirs().root
    const extra = tempWorkspaceDirs().root
    const elsewhere = tempWorkspaceDirs().root
    mkdirSync(first)
    for (const dir of [first, second, extra, elsewhere]) writeFileSync(join(dir, 'f.txt'), `${dir}\n`)
    const roots = [first]
    // Reads outside the root need a confirmation (globalReadFile): the client approves.
    const { client, call } = await connect({ roots, args: ['--allow', extra], elicit: yes }, dirs)
    const code = async (dir: string): Promise<unknown> =>
      ((await call('read_file', { path: join(dir, 'f.txt') })).structuredContent as { code?: string }).code ?? 'ok'

    expect(await code(first)).toBe('ok')
    expect(await code(extra)).toBe('ok')
    expect(await code(second)).toBe('PATH_NOT_ALLOWED')
    expect(await code(elsewhere)).toBe('PATH_NOT_ALLOWED')
    // The root itself is not among the client's roots: outside the sandbox.
    const rootList = await call('list_directory', { path: dirs.root })
    expect(rootList.structuredContent).toMatchObject({ code: 'PATH_NOT_ALLOWED' })

    roots.splice(0, roots.length, second)
    await client.sendRootsListChanged()
    expect(await code(second)).toBe('ok')
    expect(await code(extra)).toBe('ok')
    expect(await code(first)).toBe('PATH_NOT_ALLOWED')
  })

  it('without roots or --allow, paths outside the root are reachable, subject to permissions', async () => {
    const outside = tempWorkspaceDirs().root
    writeFileSync(join(outside, 'f.txt'), 'outside\n')
    const { call } = await connect({ elicit: yes })
    const result = await call('read_file', { path: join(outside, 'f.txt') })
    expect(result.structuredContent).toMatchObject({ status: 'ok' })
  })
})

describe('command line', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', input: '', timeout: scaled(20_000) })

  it('prints the usage for --help', () => {
    const top = run('--help')
    expect(top.status).toBe(0)
    expect(top.stdout).toContain('mcp --root <dir>')
    const mcp = run('mcp', '--help')
    expect(mcp.status).toBe(0)
    expect(mcp.stdout).toContain('--permissions <file>')
  })

  it('answers the requests read before stdin ends, writes only JSON-RPC to stdout, then exits 0', () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const messages = [
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'cwd_get', arguments: {} } },
    ]
    const result = spawnSync(process.execPath, [MAIN, 'mcp', '--root', root], {
      input: messages.map((m) => `${JSON.stringify(m)}\n`).join(''),
      env: { ...process.env, AGENT_FS_TOOLS_DATA_DIR: dataDir },
      encoding: 'utf8',
      timeout: scaled(20_000),
    })
    expect(result.status).toBe(0)
    const responses = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { jsonrpc: string; id: number; result: Record<string, unknown> })
    expect(responses.map((r) => [r.jsonrpc, r.id])).toEqual([
      ['2.0', 0],
      ['2.0', 1],
    ])
    expect(responses[0]!.result.serverInfo).toMatchObject({ name: 'agent-fs-tools' })
    expect(responses[1]!.result.structuredContent).toMatchObject({ status: 'ok', data: { cwd: root } })
  })

  it.each([
    ['no --root', [], '--root <dir> is required'],
    ['an unknown flag', ['--root', '.', '--bogus'], 'unknown option: --bogus'],
    ['a flag without its value', ['--root'], '--root needs a value'],
    ['a value given to a switch', ['--root', '.', '--read-only=yes'], '--read-only takes no value'],
    ['a stray argument', ['--root', '.', 'extra'], 'unexpected argument: extra'],
    ['a missing root', ['--root', '/definitely/not/here'], '--root:'],
    ['a missing permissions file', ['--root', '.', '--permissions', '/definitely/not/here.json'], '--permissions: cannot read'],
  ])('%s: exit 2, message on stderr, nothing on stdout', (_, args, message) => {
    const result = run('mcp', ...args)
    expect(result.status).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stdout).toBe('')
  })

  it.each([
    ['not JSON', '{ cwdWriteFile: true', 'is not valid JSON'],
    ['not an object', '[true]', 'must hold a JSON object'],
    ['an unknown key', '{"writeEverything": true}', 'writeEverything: unknown permission'],
  ])('a permissions file that is %s: exit 2', (_, content, message) => {
    const { dataDir, root } = tempWorkspaceDirs()
    const file = join(dataDir, 'permissions.json')
    writeFileSync(file, content)
    const result = run('mcp', '--root', root, '--permissions', file)
    expect(result.status).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stdout).toBe('')
  })
})

describe('messages too large or malformed (issue 26, item 7)', () => {
  it('a write_file of 11 MB is TOO_LARGE, and the session goes on', async () => {
    const { call, root } = await connect({ elicit: yes })
    const big = await call('write_file', { path: 'big.txt', content: 'x'.repeat(11 * 1024 * 1024) })
    expect(big.isError).toBe(true)
    expect(big.structuredContent).toMatchObject({ status: 'error', code: 'TOO_LARGE' })
    expect(existsSync(join(root, 'big.txt'))).toBe(false)
    expect((await call('cwd_get')).structuredContent).toMatchObject({ status: 'ok', data: { cwd: root } })
  })

  it('a message longer than the server reads is answered TOO_LARGE unread, and the session goes on', async () => {
    const { call, root, stderr } = await connect({ elicit: yes })
    const huge = await call('write_file', { path: 'huge.txt', content: 'x'.repeat(MAX_MESSAGE_BYTES + 1024) })
    expect(huge.isError).toBe(true)
    expect(huge.structuredContent).toMatchObject({ status: 'error', code: 'TOO_LARGE' })
    expect(text(huge)).toMatch(/^the write_file call is 64\.0 MiB long, more than this server reads in one message \(64\.0 MiB\); nothing was done/)
    expect(existsSync(join(root, 'huge.txt'))).toBe(false)
    expect((await call('write_file', { path: 'small.txt', content: 'fine\n' })).structuredContent).toMatchObject({ status: 'ok' })
    expect(readFileSync(join(root, 'small.txt'), 'utf8')).toBe('fine\n')
    expect(stderr()).toContain('answered, not read')
  })

  it('over a raw pipe: a line that is not JSON-RPC and an overlong request get JSON-RPC answers; later requests too', () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const overlong = JSON.stringify({
      jsonrpc: '2.0',
      id: 'big',
      method: 'tools/call',
      params: { name: 'write_file', arguments: { path: 'x.txt', content: 'y'.repeat(MAX_MESSAGE_BYTES) } },
    })
    const lines = [
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
      }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      '{ this is not JSON',
      JSON.stringify({ jsonrpc: '2.0', id: 7 }),
      overlong,
      JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping', params: { padding: 'z'.repeat(MAX_MESSAGE_BYTES) } }),
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'cwd_get', arguments: {} } }),
    ]
    const result = spawnSync(process.execPath, [MAIN, 'mcp', '--root', root], {
      input: lines.map((line) => `${line}\n`).join(''),
      env: { ...process.env, AGENT_FS_TOOLS_DATA_DIR: dataDir },
      encoding: 'utf8',
      timeout: scaled(60_000),
      maxBuffer: 1 << 20,
    })
    expect(result.status, result.stderr).toBe(0)
    const responses = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } })
    // Answers come in the order they are ready (a refusal at once, a request once handled).
    const byId = new Map(responses.map((r) => [r.id, r]))
    expect([...byId.keys()].sort()).toEqual([0, 7, 8, 9, 'big', undefined].sort())
    expect(byId.get(0)!.result!.serverInfo).toMatchObject({ name: 'agent-fs-tools' })
    expect(byId.get(undefined)!.error!.code).toBe(-32700)
    expect(byId.get(7)!.error!.code).toBe(-32600)
    expect(byId.get('big')!.result).toMatchObject({ isError: true, structuredContent: { code: 'TOO_LARGE' } })
    expect(byId.get(8)!.error).toMatchObject({ code: -32600, message: expect.stringContaining('the ping is 64.0 MiB long') })
    expect(byId.get(9)!.result!.structuredContent).toMatchObject({ status: 'ok', data: { cwd: root } })
    expect(existsSync(join(root, 'x.txt'))).toBe(false)
  })
})

describe('confirmation texts', () => {
  const request = { tool: 'remove_dir', label: 'Remove directory recursively?', path: '/w/build', detail: '/w/build (recursive)' }

  it('a recursive removal says the tree goes to the trash, not that it cannot be undone', () => {
    const message = confirmationForm({ ...request, recursive: true }).message
    expect(message).toBe(
      'Remove directory recursively? /w/build (recursive)\n\nThe directory and everything in it go to the trash as one archive, from where they can be restored.',
    )
    expect(message).not.toMatch(/cannot be undone|irreversible/)
  })

  it('a permanent action says that no copy is kept', () => {
    const message = confirmationForm({ ...request, detail: '/w/build (recursive) (permanent)', recursive: true, permanent: true }).message
    expect(message).toContain('No copy is kept in the trash: this cannot be undone.')
  })

  it('the note for clients without elicitation says the client cannot ask', () => {
    expect(NO_ELICITATION_NOTE).toContain('does not support confirmations (elicitation)')
  })
})

describe('MCP progress', () => {
  it('sends notifications/progress when the client gave a progressToken, increasing, with a message', async () => {
    const { client, root } = await connect()
    writeFileSync(join(root, 'a.txt'), 'a\n')
    // Read with a notification handler, not callTool's `onprogress`: the SDK client handles a
    // notification a microtask late, so one that arrives in the same chunk as the result (as on
    // a fast call) finds callTool's handler already gone ("unknown token"), though it was sent first.
    const updates: Progress[] = []
    client.setNotificationHandler(ProgressNotificationSchema, (n) => void updates.push(n.params))
    const result = (await client.callTool({ name: 'grep', arguments: { pattern: 'a' }, _meta: { progressToken: 'grep-1' } })) as CallToolResult
    expect(result.isError).toBeFalsy()
    expect(updates[0]).toEqual({ progressToken: 'grep-1', progress: 0, message: '0 files' })
    for (let i = 1; i < updates.length; i += 1) expect(updates[i]!.progress).toBeGreaterThan(updates[i - 1]!.progress)
    // Without a token, no notification (the call still works).
    const before = updates.length
    expect((await client.callTool({ name: 'grep', arguments: { pattern: 'a' } })).isError).toBeFalsy()
    expect(updates.length).toBe(before)
  })
})

describe('progress in words', () => {
  it('bytes, files and entries, with the total and percentage when known', () => {
    expect(describeProgress({ done: 1536, total: 4 * 1024 * 1024, unit: 'bytes' })).toBe('1.5 KiB of 4.0 MiB (0%)')
    expect(describeProgress({ done: 3 << 20, total: 4 << 20, unit: 'bytes' })).toBe('3.0 MiB of 4.0 MiB (75%)')
    expect(describeProgress({ done: 1, unit: 'bytes' })).toBe('1 byte')
    expect(describeProgress({ done: 12, total: 40, unit: 'files' })).toBe('12 of 40 files (30%)')
    expect(describeProgress({ done: 1, unit: 'files' })).toBe('1 file')
    expect(describeProgress({ done: 7, total: 7, unit: 'entries' })).toBe('7 of 7 entries (100%)')
  })
})
