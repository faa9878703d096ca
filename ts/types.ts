/**
 * Public types of the `agent-fs-tools` JS surface (../docs/hosts.md#the-workspace-api, ../docs/permissions-and-prompts.md, ../docs/tools.md#limits, ../docs/trash.md, ../docs/tools.md#error-codes).
 *
 * Apart from {@link ERROR_CODES}, this module holds declarations only.
 */

/** The canonical (default) name of every tool. A host may rename tools with {@link WorkspaceOptions.tools}. */
export type ToolName =
  | 'read_file'
  | 'write_file'
  | 'append_file'
  | 'edit_file'
  | 'apply_patch'
  | 'list_directory'
  | 'create_directory'
  | 'delete_file'
  | 'remove_dir'
  | 'move_file'
  | 'copy_file'
  | 'restore_file'
  | 'trash_list'
  | 'cwd_get'
  | 'cwd_push'
  | 'cwd_pop'
  | 'glob'
  | 'grep'

/**
 * Which operations run without asking the confirm handler (../docs/permissions-and-prompts.md). The keys are Tomo's.
 *
 * `cwd*` keys apply to canonical paths inside the workspace `root`; `global*` keys to every other
 * path. A partial object merges with the defaults: only `cwdReadFile` defaults to `true`.
 * Irreversible actions (`remove_dir` with `recursive: true`, any `permanent: true` delete) always ask.
 */
export interface Permissions {
  /** Read files and list directories inside `root` without asking. Default `true`. */
  cwdReadFile?: boolean
  /** Read files and list directories outside `root` without asking. Default `false`. */
  globalReadFile?: boolean
  /** Write, append, edit, create directories, move and copy destinations and restore targets inside `root`. Default `false`. */
  cwdWriteFile?: boolean
  /** The same as {@link Permissions.cwdWriteFile}, outside `root`. Default `false`. */
  globalWriteFile?: boolean
  /** Delete files (into the trash) and move sources inside `root`. Default `false`. */
  cwdRemoveFile?: boolean
  /** The same as {@link Permissions.cwdRemoveFile}, outside `root`. Default `false`. */
  globalRemoveFile?: boolean
  /** Remove empty directories inside `root`. Default `false`. */
  cwdRemoveDir?: boolean
  /** Remove empty directories outside `root`. Default `false`. */
  globalRemoveDir?: boolean
}

/** Size and time bounds of the tools (../docs/tools.md#limits). Every field is optional in {@link WorkspaceOptions.limits}. */
export interface Limits {
  /** Most bytes `read_file` returns without a range. Default 65536. */
  readMaxBytes: number
  /** Most lines `read_file` returns without a range. Default 500. */
  readMaxLines: number
  /** Largest `content` `write_file` accepts, in bytes. Default 1 MiB. */
  writeMaxBytes: number
  /** Largest size a file may reach through `append_file`, in bytes. Default 10 MiB. */
  appendMaxTotalBytes: number
  /** Largest file `edit_file` edits, in bytes. Default 10 MiB. */
  editMaxFileBytes: number
  /** Largest patch `apply_patch` accepts, in bytes (each file it changes is bounded by `editMaxFileBytes`); also the longest combined diff it shows (cut with a note beyond). Default 4 MiB. */
  patchMaxBytes: number
  /** Most bytes one `apply_patch` may read and write in all: every file it updates, moves, deletes or replaces at its size before, plus every file it writes at its size after; a patch over it is refused (`TOO_LARGE`) before anything is written. Default 64 MiB. */
  patchMaxTotalBytes: number
  /** Most entries `list_directory` returns. Default 500. */
  listMaxEntries: number
  /** Most frames on the cwd stack. Default 100. */
  cwdMaxDepth: number
  /** Time budget of one diff before a coarser diff is used, in milliseconds. Default 1000. */
  diffTimeoutMs: number
}

/** How one tool is exposed to the model. */
export interface ToolConfig {
  /** `false` removes the tool from {@link Workspace.definitions} and refuses its calls (`TOOL_DISABLED`). */
  enabled?: boolean
  /** The name the model sees and calls, e.g. `remove_file` for `delete_file`. */
  name?: string
}

/** Where trashed files go and who is recorded as trashing them (../docs/trash.md). */
export interface TrashOptions {
  /** Data directory; archives live in `<dataDir>/trash/<sha256(root)>/`. Default `~/.agent-fs-tools` (env `AGENT_FS_TOOLS_DATA_DIR`). */
  dataDir?: string
  /** Session identifier recorded in archives and the audit log. */
  sessionId?: string
  /** Run identifier recorded in archives and the audit log. */
  runId?: string
  /** Agent name recorded in archives and the audit log. */
  agentName?: string
  /** gzip level of the archives, 0–9. */
  compressionLevel?: number
  /** Keep the old bytes of a file overwritten by `write_file` in the trash. Default `true`. */
  keepOverwrites?: boolean
}

/** Options of `new Workspace(options)` (../docs/hosts.md#the-workspace-api). Invalid options throw a `TypeError` naming the option. */
export interface WorkspaceOptions {
  /** Workspace root (canonicalised). The initial cwd and the scope of the `cwd*` permissions. Required. */
  root: string
  /** When set, a deny-by-default sandbox: only these trees (canonicalised) are reachable. */
  allowedPaths?: string[]
  /** Remove the write tools from the definitions and refuse them with `READ_ONLY`. Default `false`. */
  readOnly?: boolean
  /** What runs without asking; merged over the defaults. */
  permissions?: Permissions
  /** Disable or rename tools, keyed by canonical tool name. An unknown key is a `TypeError`. */
  tools?: Partial<Record<ToolName, ToolConfig>>
  /** Overrides of the default limits. */
  limits?: Partial<Limits>
  /** Trash location and attribution. */
  trash?: TrashOptions
  /** Append a JSONL audit record for every mutating call. Default `true`. */
  audit?: boolean
  /** Default confirmation handler; a call's {@link CallContext.confirm} overrides it. Without one, actions that need confirmation are denied. */
  confirm?: ConfirmHandler
  /** How long to wait for a confirmation before denying, in milliseconds. `0` (default) waits forever. */
  confirmTimeoutMs?: number
  /**
   * What `write_file` does over an existing file the model has not read in this workspace, or that
   * changed since it last read it (../docs/tools.md#stale-views): `'refuse'` (default) answers `STALE` and writes
   * nothing; `'allow'` writes it (the output says when the file had changed since the model saw it).
   */
  staleWrites?: 'refuse' | 'allow'
}

/** A JSON Schema fragment (draft 2020-12 subset accepted by zod's `z.fromJSONSchema`). */
export type JsonSchema = { [keyword: string]: unknown }

/** The input schema of a tool: always a closed object schema. */
export interface ToolInputSchema {
  type: 'object'
  /** One schema per argument, each with an LLM-oriented `description`. */
  properties: { [argument: string]: JsonSchema }
  /** Required argument names. */
  required: string[]
  additionalProperties: false
  /** Further JSON Schema keywords, if any. */
  [keyword: string]: unknown
}

/** Options of {@link Workspace.definitions}. */
export interface DefinitionsOptions {
  /**
   * Schemas OpenAI's strict function calling accepts: every property required, optional ones
   * nullable (`null` means "not given" to every tool), no `minLength`. Default `false`.
   */
  strict?: boolean
}

/** What a host registers with its model for one tool. */
export interface ToolDefinition {
  /** The name the model calls (the host's rename, if any). */
  name: string
  /** A description written for an LLM. */
  description: string
  /** JSON Schema of the arguments. */
  inputSchema: ToolInputSchema
  /** Hints for hosts (e.g. MCP `readOnlyHint` / `destructiveHint`). */
  annotations: {
    /** The tool never changes the filesystem. */
    readOnly: boolean
    /** The tool can remove or overwrite data. */
    destructive: boolean
    /** Calling it again with the same arguments changes nothing more (MCP `idempotentHint`). */
    idempotent: boolean
  }
}

/** Error codes of {@link ToolResult.code} (../docs/tools.md#error-codes). */
export type ErrorCode =
  | 'INVALID_ARGUMENTS'
  | 'NOT_FOUND'
  | 'NOT_A_FILE'
  | 'NOT_A_DIRECTORY'
  | 'NOT_A_REGULAR_FILE'
  | 'NOT_EMPTY'
  | 'ALREADY_EXISTS'
  | 'PATH_NOT_ALLOWED'
  | 'READ_ONLY'
  | 'TOOL_DISABLED'
  | 'UNKNOWN_TOOL'
  | 'TOO_LARGE'
  | 'NO_MATCH'
  | 'MULTIPLE_MATCHES'
  | 'IDENTICAL_STRINGS'
  | 'BINARY_FILE'
  | 'ENCODING'
  | 'CONFLICT'
  | 'DANGEROUS_PATH'
  | 'STACK_OVERFLOW'
  | 'TRASH_CORRUPT'
  | 'ABORTED'
  | 'OS_PERMISSION'
  | 'IO_ERROR'
  | 'STALE'

/** Every error code, in the order of ../docs/tools.md#error-codes. */
export const ERROR_CODES: readonly ErrorCode[] = Object.freeze([
  'INVALID_ARGUMENTS',
  'NOT_FOUND',
  'NOT_A_FILE',
  'NOT_A_DIRECTORY',
  'NOT_A_REGULAR_FILE',
  'NOT_EMPTY',
  'ALREADY_EXISTS',
  'PATH_NOT_ALLOWED',
  'READ_ONLY',
  'TOOL_DISABLED',
  'UNKNOWN_TOOL',
  'TOO_LARGE',
  'NO_MATCH',
  'MULTIPLE_MATCHES',
  'IDENTICAL_STRINGS',
  'BINARY_FILE',
  'ENCODING',
  'CONFLICT',
  'DANGEROUS_PATH',
  'STACK_OVERFLOW',
  'TRASH_CORRUPT',
  'ABORTED',
  'OS_PERMISSION',
  'IO_ERROR',
  'STALE',
] as const)

/**
 * Why a call was denied (`ToolResult.code` when `status` is `denied`); nothing changed in any case.
 * - `USER_DENIED`: the user was asked and said no (or the confirm handler threw, which counts as no).
 * - `CONFIRM_TIMEOUT`: the user was asked and did not answer within `confirmTimeoutMs`.
 * - `NO_CONFIRM_HANDLER`: the call needed an approval and nobody could be asked (no confirm handler,
 *   an MCP client without elicitation); the host must grant the permission or give a handler.
 */
export type DenialCode = 'USER_DENIED' | 'CONFIRM_TIMEOUT' | 'NO_CONFIRM_HANDLER'

/**
 * Outcome of a tool call. `ws.call` resolves to one for every tool-level failure instead of rejecting.
 * `Data` is the shape of `data` ({@link ToolData} for a tool called by its canonical name).
 */
export interface ToolResult<Data = Record<string, unknown>> {
  /** `ok`: done; `denied`: the user (or the missing handler) said no, nothing changed; `error`: see `code`. */
  status: 'ok' | 'denied' | 'error'
  /**
   * Text for the model, bounded in bytes (near `readMaxBytes`, with a line saying what was left out
   * and how to see it). For edit/append and a write that keeps some old lines it contains the
   * unified diff of the change; a new file or a whole rewrite is counted, not echoed.
   */
  output: string
  /**
   * Set when `status` is `error` (an {@link ErrorCode}) and when it is `denied` (a
   * {@link DenialCode}: who said no, or that nobody could be asked).
   */
  code?: ErrorCode | DenialCode
  /**
   * The unified diff alone (write/edit/append/patch), for a UI: whole up to 16 × `readMaxBytes`
   * (1 MiB by default), then cut at a line and still a valid diff (`data.diffLinesLeftOut` says how
   * many lines were left out).
   */
  diff?: string
  /**
   * Structured details, e.g. `trashedTo` for a delete. Paths here and in `output` are in their
   * shown form (control characters, bidi controls and bytes that are not UTF-8 escaped; README,
   * Security model): pass them back to the tools as they are.
   */
  data?: Data
}

/** What a confirm handler is asked (../docs/permissions-and-prompts.md). */
export interface ConfirmRequest {
  /** The tool's name as the model called it. */
  tool: string
  /** A short question, e.g. `Write file?`. */
  label: string
  /** The absolute path acted on, in its shown form (no control characters); of a patch, its first file written. */
  path: string
  /**
   * Every absolute path the change touches, each once (shown form): a patch's files, a move's source
   * and destination. A host with per-path rules checks every one. Always set by this package.
   */
  paths?: string[]
  /**
   * The absolute path, plus ` (recursive)`, ` (permanent)` or ` → <destination>` where that applies.
   * When a path is outside the workspace root, a last line names them: `Outside the project (<root>): <abs>, …`.
   */
  detail: string
  /** The unified diff of the pending write/edit/append. Its lines are the file's exact text: escape control characters before printing it to a terminal. */
  diff?: string
  /** Set for a recursive directory removal. */
  recursive?: boolean
  /** Set for a permanent (not trashed) removal. */
  permanent?: boolean
  /**
   * The blast radius, counted before asking: the tree a recursive `remove_dir` (or a `move_file`,
   * `copy_file` or `restore_file` that replaces a directory) removes, or the files and lines an `apply_patch`
   * changes. The same facts are in `detail` in words.
   */
  summary?: ChangeSummary
  /**
   * Fires when the prompt is withdrawn: the call was aborted, or it ended (e.g. `confirmTimeoutMs`
   * passed) while the prompt was open. A UI closes the prompt then; its answer no longer matters.
   */
  signal?: AbortSignal
}

/** {@link ConfirmRequest.summary}: a directory tree, or a change over many files. */
export type ChangeSummary = TreeSummary | FilesSummary

/**
 * What a directory tree holds (the directory itself not counted). Counting is bounded in time and
 * entries: on a huge tree it stops, `complete` is `false` and every number is a floor ("at least").
 */
export interface TreeSummary {
  kind: 'tree'
  /** The directory's absolute path (shown form). */
  path: string
  /** Regular files (and any FIFO or device) beneath it. */
  files: number
  /** Directories beneath it. */
  dirs: number
  /** Symbolic links beneath it (counted, never followed). */
  links: number
  /** The regular files' sizes, summed. */
  bytes: number
  /** Everything was counted. */
  complete: boolean
  /** The largest files (up to 3), biggest first, by absolute path. */
  largest: { path: string; bytes: number }[]
}

/** What a patch does, file by file and line by line. */
export interface FilesSummary {
  kind: 'files'
  added: number
  updated: number
  deleted: number
  moved: number
  linesAdded: number
  linesRemoved: number
}

/**
 * Asks the user whether an action may proceed. Only `true` (or a promise of `true`) approves; a
 * throw, a rejection, any other value or a timeout counts as "no".
 */
export type ConfirmHandler = (request: ConfirmRequest) => boolean | Promise<boolean>

/**
 * How far a long operation of a call is: a recursive trash or restore (in bytes of content, or in
 * entries for a tree without content), a search over a tree or a patch over many files (in files).
 */
export interface ToolProgress {
  /** Units done so far; never decreases within one call. */
  done: number
  /** Units in all, when known before the work starts (a tree counted before asking, a patch's files). */
  total?: number
  /** What `done` and `total` count. */
  unit: 'files' | 'bytes' | 'entries'
}

/** Per-call overrides for {@link Workspace.call}. */
export interface CallContext {
  /** Confirmation handler for this call, instead of the workspace's. */
  confirm?: ConfirmHandler
  /** Permissions for this call, merged over the workspace's. */
  permissions?: Permissions
  /** Aborting before the change is committed gives `ABORTED` with nothing changed. */
  signal?: AbortSignal
  /**
   * Told how far the call's long operations are: once when one starts (`done: 0`), then at most
   * 10 times a second while it runs. Every update reaches it before the call resolves, none after.
   * It runs on the JS thread but the work never waits for it; what it throws is ignored.
   */
  onProgress?: (progress: ToolProgress) => void
}

/**
 * What a call would do about asking the user ({@link Workspace.check}), learnt without running it:
 * `allow` (the permissions grant it, or it never asks), `ask` with the request its confirm handler
 * would get (without `signal`), or `fail` with the result it would end with before asking (bad
 * arguments, a missing file, a dangerous path, a read-only workspace).
 */
export type CallCheck =
  | { decision: 'allow' }
  | { decision: 'ask'; request: Omit<ConfirmRequest, 'signal'> }
  | { decision: 'fail'; result: ToolResult }

/** Per-call options of {@link Workspace.check}. */
export interface CheckContext {
  /** Permissions for this call, merged over the workspace's. */
  permissions?: Permissions
  /** Stops a long check (counting a huge tree): the result is then `fail` with `ABORTED`. */
  signal?: AbortSignal
}

/** The workspace's working directory (top of its cwd stack). */
export interface CwdInfo {
  /** Absolute current directory. */
  cwd: string
  /** Nearest ancestor holding `.git`, or the directory itself. */
  projectRoot: string
  /** Number of pushed frames. */
  depth: number
}

/** One archive in this workspace's trash (../docs/trash.md). */
export interface TrashEntry {
  /** Absolute path of the `.tar.gz` archive (shown form); pass it to `restore_file` as `trashedPath`. */
  archivePath: string
  /** Absolute path the entry was trashed from, in its shown form (exact for any bytes). */
  originalPath: string
  /** Path relative to the workspace root (or `absolute/…` for paths outside it). */
  relativePath: string
  /** What was trashed. */
  kind: 'file' | 'directory' | 'symlink'
  /** Size in bytes of the content (a tree's total for a directory). */
  size: number
  /** When it was trashed (UTC timestamp). */
  trashedAt: string
  /** Session that trashed it. */
  sessionId: string
  /** Run that trashed it. */
  runId: string
  /** Agent that trashed it. */
  agentName: string
  /** Number of files in a trashed directory. */
  fileCount?: number
}

/** Options of {@link Workspace.trashClear}. */
export interface TrashClearOptions {
  /**
   * Only clear archives trashed at least this many milliseconds ago. Omitted: clear all. Either
   * way, archives still in use (their trash or a restore of them in flight) are skipped whatever
   * their age; a later clear removes them.
   */
  olderThanMs?: number
}

/** Result of {@link Workspace.trashClear}. */
export interface TrashClearResult {
  /** Number of archives removed. */
  cleared: number
  /** Bytes freed. */
  bytesFreed: number
}

/** What happened to one path in a {@link Change} (../docs/history-and-undo.md). */
export type ChangeAction = 'added' | 'modified' | 'deleted' | 'moved' | 'created' | 'removed'

/** One change in the workspace's history: a call that changed something, or an undo (../docs/history-and-undo.md). */
export interface Change {
  /** The change's id (a call's result carries it in `data.changeId`). */
  id: string
  /** When it was made: RFC 3339, UTC, milliseconds. */
  time: string
  /** The tool as the host named it, or `undo`. */
  tool: string
  /** `formatCall` of the call (for an undo: `undo <id> (<summary>)` or `undo session <id>`). */
  summary: string
  /** Every path it touched. */
  files: { path: string; action: ChangeAction; from?: string }[]
  sessionId: string
  runId: string
  agentName: string
  /** Whether `ws.undo({ id })` can take it back now. */
  undoable: boolean
  /** Why it cannot be undone (undone already, a copy it needs was cleared, none was kept). */
  reason?: string
  /** The undo that took it back, while that stands. */
  undoneBy?: string
  /** For an undo: the changes it took back. */
  undoes?: string[]
}

/** Options of {@link Workspace.history}. */
export interface HistoryOptions {
  /** At most this many changes, newest first. */
  limit?: number
  /** Only this session's changes. */
  sessionId?: string
}

/** Options of {@link Workspace.undo}. */
export interface UndoOptions {
  /** The change to take back (an undo's id redoes it). Omitted: the latest change that is neither undone nor an undo. */
  id?: string
  /** Take back every change of this session, newest first, as one all-or-nothing step. */
  sessionId?: string
  /** Asks the user once (label `Undo change?`, detail per file, diff); without it nobody is asked. */
  confirm?: ConfirmHandler
  /** Report what would happen; change nothing. */
  dryRun?: boolean
  /** Progress of an undo over many paths, as for a call (`CallContext.onProgress`). */
  onProgress?: (progress: ToolProgress) => void
}
/** An edit of `edit_file`. */
export interface EditFileEdit {
  /** The exact text to replace (not empty). */
  oldString: string
  /** Its replacement, taken literally. */
  newString: string
  /** Replace every occurrence instead of exactly one. */
  replaceAll?: boolean | null
}

/** The arguments of a tool without any. */
export type NoArgs = { [key: string]: never }

/**
 * The arguments of each tool, by canonical name (../docs/tools.md), for {@link Workspace.call}. They match
 * the tools' JSON Schemas; the schemas stay the check at run time. `null` for an optional argument
 * means "not given" (../docs/hosts.md#the-workspace-api), as a model held to strict function calling sends it.
 */
export interface ToolArgs {
  read_file: { path: string; startLine?: number | null; endLine?: number | null; startColumn?: number | null }
  write_file: { path: string; content: string }
  append_file: { path: string; content: string }
  edit_file: { path: string; edits: EditFileEdit[] }
  apply_patch: { input: string }
  list_directory: { path?: string | null; recursive?: boolean | null; includeIgnored?: boolean | null }
  create_directory: { path: string }
  delete_file: { path: string; permanent?: boolean | null }
  remove_dir: { path: string; recursive?: boolean | null; permanent?: boolean | null }
  move_file: { source: string; destination: string; overwrite?: boolean | null }
  copy_file: { source: string; destination: string; overwrite?: boolean | null }
  restore_file: { trashedPath: string; targetPath?: string | null; overwrite?: boolean | null }
  trash_list: NoArgs
  cwd_get: NoArgs
  cwd_push: { path: string }
  cwd_pop: NoArgs
  glob: { pattern: string; path?: string | null; includeIgnored?: boolean | null }
  grep: {
    pattern: string
    path?: string | null
    include?: string | null
    caseInsensitive?: boolean | null
    contextLines?: number | null
    maxMatches?: number | null
    includeIgnored?: boolean | null
  }
}

/** One path a call changed (`data.files`): what happened to it, and where its old content went. */
export type ChangedFile = {
  path: string
  action: 'added' | 'modified' | 'deleted' | 'moved' | 'created' | 'removed'
  /** The path it was moved from. */
  from?: string
  /** The trash archive of what it replaced or removed. */
  trashedTo?: string
}

/** An interface as a type literal, so that a `ToolResult<…>` stays assignable to a plain `ToolResult`. */
type Plain<T> = { [K in keyof T]: T[K] }

/** `data` of the tools that change files: the paths changed, and the change's id in the history (../docs/history-and-undo.md). */
type Changes = { files?: ChangedFile[]; trashedTo?: string; changeId?: string; diffLinesLeftOut?: number }

/**
 * The `data` of each tool's successful result, by canonical name. Paths are absolute, in their
 * shown form. A failed or denied result may carry other data (e.g. `grant` for `NO_CONFIRM_HANDLER`).
 */
export interface ToolData {
  read_file: { path: string; startLine: number; endLine: number; totalLines: number; truncated: boolean }
  write_file: { path: string; bytes: number; created: boolean } & Changes
  append_file: { path: string; bytes: number; created: boolean } & Changes
  edit_file: { path: string; edits: number; replacements: number } & Changes
  apply_patch: Changes
  list_directory: { path: string; entries: number; truncated: boolean }
  create_directory: { path: string; created: boolean } & Changes
  delete_file: { path: string } & Changes
  remove_dir: { path: string; recursive: boolean } & Changes
  move_file: { source: string; destination: string } & Changes
  copy_file: { source: string; destination: string } & Changes
  restore_file: { path: string; kind: TrashEntry['kind']; restoredFrom: string } & Changes
  trash_list: { entries: TrashEntry[] }
  cwd_get: Plain<CwdInfo>
  cwd_push: Plain<CwdInfo>
  cwd_pop: Plain<CwdInfo>
  glob: { path: string; files: number; total: number; truncated: boolean }
  grep: { path: string; matches: number; files: number; truncated: boolean }
}

/** The arguments after the name in a typed {@link Workspace.call}: `args` may be left out where every argument is optional. */
export type CallArgs<N extends ToolName> = {} extends ToolArgs[N]
  ? [args?: ToolArgs[N], ctx?: CallContext]
  : [args: ToolArgs[N], ctx?: CallContext]
