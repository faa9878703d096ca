/**
 * The MCP server: `tools/list` and `tools/call` over the workspace, confirmations through
 * elicitation, MCP roots as `allowedPaths`, and the request's abort signal wired to the call.
 *
 * Built on the SDK's low-level `Server` rather than `McpServer`: the tools come with JSON Schemas
 * from the core, and the core validates arguments itself (an `INVALID_ARGUMENTS` result naming
 * the field), which `McpServer`'s zod validation would turn into a protocol error first.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js'
import type { CallContext } from '../../index.js'
import type { McpServerConfig } from './config.js'
import { elicitationConfirm, explainDenial, supportsElicitation } from './confirm.js'
import { ROOTS_TIMEOUT_MS, WorkspaceHolder, type Logger } from './roots.js'
import { progressNotifier } from './progress.js'
import { toCallToolResult, toMcpTool } from './tools.js'

/** This package's version, for `serverInfo`: from the nearest `package.json` named `agent-fs-tools` above this file. */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown }
      if (manifest.name === 'agent-fs-tools' && typeof manifest.version === 'string') return manifest.version
    } catch {
      // No (readable) package.json here: keep looking.
    }
    if (dirname(dir) === dir) return '0.0.0'
  }
}

/** What the model is told about the server as a whole. */
function instructions(config: McpServerConfig): string {
  return (
    `Filesystem tools for the workspace ${config.workspace.root}. Relative paths resolve against ` +
    'the working directory shown by cwd_get (initially the workspace root). Deleted and overwritten ' +
    'files go to a trash: trash_list shows it and restore_file brings them back. Actions that need ' +
    "the user's approval are asked for, or denied when they cannot be."
  )
}

/** A created server and a way to let its running tool calls finish. */
export interface McpServerHandle {
  server: Server
  /** Resolves once no tool call is running (checked after pending messages are dispatched). */
  idle: () => Promise<void>
}

/**
 * Creates the server (not yet connected). Roots are read after initialisation when the client
 * declares the `roots` capability, and again on `notifications/roots/list_changed`.
 *
 * @param config - the command-line configuration.
 * @param log - where diagnostics go (stderr; never stdout, which carries the protocol).
 */
export function createMcpServer(config: McpServerConfig, log: Logger): McpServerHandle {
  const holder = new WorkspaceHolder(config, log)
  const running = new Set<Promise<unknown>>()
  const server = new Server(
    { name: 'agent-fs-tools', version: packageVersion() },
    { capabilities: { tools: {} }, instructions: instructions(config) },
  )

  const refreshRoots = (): void => {
    if (server.getClientCapabilities()?.roots === undefined) return
    void holder.refresh(() => server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS }))
  }
  server.oninitialized = () => {
    // The SDK's `Protocol` ignores `notifications/cancelled` for request id 0 (a falsy-id check),
    // so an SDK-based client could never withdraw the first elicitation of a cancelled call
    // (modelcontextprotocol/typescript-sdk#2283, #2115). Spend id 0 on a ping.
    if (supportsElicitation(server.getClientCapabilities())) server.ping().catch(() => undefined)
    refreshRoots()
  }
  server.setNotificationHandler(RootsListChangedNotificationSchema, refreshRoots)

  server.setRequestHandler(ListToolsRequestSchema, async (): Promise<ListToolsResult> => {
    const ws = await holder.current()
    return { tools: ws.definitions().map(toMcpTool) }
  })

  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => {
    const call = (async () => {
      const ws = await holder.current()
      const canAsk = supportsElicitation(server.getClientCapabilities())
      const ctx: CallContext = { signal: extra.signal }
      if (canAsk) ctx.confirm = elicitationConfirm(server, extra)
      const progressToken = request.params._meta?.progressToken
      const progress = progressToken === undefined ? undefined : progressNotifier(progressToken, extra.sendNotification)
      if (progress !== undefined) ctx.onProgress = progress.onProgress
      const result = await ws.call(request.params.name, request.params.arguments ?? {}, ctx)
      await progress?.sent()
      return toCallToolResult(canAsk ? result : explainDenial(result))
    })()
    running.add(call)
    void call.catch(() => undefined).finally(() => running.delete(call))
    return call
  })

  const idle = async (): Promise<void> => {
    // Messages read just before stdin ended are dispatched on later ticks.
    await new Promise((resolve) => setImmediate(resolve))
    while (running.size > 0) await Promise.allSettled([...running])
  }
  return { server, idle }
}
