/**
 * Command-line options of `agent-fs-tools demo`.
 */

/** What `agent-fs-tools demo` was asked to do. */
export interface DemoOptions {
  /** Run on this directory instead of a fresh sample project in a temporary directory. */
  root?: string
  /** Run the calls listed in this JSON file (auto-approving) instead of the interactive playground. */
  script?: string
  /** Leave the temporary sample project (and its trash) in place on exit. */
  keep: boolean
  /** Print usage and exit. */
  help: boolean
}

/** A command-line mistake: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

export const DEMO_USAGE = `Usage: agent-fs-tools demo [--root <dir>] [--script <file>] [--keep]

An interactive playground of the tools (needs a terminal, and the optional peers ink and react).
Without a terminal, or with --script, it runs a scripted session that prints every call, its
confirmation request (approved automatically) and its result.

Options:
  --root <dir>     Use your own directory as the workspace (trash in ~/.agent-fs-tools, or
                   $AGENT_FS_TOOLS_DATA_DIR). Default: a fresh sample project in a temp directory.
  --script <file>  Run the calls in <file>, a JSON array of
                   { "tool": "write_file", "args": { ... }, "approve"?: false, "note"?: "..." }.
                   The string "$lastTrashed" in args stands for the latest archive trashed.
  --keep           Keep the temporary sample project and its trash on exit.
  -h, --help       Show this help.
`

/**
 * Parses the arguments after `demo` (`--root DIR`, `--root=DIR`, `--script FILE`, `--keep`, `--help`).
 * Throws a {@link UsageError} for an unknown option or a missing value.
 */
export function parseDemoArgs(argv: readonly string[]): DemoOptions {
  const options: DemoOptions = { keep: false, help: false }
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!
    const eq = arg.indexOf('=')
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined
    const value = (): string => {
      if (inline !== undefined) {
        if (inline === '') throw new UsageError(`${flag} needs a value`)
        return inline
      }
      const next = argv[i + 1]
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value`)
      i += 1
      return next
    }
    switch (flag) {
      case '--root':
        options.root = value()
        break
      case '--script':
        options.script = value()
        break
      case '--keep':
        if (inline !== undefined) throw new UsageError('--keep takes no value')
        options.keep = true
        break
      case '-h':
      case '--help':
        options.help = true
        break
      default:
        throw new UsageError(`unknown option: ${arg}`)
    }
  }
  return options
}
