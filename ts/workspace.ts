/**
 * `Workspace`: the host-facing class (../docs/hosts.md#the-workspace-api), a thin layer over the native core. It validates
 * what only JS can see (functions, BigInts, cycles), keeps the confirm handlers on the JS side, and
 * turns every tool-level failure into a {@link ToolResult}.
 */
import { isAbortSignal, onAbort } from './internal/abort.js'
import { answering, OpenPrompts, toNativeConfirm } from './internal/confirm.js'
import { callIdSequence } from './internal/ids.js'
import { argumentsToNative, JsonValueError, resultFromNative, toJson } from './internal/json.js'
import { toStrictSchema } from './internal/strict-schema.js'
import { NativeWorkspace, type NativeWorkspaceContract } from './native.js'
import type {
  CallArgs,
  CallCheck,
  CallContext,
  Change,
  HistoryOptions,
  UndoOptions,
  CheckContext,
  ConfirmHandler,
  CwdInfo,
  DefinitionsOptions,
  ToolData,
  ToolDefinition,
  ToolName,
  ToolProgress,
  ToolResult,
  TrashClearOptions,
  TrashClearResult,
  TrashEntry,
  WorkspaceOptions,
} from './types.js'

const nextCallId = callIdSequence()

function isPlainObjectLike(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The native constructor reports a bad option as an `Error` with `code === 'InvalidArg'`. */
function isInvalidArg(error: unknown): error is Error {
  return error instanceof Error && (error as { code?: unknown }).code === 'InvalidArg'
}

function invalidArguments(tool: string, error: JsonValueError): ToolResult {
  return {
    status: 'error',
    code: 'INVALID_ARGUMENTS',
    output:
      `Invalid arguments for ${tool}: ${error.message}. ` +
      'Pass only plain JSON values (strings, numbers, booleans, null, arrays and objects).',
  }
}

/** `ctx.permissions` as JSON for the core; a TypeError for a host's mistake. */
function permissionsJsonOf(permissions: unknown): string | null {
  if (permissions === undefined) return null
  if (!isPlainObjectLike(permissions)) throw new TypeError('ctx.permissions: must be an object')
  try {
    return toJson(permissions)
  } catch (error) {
    if (error instanceof JsonValueError) throw new TypeError(`ctx.permissions.${error.message}`)
    throw error
  }
}

/**
 * The native progress callback for a host's `onProgress`: parses each update and ignores what the
 * handler throws. The core delivers every update before the call's result; `close` drops anything
 * later all the same.
 */
function progressCallback(onProgress: (progress: ToolProgress) => void): { native: (json: string) => void; close: () => void } {
  let open = true
  return {
    native: (json) => {
      // '' only marks that every update before it was delivered (the call's result follows).
      if (!open || json === '') return
      try {
        onProgress(JSON.parse(json) as ToolProgress)
      } catch {
        // A host's display failing is no reason to fail (or crash) the call.
      }
    },
    close: () => {
      open = false
    },
  }
}

/**
 * What the native constructor takes: the options as JSON, without `confirm` (checked here).
 * Throws the constructor's `TypeError` for what only JS can see.
 */
function nativeOptions(options: WorkspaceOptions): { optionsJson: string; confirm: ConfirmHandler | undefined } {
  if (!isPlainObjectLike(options)) {
    throw new TypeError('options: must be an object with at least `root`')
  }
  const { confirm, ...rest } = options
  if (confirm !== undefined && typeof confirm !== 'function') {
    throw new TypeError('confirm: must be a function')
  }
  try {
    return { optionsJson: toJson(rest), confirm }
  } catch (error) {
    if (error instanceof JsonValueError) throw new TypeError(error.message, { cause: error })
    throw error
  }
}

/**
 * Checks `options` as `new Workspace(options)` does — the same `TypeError` naming a bad option —
 * without making a workspace: nothing is opened and no crash recovery starts (a workspace's
 * recovery acts only within its own sandbox, so a check should not start one).
 *
 * @internal
 */
export function checkWorkspaceOptions(options: WorkspaceOptions): void {
  const { optionsJson } = nativeOptions(options)
  try {
    NativeWorkspace.checkOptions(optionsJson)
  } catch (error) {
    if (isInvalidArg(error)) throw new TypeError(error.message, { cause: error })
    throw error
  }
}

/**
 * A filesystem toolset bound to one workspace root: tool definitions for a model, and the calls
 * that run them (sandbox, permissions, confirmations, trash and audit live in the native core).
 *
 * @example
 * ```ts
 * const ws = new Workspace({ root: process.cwd(), confirm: async (req) => askUser(req.label, req.detail) })
 * const tools = ws.definitions()
 * const result = await ws.call('read_file', { path: 'README.md' })
 * ```
 */
export class Workspace {
  readonly #native: NativeWorkspaceContract
  readonly #confirm: ConfirmHandler | undefined
  #definitions: ToolDefinition[] | undefined
  #strictDefinitions: ToolDefinition[] | undefined

  /**
   * Creates a workspace. Throws a `TypeError` naming the option for invalid options (a missing
   * `root`, a wrong type, an unknown tool name in `tools`, …). What a crashed process left in
   * this workspace (a cut-short append, temp files of interrupted writes, moves and restores) is
   * repaired on a native thread; the first `call`, `trashList` or `trashClear` waits for that.
   */
  constructor(options: WorkspaceOptions) {
    const { optionsJson, confirm } = nativeOptions(options)
    try {
      this.#native = new NativeWorkspace(optionsJson)
    } catch (error) {
      if (isInvalidArg(error)) throw new TypeError(error.message, { cause: error })
      throw error
    }
    this.#confirm = confirm
  }

  /**
   * The enabled tools, with the host's names, LLM-oriented descriptions and JSON Schemas. Each call
   * returns a fresh copy, so callers may modify it.
   *
   * @param options.strict - schemas OpenAI's strict function calling (structured outputs) accepts:
   *   every property required, the optional ones nullable (a tool takes `null` as "not given"),
   *   `additionalProperties: false` at every level, and no keyword strict mode does not support
   *   (`minLength`: the tools still check it). Default `false`: the schemas as the tools check them.
   */
  definitions(options?: DefinitionsOptions): ToolDefinition[] {
    if (options !== undefined && !isPlainObjectLike(options)) throw new TypeError('options: must be an object')
    const strict = options?.strict
    if (strict !== undefined && typeof strict !== 'boolean') throw new TypeError('strict: must be a boolean')
    this.#definitions ??= JSON.parse(this.#native.definitions()) as ToolDefinition[]
    if (strict !== true) return structuredClone(this.#definitions)
    this.#strictDefinitions ??= this.#definitions.map((d) => ({ ...d, inputSchema: toStrictSchema(d.inputSchema) }))
    return structuredClone(this.#strictDefinitions)
  }

  /**
   * Runs one tool call. Resolves to a {@link ToolResult} for every tool-level failure (bad
   * arguments, missing files, denials, aborts, OS errors); rejects with a `TypeError` naming the
   * mistake only for host bugs: a non-function `ctx.confirm`, a `ctx.signal` that is not an
   * AbortSignal, a non-function `ctx.onProgress`, a `ctx.permissions` key that is not a permission or
   * a value that is not a boolean.
   *
   * @param name - the tool's name as the model called it.
   * @param args - the model's arguments; `undefined` means `{}`.
   * @param ctx - per-call confirm handler, permissions, abort signal and progress callback.
   *
   * A tool called by its canonical name takes its {@link ToolArgs} and gives its {@link ToolData}.
   * Any other name (a renamed tool, a name from the model) takes `unknown` arguments; a canonical
   * name does not fall through to that overload, so its arguments are always checked.
   */
  call<N extends ToolName>(name: N, ...rest: CallArgs<N>): Promise<ToolResult<ToolData[N]>>
  call<S extends string>(name: S extends ToolName ? never : S, args?: unknown, ctx?: CallContext): Promise<ToolResult>
  async call(name: string, args?: unknown, ctx?: CallContext): Promise<ToolResult> {
    if (typeof name !== 'string') {
      return { status: 'error', code: 'UNKNOWN_TOOL', output: 'The tool name must be a string.' }
    }
    if (ctx !== undefined && !isPlainObjectLike(ctx)) throw new TypeError('ctx: must be an object')
    const confirm = ctx?.confirm ?? this.#confirm
    if (confirm !== undefined && typeof confirm !== 'function') {
      throw new TypeError('ctx.confirm: must be a function')
    }
    const permissionsJson = permissionsJsonOf(ctx?.permissions)

    let argsJson: string
    let argsStrings: Record<string, string> | null
    try {
      ;({ json: argsJson, strings: argsStrings } = args === undefined ? { json: '{}', strings: null } : argumentsToNative(args))
    } catch (error) {
      if (error instanceof JsonValueError) return invalidArguments(name, error)
      // JSON.stringify overflows the stack on arguments nested thousands of levels deep.
      if (error instanceof RangeError) {
        return invalidArguments(name, new JsonValueError('', 'they are nested too deeply to be tool arguments'))
      }
      throw error
    }

    const signal = ctx?.signal
    if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError('ctx.signal: must be an AbortSignal')
    const onProgress = ctx?.onProgress
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('ctx.onProgress: must be a function')

    const id = nextCallId()
    // Set when this call is made from a confirm handler (of this or another workspace).
    const outer = answering.getStore() ?? []
    // Prompts still open when the call is aborted or over are withdrawn (their request's signal).
    const prompts = new OpenPrompts()
    const withdraw =
      signal === undefined
        ? undefined
        : onAbort(signal, () => {
            this.#native.abort(id)
            prompts.withdraw()
          })
    const progress = onProgress === undefined ? undefined : progressCallback(onProgress)
    try {
      const result = await this.#native.call(
        id,
        name,
        argsJson,
        argsStrings,
        permissionsJson,
        confirm === undefined ? null : toNativeConfirm(confirm, [...outer, id], prompts),
        outer.length > 0 ? [...outer] : null,
        progress?.native ?? null,
      )
      return resultFromNative<ToolResult>(result)
    } catch (error) {
      // The core rejects only a host's mistake (a key of ctx.permissions that is not a
      // permission, a value that is not a boolean), naming it.
      if (isInvalidArg(error)) throw new TypeError(error.message, { cause: error })
      throw error
    } finally {
      withdraw?.()
      prompts.withdraw()
      progress?.close()
    }
  }

  /**
   * What the call would do about asking the user, without running it: nothing is changed, asked,
   * audited or recorded. It runs the call's planning up to its permission decision (so the request
   * is exactly what `confirm` would get: the diff, the counted tree), then stops. For a host that
   * approves elsewhere (a web chat's approval UI, the AI SDK's `needsApproval`); the call itself
   * still decides again when it runs.
   *
   * @param name - the tool's name as the model called it.
   * @param args - the model's arguments; `undefined` means `{}`.
   * @param ctx - per-call permissions and abort signal.
   */
  async check(name: string, args: unknown, ctx?: CheckContext): Promise<CallCheck> {
    if (typeof name !== 'string') {
      return { decision: 'fail', result: { status: 'error', code: 'UNKNOWN_TOOL', output: 'The tool name must be a string.' } }
    }
    if (ctx !== undefined && !isPlainObjectLike(ctx)) throw new TypeError('ctx: must be an object')
    const permissionsJson = permissionsJsonOf(ctx?.permissions)
    let argsJson: string
    try {
      argsJson = args === undefined ? '{}' : toJson(args)
    } catch (error) {
      if (error instanceof JsonValueError) return { decision: 'fail', result: invalidArguments(name, error) }
      if (error instanceof RangeError) {
        return { decision: 'fail', result: invalidArguments(name, new JsonValueError('', 'they are nested too deeply to be tool arguments')) }
      }
      throw error
    }
    const signal = ctx?.signal
    if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError('ctx.signal: must be an AbortSignal')
    const id = nextCallId()
    const withdraw = signal === undefined ? undefined : onAbort(signal, () => this.#native.abort(id))
    try {
      return JSON.parse(await this.#native.check(id, name, argsJson, permissionsJson)) as CallCheck
    } catch (error) {
      if (isInvalidArg(error)) throw new TypeError(error.message, { cause: error })
      throw error
    } finally {
      withdraw?.()
    }
  }

  /**
   * A one-line header for a UI, e.g. `src/a.ts (3 edits)` or `build (recursive)`; for a path tool
   * without range or flag, the path exactly as the model gave it. `''` for arguments that are not JSON.
   */
  formatCall(name: string, args: unknown): string {
    if (typeof name !== 'string') return ''
    let argsJson: string
    try {
      argsJson = args === undefined ? '{}' : toJson(args)
    } catch {
      return ''
    }
    return this.#native.formatCall(name, argsJson)
  }

  /** The workspace's cwd stack top, for a host's own shell tool. The process's cwd is never changed. */
  cwd(): CwdInfo {
    return JSON.parse(this.#native.cwd()) as CwdInfo
  }

  /** This workspace's trash, newest first. */
  async trashList(): Promise<TrashEntry[]> {
    return JSON.parse(await this.#native.trashList()) as TrashEntry[]
  }

  /**
   * Removes trash archives (all, or those older than `olderThanMs`). For the host only: no tool
   * exposes it to the model. Safe while tool calls run: an archive whose trash or restore is still
   * in flight, or whose call finished only after this clear began, is kept.
   */
  async trashClear(options?: TrashClearOptions): Promise<TrashClearResult> {
    if (options !== undefined && !isPlainObjectLike(options)) throw new TypeError('options: must be an object')
    const olderThanMs = options?.olderThanMs
    if (olderThanMs !== undefined && !(typeof olderThanMs === 'number' && Number.isFinite(olderThanMs) && olderThanMs >= 0)) {
      throw new TypeError('olderThanMs: must be a non-negative number of milliseconds')
    }
    return JSON.parse(await this.#native.trashClear(olderThanMs ?? null)) as TrashClearResult
  }

  /**
   * The history of changes, newest first (../docs/history-and-undo.md): every call that changed something, and every
   * undo. It survives restarts (it lives in the data dir).
   */
  async history(options?: HistoryOptions): Promise<Change[]> {
    if (options !== undefined && !isPlainObjectLike(options)) throw new TypeError('options: must be an object')
    const { limit, sessionId } = options ?? {}
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) {
      throw new TypeError('limit: must be a non-negative integer')
    }
    if (sessionId !== undefined && typeof sessionId !== 'string') throw new TypeError('sessionId: must be a string')
    return JSON.parse(await this.#native.history(limit ?? null, sessionId ?? null)) as Change[]
  }

  /**
   * Takes back a change (../docs/history-and-undo.md): the latest that is neither undone nor an undo, the one `id`
   * names (an undo's id redoes it), or every change of `sessionId` as one step. Every path must
   * be exactly as the change left it, else `CONFLICT` and nothing changes; whatever the undo
   * replaces goes to the trash first. The undo is itself a change. For the host only: no tool
   * offers it to the model.
   */
  async undo(options?: UndoOptions): Promise<ToolResult> {
    if (options !== undefined && !isPlainObjectLike(options)) throw new TypeError('options: must be an object')
    const { id, sessionId, confirm, dryRun, onProgress } = options ?? {}
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('onProgress: must be a function')
    if (id !== undefined && typeof id !== 'string') throw new TypeError('id: must be a string')
    if (sessionId !== undefined && typeof sessionId !== 'string') throw new TypeError('sessionId: must be a string')
    if (confirm !== undefined && typeof confirm !== 'function') throw new TypeError('confirm: must be a function')
    if (dryRun !== undefined && typeof dryRun !== 'boolean') throw new TypeError('dryRun: must be a boolean')
    const callId = nextCallId()
    const requestJson = JSON.stringify({ id, sessionId, dryRun })
    // A prompt still open when the undo is over is withdrawn (its request's signal).
    const prompts = new OpenPrompts()
    const native = confirm === undefined ? null : toNativeConfirm(confirm, [callId], prompts)
    const progress = onProgress === undefined ? undefined : progressCallback(onProgress)
    try {
      return resultFromNative<ToolResult>(await this.#native.undo(callId, requestJson, native, progress?.native ?? null))
    } finally {
      prompts.withdraw()
      progress?.close()
    }
  }
}
