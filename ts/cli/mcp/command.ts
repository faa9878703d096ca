/**
 * `agent-fs-tools mcp`: parses the flags, builds the server and serves it on stdin/stdout until
 * the client closes stdin. Usage errors exit 2 with a message on stderr; stdout carries nothing
 * but the protocol.
 */
import { MCP_USAGE, parseMcpArgs, UsageError } from './args.js'
import { loadConfig, type McpServerConfig } from './config.js'

const PREFIX = 'agent-fs-tools mcp'

/** After stdin ends, how long running tool calls may take to finish before the server closes. */
const DRAIN_TIMEOUT_MS = 5_000

function log(message: string): void {
  process.stderr.write(`${PREFIX}: ${message}\n`)
}

/** Whether `error` says the optional peer `@modelcontextprotocol/sdk` is not installed. */
function isSdkMissing(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown }
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes('@modelcontextprotocol/sdk')
  )
}

/** Serves until stdin ends (and running calls finish) or stdout breaks; resolves when the server has closed. */
async function serve(config: McpServerConfig): Promise<void> {
  const [{ createMcpServer }, { StdioLineTransport }] = await Promise.all([import('./server.js'), import('./stdio.js')])
  const { server, idle } = createMcpServer(config, log)
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve
  })
  server.onerror = (error) => log(`protocol error: ${error.message}`)
  const close = (): void => {
    void server.close()
  }
  // End of input: answer the calls already received (a call waiting for a confirmation that
  // can no longer come is given up after DRAIN_TIMEOUT_MS), then close.
  process.stdin.once('end', () => {
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS).unref())
    void Promise.race([idle(), timeout]).then(close)
  })
  process.stdout.once('error', close)
  // Not the SDK's StdioServerTransport: it ends the session on a message over 10 MiB.
  await server.connect(new StdioLineTransport())
  await closed
}

/**
 * Runs the `mcp` subcommand with the arguments after `mcp`; resolves to the exit code
 * (0 after a normal shutdown, 1 when the SDK is missing, 2 for a usage error).
 */
export async function runMcpCommand(argv: string[]): Promise<number> {
  let config: McpServerConfig
  try {
    const parsed = parseMcpArgs(argv)
    if (parsed.help) {
      process.stdout.write(MCP_USAGE)
      return 0
    }
    config = loadConfig(parsed.args)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`${PREFIX}: ${error.message}\nRun "agent-fs-tools mcp --help" for usage.\n`)
    return 2
  }
  try {
    await serve(config)
  } catch (error) {
    if (!isSdkMissing(error)) throw error
    log(
      'the MCP server needs the optional peer dependency @modelcontextprotocol/sdk: install it next to ' +
        'agent-fs-tools (npm install @modelcontextprotocol/sdk), or run ' +
        'npx -p agent-fs-tools -p @modelcontextprotocol/sdk agent-fs-tools mcp ...',
    )
    return 1
  }
  return 0
}
