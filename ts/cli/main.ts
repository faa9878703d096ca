#!/usr/bin/env node
import { readFileSync } from 'node:fs'

/**
 * `agent-fs-tools` command line (ESM only): a small dispatcher. Each subcommand lives in its own
 * module, loaded only when it runs (so `--help` needs none of the optional peers), and resolves to
 * its exit code. Adding a subcommand is one line in {@link COMMANDS}.
 */

/** A subcommand: its arguments (after the command name) → exit code. */
type Command = (argv: string[]) => Promise<number>

/** The subcommands, by name. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  mcp: async () => (await import('./mcp/command.js')).runMcpCommand,
  demo: async () => (await import('./demo/index.js')).runDemo,
  history: async () => (await import('./undo.js')).runHistoryCommand,
  undo: async () => (await import('./undo.js')).runUndoCommand,
}

const USAGE = `Usage: agent-fs-tools <command> [options]

Commands:
  mcp --root <dir> [--allow <dir>]... [--read-only] [--permissions <json file>]
      Serve the filesystem tools over MCP stdio (see "agent-fs-tools mcp --help").
  demo [--root <dir>] [--script <file>]
      Interactive playground of the tools; scripted without a terminal (see "agent-fs-tools demo --help").
  history --root <dir> [--session <id>] [--limit <n>] [--json]
      The changes made in a workspace, newest first, and whether they can be undone.
  undo --root <dir> [--id <change id> | --session <id>] [--dry-run] [--yes]
      Take back the latest change (or one, or a whole session), asking first.

Options:
  -h, --help       Show this help.
  -v, --version    Print the version.
`

/** The package's version, from its package.json (`dist/esm/cli/` is three levels below it). */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  return manifest.version
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  if (command === '-v' || command === '--version') {
    process.stdout.write(`${version()}\n`)
    return 0
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
  if (load === undefined) {
    process.stderr.write(`agent-fs-tools: unknown or unavailable command: ${command}\n\n${USAGE}`)
    return 2
  }
  return (await load())(rest)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`agent-fs-tools: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  },
)
