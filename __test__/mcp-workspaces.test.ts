/**
 * The MCP server makes one Workspace per set of roots (issue 26): none to check its flags, and
 * the first only once the roots a client declares have been read — a Workspace made before would
 * start crash recovery within `--allow` alone — and no other while the roots stay the same. Every
 * Workspace the server's modules make is counted here (the class is wrapped); the server runs in
 * this process, connected to an SDK client in memory.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, expect, it, vi } from 'vitest'
import type { WorkspaceOptions } from '../ts/index.js'
import { parseMcpArgs } from '../ts/cli/mcp/args.js'
import { loadConfig } from '../ts/cli/mcp/config.js'
import { createMcpServer } from '../ts/cli/mcp/server.js'
import { tempWorkspaceDirs } from './helpers/temp.js'

const made = vi.hoisted(() => [] as WorkspaceOptions[])

vi.mock('../ts/index.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../ts/index.js')>()
  class CountedWorkspace extends actual.Workspace {
    constructor(options: WorkspaceOptions) {
      super(options)
      made.push(options)
    }
  }
  return { ...actual, Workspace: CountedWorkspace }
})

const dataDirBefore = process.env['AGENT_FS_TOOLS_DATA_DIR']
afterEach(() => {
  made.splice(0)
  if (dataDirBefore === undefined) delete process.env['AGENT_FS_TOOLS_DATA_DIR']
  else process.env['AGENT_FS_TOOLS_DATA_DIR'] = dataDirBefore
})

it('makes one Workspace per set of roots: none for the flag check, the first with the roots', async () => {
  const dirs = tempWorkspaceDirs()
  process.env['AGENT_FS_TOOLS_DATA_DIR'] = dirs.dataDir
  const allowed = join(dirs.root, 'a')
  mkdirSync(allowed)
  const parsed = parseMcpArgs(['--root', dirs.root, '--allow', allowed])
  if (parsed.help) throw new Error('not asked for help')
  const config = loadConfig(parsed.args)
  expect(made, 'the flag check made a Workspace').toEqual([])

  const { server } = createMcpServer(config, () => undefined)
  let roots = [dirs.root]
  const client = new Client({ name: 'mcp-workspaces-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } })
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: roots.map((path) => ({ uri: pathToFileURL(path).href, name: path })),
  }))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  await client.connect(clientSide)
  try {
    await client.listTools()
    const result = await client.callTool({ name: 'cwd_get', arguments: {} })
    expect(result.isError ?? false).toBe(false)
    expect(made.map((o) => o.allowedPaths)).toEqual([[dirs.root, allowed]])

    // The same roots again: the same Workspace.
    await client.sendRootsListChanged()
    await client.callTool({ name: 'cwd_get', arguments: {} })
    expect(made).toHaveLength(1)

    // Other roots: one more.
    roots = [allowed]
    await client.sendRootsListChanged()
    await client.callTool({ name: 'cwd_get', arguments: {} })
    expect(made.map((o) => o.allowedPaths)).toEqual([[dirs.root, allowed], [allowed]])
  } finally {
    await client.close()
  }
})
