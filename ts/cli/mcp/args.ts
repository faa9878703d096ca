/**
 * Command-line arguments of `agent-fs-tools mcp`. A small hand-written parser, so every mistake
 * gets a message naming the flag (a {@link UsageError}; the command exits 2).
 */
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'

/** Help text of `agent-fs-tools mcp`. */
export const MCP_USAGE = `Usage: agent-fs-tools mcp --root <dir> [--allow <dir>]... [--read-only] [--permissions <json file>] [--allow-stale-writes]

Serves the agent-fs-tools filesystem tools over MCP (stdio transport).

Options:
  --root <dir>          Workspace root (required): initial working directory and the scope of
                        the "cwd*" permissions.
  --allow <dir>         Only these trees are reachable (repeatable). Without it (and without MCP
                        roots from the client) any path is reachable, subject to permissions.
                        MCP roots offered by the client are allowed in addition.
  --read-only           Serve only the tools that never change the filesystem.
  --permissions <file>  JSON object of permissions granted without asking, e.g.
                        {"cwdWriteFile": true, "cwdRemoveFile": true}. Default: {"cwdReadFile": true}.
  --allow-stale-writes  Let write_file replace a file the model has not read, or that changed
                        since it read it (by default such a write is refused with STALE).
  -h, --help            Show this help.

Actions that need a confirmation are asked through MCP elicitation when the client supports it,
and denied otherwise.
`

/** A command-line mistake: the message is shown with the usage, and the command exits 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** What the flags say, paths made absolute. */
export interface McpArgs {
  /** Absolute workspace root. */
  root: string
  /** Absolute `--allow` directories, in order given. */
  allow: string[]
  /** `--read-only`. */
  readOnly: boolean
  /** Absolute path of the `--permissions` file, if given. */
  permissionsFile?: string
  /** `--allow-stale-writes`. */
  allowStaleWrites?: boolean
}

/** `--help`, or the options to serve with. */
export type ParsedMcpArgs = { help: true } | { help: false; args: McpArgs }

/** Makes a path absolute against the process's cwd; a leading `~/` is the home directory. */
function absolutePath(path: string): string {
  if (path === '~' || path.startsWith('~/')) return join(homedir(), path.slice(1))
  return isAbsolute(path) ? path : resolve(path)
}

/**
 * Parses the arguments after `mcp`. Flags take their value as the next argument or after `=`
 * (`--root=/w`). Throws a {@link UsageError} for an unknown flag, a missing or empty value, a
 * repeated `--root`/`--permissions`, a stray positional argument, or a missing `--root`.
 */
export function parseMcpArgs(argv: readonly string[]): ParsedMcpArgs {
  let root: string | undefined
  let permissionsFile: string | undefined
  const allow: string[] = []
  let readOnly = false
  let allowStaleWrites = false

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1
    const flag = eq === -1 ? arg : arg.slice(0, eq)
    const inline = eq === -1 ? undefined : arg.slice(eq + 1)

    /** The flag's value: inline after `=`, else the next argument (which must not be a flag). */
    const value = (): string => {
      let v = inline
      if (v === undefined) {
        const next = argv[i + 1]
        if (next === undefined || (next.startsWith('-') && next !== '-')) {
          throw new UsageError(`${flag} needs a value`)
        }
        v = next
        i++
      }
      if (v === '') throw new UsageError(`${flag} needs a non-empty value`)
      return v
    }
    const noValue = (): void => {
      if (inline !== undefined) throw new UsageError(`${flag} takes no value`)
    }

    switch (flag) {
      case '-h':
      case '--help':
        noValue()
        return { help: true }
      case '--root':
        if (root !== undefined) throw new UsageError('--root given more than once')
        root = absolutePath(value())
        break
      case '--allow':
        allow.push(absolutePath(value()))
        break
      case '--read-only':
        noValue()
        readOnly = true
        break
      case '--allow-stale-writes':
        noValue()
        allowStaleWrites = true
        break
      case '--permissions':
        if (permissionsFile !== undefined) throw new UsageError('--permissions given more than once')
        permissionsFile = absolutePath(value())
        break
      default:
        throw new UsageError(flag.startsWith('-') ? `unknown option: ${flag}` : `unexpected argument: ${arg}`)
    }
  }

  if (root === undefined) throw new UsageError('--root <dir> is required')
  return {
    help: false,
    args: {
      root,
      allow,
      readOnly,
      ...(permissionsFile !== undefined && { permissionsFile }),
      ...(allowStaleWrites && { allowStaleWrites }),
    },
  }
}
