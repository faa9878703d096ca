/**
 * `agent-fs-tools history` and `agent-fs-tools undo`: the workspace's history and undo (../../docs/history-and-undo.md)
 * for the user, from a terminal, whatever host made the changes — the way a user of an MCP client
 * (which has no undo of its own) takes back what the agent did through `agent-fs-tools mcp`.
 * The data directory is the one the server uses (`$AGENT_FS_TOOLS_DATA_DIR`, else
 * `~/.agent-fs-tools`, or `--data-dir`).
 */
import { createInterface } from 'node:readline/promises'
import { isAbsolute, resolve } from 'node:path'
import { Workspace } from '../workspace.js'
import type { Change, ConfirmRequest } from '../types.js'

export const HISTORY_USAGE = `Usage: agent-fs-tools history --root <dir> [--session <id>] [--limit <n>] [--json] [--data-dir <dir>]

Lists the changes made in the workspace <dir>, newest first: their id, time, tool, summary, files,
and whether they can be undone.
`

export const UNDO_USAGE = `Usage: agent-fs-tools undo --root <dir> [--id <change id> | --session <id>] [--dry-run] [--yes] [--data-dir <dir>]

Takes back the latest change that is neither undone nor an undo (or the change --id names: an
undo's id redoes it; or every change of --session, as one step). Every path must still be exactly
as the change left it, else nothing changes. Whatever the undo replaces goes to the trash first.
Asks before changing anything, unless --yes; without a terminal, --yes is needed.
`

interface Parsed {
  help: boolean
  flags: Map<string, string | true>
}

/** `--flag value`, `--flag=value` and boolean `--flag`s; anything else is a mistake. */
function parse(argv: readonly string[], valued: readonly string[], booleans: readonly string[]): Parsed | string {
  const flags = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '-h' || arg === '--help') return { help: true, flags }
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    if (booleans.includes(name)) {
      flags.set(name, true)
    } else if (valued.includes(name)) {
      const value = inline ?? argv[++i]
      if (value === undefined || value === '') return `${name} needs a value`
      flags.set(name, value)
    } else {
      return `unknown argument: ${arg}`
    }
  }
  if (!flags.has('--root')) return '--root <dir> is required'
  return { help: false, flags }
}

function workspace(flags: Map<string, string | true>): Workspace {
  const absolute = (p: string): string => (isAbsolute(p) ? p : resolve(p))
  const dataDir = flags.get('--data-dir')
  return new Workspace({
    root: absolute(flags.get('--root') as string),
    ...(typeof dataDir === 'string' && { trash: { dataDir: absolute(dataDir) } }),
  })
}

function usageError(message: string, usage: string): number {
  process.stderr.write(`agent-fs-tools: ${message}\n\n${usage}`)
  return 2
}

/** One change, in a few lines. */
function describe(change: Change): string {
  const state = change.undoneBy ? ` (undone by ${change.undoneBy})` : change.undoable ? '' : ` (cannot be undone: ${change.reason ?? 'unknown'})`
  const files = change.files.map((f) => `    ${f.action.padEnd(9)}${f.from ? ` ${f.from} →` : ''} ${f.path}`)
  return [`${change.id}  ${change.time}  ${change.tool}  ${change.summary}${state}`, ...files].join('\n')
}

/** `agent-fs-tools history …`. */
export async function runHistoryCommand(argv: string[]): Promise<number> {
  const parsed = parse(argv, ['--root', '--session', '--limit', '--data-dir'], ['--json'])
  if (typeof parsed === 'string') return usageError(parsed, HISTORY_USAGE)
  if (parsed.help) {
    process.stdout.write(HISTORY_USAGE)
    return 0
  }
  const limit = parsed.flags.get('--limit')
  if (limit !== undefined && !/^\d+$/.test(String(limit))) return usageError('--limit must be a whole number', HISTORY_USAGE)
  const session = parsed.flags.get('--session')
  const changes = await workspace(parsed.flags).history({
    ...(limit !== undefined && { limit: Number(limit) }),
    ...(typeof session === 'string' && { sessionId: session }),
  })
  if (parsed.flags.has('--json')) {
    process.stdout.write(`${JSON.stringify(changes, null, 2)}\n`)
  } else {
    process.stdout.write(changes.length === 0 ? 'No changes.\n' : `${changes.map(describe).join('\n')}\n`)
  }
  return 0
}

/** Asks on the terminal: the label, the detail per file, the diff; only `y` is a yes. */
async function askOnTerminal(request: ConfirmRequest): Promise<boolean> {
  process.stdout.write(`${request.label}\n${request.detail}\n${request.diff ? `${request.diff}\n` : ''}`)
  const rl = createInterface({ input: process.stdin, output: process.stdout })
  try {
    return /^y(es)?$/i.test((await rl.question('Undo? [y/N] ')).trim())
  } finally {
    rl.close()
  }
}

/** `agent-fs-tools undo …`. */
export async function runUndoCommand(argv: string[]): Promise<number> {
  const parsed = parse(argv, ['--root', '--id', '--session', '--data-dir'], ['--dry-run', '--yes'])
  if (typeof parsed === 'string') return usageError(parsed, UNDO_USAGE)
  if (parsed.help) {
    process.stdout.write(UNDO_USAGE)
    return 0
  }
  const { flags } = parsed
  const id = flags.get('--id')
  const session = flags.get('--session')
  if (id !== undefined && session !== undefined) return usageError('give --id or --session, not both', UNDO_USAGE)
  const dryRun = flags.has('--dry-run')
  if (!dryRun && !flags.has('--yes') && !process.stdin.isTTY) {
    return usageError('no terminal to ask on: pass --yes to undo without asking (or --dry-run to see what would happen)', UNDO_USAGE)
  }
  const result = await workspace(flags).undo({
    ...(typeof id === 'string' && { id }),
    ...(typeof session === 'string' && { sessionId: session }),
    ...(dryRun && { dryRun }),
    ...(!dryRun && !flags.has('--yes') && { confirm: askOnTerminal }),
  })
  const stream = result.status === 'ok' ? process.stdout : process.stderr
  stream.write(`${result.code ? `${result.code}: ` : ''}${result.output}\n`)
  return result.status === 'ok' ? 0 : 1
}
