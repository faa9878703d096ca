/**
 * The scripted (non-interactive) demo: runs a list of calls through `ws.call`, answering every
 * confirmation automatically, and prints each call, its confirmation request and its result. Used
 * without a terminal (CI, `npm run demo | cat`) and with `--script FILE`.
 */
import type { Workspace } from '../../workspace.js'
import type { ConfirmHandler, ToolResult } from '../../types.js'

/** One call of a script. */
export interface ScriptCall {
  /** Tool name, as in `ws.definitions()`. */
  tool: string
  /** Arguments; the string `"$lastTrashed"` anywhere in them is replaced by the latest archive trashed. */
  args?: unknown
  /** `false` answers "no" to the call's confirmation. Default `true`. */
  approve?: boolean
  /** A line printed before the call. */
  note?: string
}

/** Stands, in a script's arguments, for the archive of the latest trashed file or tree. */
export const LAST_TRASHED = '$lastTrashed'

/** The built-in session: every tool once on the sample project, a restore, and a denial. */
export const BUILTIN_SCRIPT: readonly ScriptCall[] = [
  { tool: 'cwd_get', args: {} },
  { tool: 'list_directory', args: { recursive: true } },
  { tool: 'read_file', args: { path: 'README.md' } },
  { tool: 'write_file', args: { path: 'notes/todo.md', content: '# TODO\n- try the tools\n' } },
  { tool: 'append_file', args: { path: 'notes/todo.md', content: '- look at the trash\n' } },
  {
    tool: 'edit_file',
    args: {
      path: 'src/greet.ts',
      edits: [
        { oldString: "'Hello, ' + name", newString: '`Hello, ${name}!`' },
        { oldString: 'greet(name: string)', newString: 'greet(name: string = "you")' },
      ],
    },
  },
  {
    tool: 'apply_patch',
    args: {
      input:
        '*** Begin Patch\n*** Update File: src/index.ts\n@@\n-console.log(greet(\'world\'))\n+console.log(greet(\'playground\'))\n*** Add File: src/farewell.ts\n+export const farewell = (name: string): string => `Bye, ${name}`\n*** End Patch\n',
    },
    note: 'one patch, two files, all or nothing',
  },
  { tool: 'read_file', args: { path: 'src/greet.ts', startLine: 1, endLine: 2 } },
  { tool: 'read_file', args: { path: 'src/missing.ts' } },
  { tool: 'create_directory', args: { path: 'build/output' } },
  { tool: 'write_file', args: { path: 'build/output/app.js', content: "console.log('built')\n" } },
  { tool: 'move_file', args: { source: 'notes/todo.md', destination: 'docs/todo.md' } },
  { tool: 'delete_file', args: { path: 'docs/todo.md' } },
  { tool: 'trash_list', args: {} },
  { tool: 'restore_file', args: { trashedPath: LAST_TRASHED } },
  { tool: 'remove_dir', args: { path: 'build', recursive: true } },
  { tool: 'remove_dir', args: { path: 'notes' } },
  { tool: 'cwd_push', args: { path: 'src' } },
  { tool: 'list_directory', args: {} },
  { tool: 'cwd_pop', args: {} },
  {
    tool: 'write_file',
    args: { path: 'README.md', content: 'overwritten\n' },
    approve: false,
    note: 'a denial: the same kind of call with a handler that says no',
  },
]

/** Reads a script file's JSON text: an array of {@link ScriptCall}. Throws an `Error` naming the bad entry. */
export function parseScript(text: string, source: string): ScriptCall[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new Error(`${source}: not JSON: ${(error as Error).message}`)
  }
  if (!Array.isArray(parsed)) throw new Error(`${source}: expected a JSON array of calls`)
  return parsed.map((entry: unknown, i): ScriptCall => {
    const where = `${source}: call ${i + 1}`
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error(`${where}: expected an object`)
    const { tool, args, approve, note, ...rest } = entry as Record<string, unknown>
    const unknownKeys = Object.keys(rest)
    if (unknownKeys.length > 0) throw new Error(`${where}: unknown key "${unknownKeys[0]}" (use tool, args, approve, note)`)
    if (typeof tool !== 'string' || tool === '') throw new Error(`${where}: "tool" must be a tool name`)
    if (approve !== undefined && typeof approve !== 'boolean') throw new Error(`${where}: "approve" must be true or false`)
    if (note !== undefined && typeof note !== 'string') throw new Error(`${where}: "note" must be a string`)
    return { tool, args: args ?? {}, ...(approve === undefined ? {} : { approve }), ...(note === undefined ? {} : { note }) }
  })
}

/** Replaces every string equal to {@link LAST_TRASHED} in `value` with `archive` (when known). */
export function substituteLastTrashed(value: unknown, archive: string | undefined): unknown {
  if (archive === undefined) return value
  if (value === LAST_TRASHED) return archive
  if (Array.isArray(value)) return value.map((item) => substituteLastTrashed(item, archive))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituteLastTrashed(item, archive)]))
  }
  return value
}

/** Prefixes every line of `text` (without its final newline). */
export function indent(text: string, prefix = '   │ '): string {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => prefix + line)
    .join('\n')
}

/** A confirm handler that prints each request and gives `answer`. */
function answering(answer: boolean, print: (line: string) => void): ConfirmHandler {
  return (request) => {
    const flags = [request.recursive && 'recursive', request.permanent && 'permanent'].filter(Boolean)
    const verdict = answer ? 'approved' : 'denied'
    print(`   ? ${request.label}  ${request.detail}${flags.length ? `  [${flags.join(', ')}]` : ''}  → ${verdict}`)
    if (request.diff) print(indent(request.diff, '   ┆ '))
    return answer
  }
}

/** The archive a result trashed, if any (`data.trashedTo`). */
function trashedTo(result: ToolResult): string | undefined {
  const archive = result.data?.['trashedTo']
  return typeof archive === 'string' ? archive : undefined
}

/**
 * Runs `calls` in order, printing each call, its confirmation and its result. Tool failures are
 * printed, not thrown (a script may show an error on purpose). Returns the results.
 */
export async function runScript(ws: Workspace, calls: readonly ScriptCall[], print: (line: string) => void): Promise<ToolResult[]> {
  const results: ToolResult[] = []
  let lastTrashed: string | undefined
  for (const [i, call] of calls.entries()) {
    if (call.note !== undefined) print(`── ${call.note}`)
    const args = substituteLastTrashed(call.args ?? {}, lastTrashed)
    const header = ws.formatCall(call.tool, args)
    print(`── ${i + 1}. ${call.tool}${header ? `  ${header}` : ''}`)
    print(`   args ${JSON.stringify(args)}`)
    const result = await ws.call(call.tool, args, { confirm: answering(call.approve !== false, print) })
    print(`   → ${result.status}${result.code ? ` (${result.code})` : ''}`)
    print(indent(result.output))
    print('')
    lastTrashed = trashedTo(result) ?? lastTrashed
    results.push(result)
  }
  return results
}

/** Prints the session's header: workspace, trash location, tools. */
export function printScriptHeader(ws: Workspace, root: string, dataDir: string, print: (line: string) => void): void {
  print(`agent-fs-tools demo — workspace ${root}`)
  print(`trash and audit log in ${dataDir}`)
  print('')
  print(`tools: ${ws.definitions().map((d) => d.name).join(', ')}`)
  print('')
}

/** Prints the host API's view of the trash (`ws.trashList()`), as a host would show it. */
export async function printTrashSummary(ws: Workspace, print: (line: string) => void): Promise<void> {
  try {
    const entries = await ws.trashList()
    print(`host API: trashList() → ${entries.length} archive(s)`)
    for (const entry of entries) print(`   ${entry.kind} ${entry.originalPath} (${entry.size} bytes) → ${entry.archivePath}`)
  } catch (error) {
    print(`host API: trashList() unavailable: ${(error as Error).message}`)
  }
}
