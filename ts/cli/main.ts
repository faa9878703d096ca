#!/usr/bin/env node
export {}
/**
 * `agent-fs-tools` command line (ESM only). Placeholder until the MCP server (`mcp`) and the
 * interactive demo land: prints usage.
 */

const USAGE = `Usage: agent-fs-tools <command> [options]

Commands:
  mcp --root <dir> [--allow <dir>]... [--read-only] [--permissions <json file>]
      Serve the filesystem tools over MCP stdio (not available yet).
  demo [--root <dir>] [--script <file>]
      Interactive playground of the tools (not available yet).

Options:
  -h, --help    Show this help.
`

const [command] = process.argv.slice(2)
if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
  process.stdout.write(USAGE)
} else {
  process.stderr.write(`agent-fs-tools: unknown or unavailable command: ${command}\n\n${USAGE}`)
  process.exitCode = 2
}
