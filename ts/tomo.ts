/**
 * `agent-fs-tools/tomo`: the workspace's tools in the shape of Tomo's `Tool` (an Ink/React terminal
 * agent), so registering them is a one-liner. Needs zod 4 (optional peer) for `argsSchema`.
 *
 * Permissions, the abort signal and confirmations come from each call's Tomo context, so
 * sub-agents that relabel prompts or narrow permissions keep working.
 *
 * @packageDocumentation
 */
import type { z } from 'zod'
import { forDiffView, hunksOnly } from './internal/hunks.js'
import { describeProgress } from './internal/progress.js'
import type { CallContext, ConfirmHandler, Permissions, ToolResult } from './types.js'
import type { Workspace } from './workspace.js'
import { zodSchemaOf } from './zod.js'

/** Options of Tomo's `ctx.confirm` (what its approval prompt shows). */
export interface TomoConfirmOptions {
  /** Short label of the action, e.g. `Write file?`. */
  label?: string
  /** Detail line, e.g. the absolute path. */
  detail?: string
  /** Hunks-only unified diff shown above the prompt. */
  diff?: string
}

/**
 * The part of Tomo's tool context these tools use. Tomo's own `ToolContext` (which has more
 * fields) is assignable to it.
 */
export interface TomoToolContext {
  /** Tomo's resolved file permissions (same keys as {@link Permissions}). */
  permissions?: Permissions
  /** Tomo's approval prompt. */
  confirm?: (message: string, options?: TomoConfirmOptions) => boolean | Promise<boolean>
  /** Abort signal of the conversation turn. */
  signal?: AbortSignal
  /** Tomo's live output of a running tool: told how far a long operation is, in words. */
  onProgress?: (output: string) => void
}

/** A Tomo tool result: `format: 'diff'` output is rendered by Tomo's DiffView. */
export interface TomoToolResult {
  /** Text for the model (and the UI). */
  output: string
  /** Outcome. */
  status: 'ok' | 'error' | 'denied'
  /** How Tomo renders `output`. */
  format: 'plain' | 'diff'
}

/** A tool structurally assignable to Tomo's `Tool`. */
export interface TomoTool {
  /** Tool name as sent to the model (the host's rename, if any). */
  name: string
  /** Human-readable name for the UI, e.g. `Read File`. */
  displayName: string
  /** Description for the model. */
  description: string
  /** JSON Schema of the arguments (sent to the model). */
  parameters: Record<string, unknown>
  /** zod 4 schema of the arguments, built with `z.fromJSONSchema`. */
  argsSchema: z.ZodType
  /** Short summary shown next to the tool name, e.g. the path. */
  formatCall: (args: Record<string, unknown>) => string
  /** Runs the tool through the workspace. Never rejects for tool-level failures. */
  execute: (args: unknown, context: TomoToolContext) => Promise<TomoToolResult>
}

/**
 * What Tomo shows for each tool (its own tools are `Read File`, `Remove Directory`, …): a name a
 * person reads, not the tool name with its underscores turned into spaces.
 */
const DISPLAY_NAMES: Readonly<Record<string, string>> = {
  read_file: 'Read File',
  write_file: 'Write File',
  edit_file: 'Edit File',
  append_file: 'Append to File',
  apply_patch: 'Apply Patch',
  list_directory: 'List Directory',
  create_directory: 'Create Directory',
  delete_file: 'Delete File',
  remove_dir: 'Remove Directory',
  move_file: 'Move',
  copy_file: 'Copy',
  restore_file: 'Restore from Trash',
  trash_list: 'List Trash',
  cwd_get: 'Current Directory',
  cwd_push: 'Change Directory',
  cwd_pop: 'Back to Previous Directory',
  glob: 'Find Files',
  grep: 'Search in Files',
}

/**
 * The name Tomo shows for a tool: `cwd_get` → `Current Directory`, `remove_dir` → `Remove
 * Directory`. A name the host chose (a rename such as `remove_file`) is shown as its words,
 * capitalised: `Remove File`.
 */
export function displayNameOf(toolName: string): string {
  const known = Object.hasOwn(DISPLAY_NAMES, toolName) ? DISPLAY_NAMES[toolName] : undefined
  if (known !== undefined) return known
  return toolName
    .split(/[_\-\s]+/)
    .filter((word) => word !== '')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ')
}

/** Bridges a workspace confirm request to Tomo's `confirm(message, { label, detail, diff })`. */
function tomoConfirm(confirm: NonNullable<TomoToolContext['confirm']>): ConfirmHandler {
  return (request) => {
    const options: TomoConfirmOptions = { label: request.label, detail: request.detail }
    const diff = request.diff === undefined ? undefined : forDiffView(request.diff)
    if (diff !== undefined) options.diff = diff
    return confirm(request.label, options)
  }
}

/** Bridges progress updates to Tomo's `onProgress(output)`: e.g. `Working: 1.5 MiB of 4.0 MiB (37%)`. */
function tomoProgress(onProgress: (output: string) => void): CallContext['onProgress'] {
  return (progress) => onProgress(`Working: ${describeProgress(progress)}`)
}

/**
 * Maps a workspace result to Tomo's: a successful write, edit or append (a change of one file,
 * `data.path`, that carries a `diff`) becomes `format: 'diff'` with the hunks only; everything
 * else is `plain` with the documented output — `apply_patch` too (../docs/hosts.md): Tomo's diff
 * view colours every line by its first character, so a patch's file list, its trash notes and its
 * `---`/`+++` file headers would be drawn as removed and added lines, and Tomo tells the model
 * "Edit applied successfully. Unified diff:" before a diff result, over the patch's own `Success.` line.
 *
 * The hunks are those of `output`, not of `diff`: `output` is what the model may read, with the
 * diff cut at `readMaxBytes` and a note saying so (a 1 MB rewrite is not sent whole). They are
 * taken from where the tools put the diff (after the summary and its notes, past the first blank
 * line; ../docs/tools.md, Diffs) and only when that text is the structured `diff` (or its cut
 * start): diff-like text anywhere else in an output is never taken for the change. A new file or
 * a whole rewrite, counted in `output` rather than echoed, stays plain. The note lines that follow
 * the summary (where an overwrite went in the trash, and how to restore it) follow the hunks.
 */
export function toTomoResult(result: ToolResult): TomoToolResult {
  const singleFile = typeof result.data?.path === 'string'
  if (result.status === 'ok' && singleFile && typeof result.diff === 'string' && result.diff !== '') {
    const shown = shownDiff(result.output, result.diff, result.data?.diffLinesLeftOut !== undefined)
    const body = shown === undefined ? undefined : hunksOnly(shown.diff)
    if (shown !== undefined && body !== undefined) {
      // The summary line is what the diff shows; the notes after it stay.
      const notes = shown.summary.split('\n').slice(1)
      return { output: [body, ...notes.filter((line) => line !== '')].join('\n'), status: 'ok', format: 'diff' }
    }
  }
  return { output: result.output, status: result.status, format: 'plain' }
}

/** The note a tool ends a diff cut to fit `output` with (../docs/tools.md, Bounded outputs). */
const DIFF_CUT_NOTE = /\n?\[diff truncated: \d+ more lines? not shown; [^\n]*\]$/

/**
 * `output` as the tools write it with a diff: `<summary and notes>\n\n<diff, perhaps cut>`, split
 * there; `undefined` unless what follows the blank line is `diff` itself or its start, cut with
 * the note (when `diff` itself was cut for a UI, `diffCut`, its first line must still match).
 */
function shownDiff(output: string, diff: string, diffCut: boolean): { summary: string; diff: string } | undefined {
  const blank = output.indexOf('\n\n')
  if (blank < 0) return undefined
  const shown = output.slice(blank + 2)
  const kept = shown.replace(DIFF_CUT_NOTE, '')
  if (kept === '') return undefined
  const firstLine = diff.slice(0, diff.indexOf('\n') + 1)
  const matches = diffCut ? firstLine !== '' && kept.startsWith(firstLine) : diff.startsWith(kept)
  return matches ? { summary: output.slice(0, blank), diff: shown } : undefined
}

/**
 * Returns the workspace's enabled tools as Tomo tools.
 *
 * @example
 * ```ts
 * // app.tsx
 * const ws = new Workspace({ root: process.cwd(), permissions: config.permissions })
 * for (const tool of createTomoTools(ws)) registerTool(tool)
 * ```
 */
export function createTomoTools(ws: Workspace): TomoTool[] {
  return ws.definitions().map((definition): TomoTool => {
    const name = definition.name
    return {
      name,
      displayName: displayNameOf(name),
      description: definition.description,
      parameters: definition.inputSchema,
      argsSchema: zodSchemaOf(definition),
      formatCall: (args) => ws.formatCall(name, args),
      async execute(args, context) {
        const result = await ws.call(name, args, {
          ...(context.permissions !== undefined && { permissions: context.permissions }),
          ...(context.signal !== undefined && { signal: context.signal }),
          ...(typeof context.confirm === 'function' && { confirm: tomoConfirm(context.confirm.bind(context)) }),
          ...(typeof context.onProgress === 'function' && { onProgress: tomoProgress(context.onProgress.bind(context)) }),
        })
        return toTomoResult(result)
      },
    }
  })
}
