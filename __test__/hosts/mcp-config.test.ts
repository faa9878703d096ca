/**
 * The MCP server launched exactly as Claude Desktop's `claude_desktop_config.json` and Cursor's
 * `.cursor/mcp.json` describe it (`{ mcpServers: { name: { command, args, env } } }`: here
 * `npx agent-fs-tools mcp --root …`, the package installed from its packed tarball with
 * `npm install agent-fs-tools @modelcontextprotocol/sdk`), the way those clients start it: the MCP
 * SDK's `StdioClientTransport` with `getDefaultEnvironment()` plus the entry's `env`. A session
 * through the real SDK client: the tools listed, a write approved through elicitation, an edit,
 * a delete and a restore, a write outside the root whose prompt says so, declined (`isError`).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema, type CallToolResult, type ElicitRequestFormParams } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

/** One server entry of a Claude Desktop / Cursor MCP configuration. */
interface ServerEntry {
  command: string
  args: string[]
  env?: Record<string, string>
}

describe('an MCP client configured as Claude Desktop and Cursor are: npx agent-fs-tools mcp', () => {
  let base: string
  let project: string
  let client: Client | undefined

  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'afs-mcp-npx-')))
    project = join(base, 'project')
    mkdirSync(join(project, 'src'), { recursive: true })
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
    // As the README says: the package and the MCP SDK it serves with.
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline', inject('packedPackage'), '@modelcontextprotocol/sdk@^1.32.0'], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    mkdirSync(join(project, '.cursor'))
    const config: { mcpServers: Record<string, ServerEntry> } = {
      mcpServers: {
        files: {
          command: 'npx',
          args: ['agent-fs-tools', 'mcp', '--root', project],
          env: { AGENT_FS_TOOLS_DATA_DIR: join(base, 'data') },
        },
      },
    }
    writeFileSync(join(project, '.cursor', 'mcp.json'), JSON.stringify(config, null, 2))
  })

  afterAll(async () => {
    await client?.close()
    if (base !== undefined) rmSync(base, { recursive: true, force: true })
  })

  it('a session through the SDK client over stdio: list, write (elicited), edit, delete, restore, an outside path declined', async () => {
    const entry = (JSON.parse(readFileSync(join(project, '.cursor', 'mcp.json'), 'utf8')) as { mcpServers: Record<string, ServerEntry> }).mcpServers['files']!
    // Cursor starts a project's servers in the project folder; the environment is the SDK's default plus the entry's.
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { ...getDefaultEnvironment(), ...entry.env },
      cwd: project,
      stderr: 'pipe',
    })
    let stderr = ''
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    client = new Client({ name: 'claude-desktop-like', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } })
    const asked: string[] = []
    // The user approves what stays in the project, and declines what the prompt says is outside it.
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const message = (request.params as ElicitRequestFormParams).message
      asked.push(message)
      return message.includes('Outside the project') ? { action: 'decline' } : { action: 'accept', content: { approve: true } }
    })
    await client.connect(transport)
    const call = async (name: string, args: Record<string, unknown>) => (await client!.callTool({ name, arguments: args })) as CallToolResult
    const text = (result: CallToolResult) => (result.content[0]?.type === 'text' ? result.content[0].text : JSON.stringify(result.content))

    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'write_file', 'edit_file', 'apply_patch', 'delete_file', 'restore_file']))

      const written = await call('write_file', { path: 'src/app.ts', content: "const a = 'one'\nconst b = 'two'\n" })
      expect(written.isError ?? false).toBe(false)
      expect(asked).toHaveLength(1)
      expect(asked[0]).toContain('Write file?')

      const edited = await call('edit_file', { path: 'src/app.ts', edits: [{ oldString: "'one'", newString: "'1'" }, { oldString: "'two'", newString: "'2'" }] })
      expect(text(edited)).toContain("+const a = '1'")
      expect(readFileSync(join(project, 'src/app.ts'), 'utf8')).toBe("const a = '1'\nconst b = '2'\n")

      const deleted = await call('delete_file', { path: 'src/app.ts' })
      const archive = /"trashedPath": "([^"]+)"/.exec(text(deleted))?.[1]
      expect(archive).toBeDefined()
      expect(existsSync(join(project, 'src/app.ts'))).toBe(false)
      await call('restore_file', { trashedPath: archive })
      expect(readFileSync(join(project, 'src/app.ts'), 'utf8')).toBe("const a = '1'\nconst b = '2'\n")

      // Without --allow, a path outside the root is reachable, and its prompt says it is outside the project.
      const planted = join(base, 'planted.txt')
      const outside = await call('write_file', { path: planted, content: 'x' })
      expect(asked.at(-1)).toContain(`Outside the project (${project}): ${planted}`)
      expect(outside.isError).toBe(true)
      expect(existsSync(planted)).toBe(false)
    } catch (error) {
      throw new Error(`${(error as Error).message}\nthe server's stderr:\n${stderr}`, { cause: error })
    }
  })
})
