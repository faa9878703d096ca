/**
 * `agent-fs-tools/opencode`: the workspace's tools as an opencode plugin (the shape
 * `@opencode-ai/plugin` defines; opencode runs it under its own Bun). Needs zod 4 (optional peer)
 * for the tools' `args`.
 *
 * - Names: every tool is offered as `<prefix><name>` (default `fs_`: `fs_read_file`,
 *   `fs_apply_patch`, `fs_glob`), so none collides with opencode's built-ins (`glob`, `grep`, …)
 *   or is dropped by its model-specific filters (it offers a tool named `apply_patch` only to
 *   some models). The descriptions and the hints in results name the tools by these names.
 * - Permissions: every call asks opencode (`ctx.ask`, the permission named after the tool, with
 *   every path the change touches as its patterns), so opencode's `permission` config and its
 *   prompt decide; a deny rule or a rejected prompt is a denied result, nothing changed.
 * - Abort: opencode's `ctx.abort`. Progress: `ctx.metadata({ title })`.
 * - Results: `{ title, output, metadata: { diff, … } }`; a result that is not ok is thrown as an
 *   `Error` with the text for the model, which is how opencode reports a tool failure.
 *
 * @packageDocumentation
 */
import { isAbsolute, relative, sep } from 'node:path'
import type { z } from 'zod'
import { describeProgress } from './internal/progress.js'
import type { ConfirmRequest, Permissions, ToolName, ToolResult, WorkspaceOptions } from './types.js'
import { Workspace } from './workspace.js'
import { zodSchemaOf } from './zod.js'

/** What opencode passes a plugin (the part of `@opencode-ai/plugin`'s `PluginInput` used here). */
export interface OpencodePluginInput {
  /** The session's project directory: the workspace root. */
  directory: string
  /** The project's worktree root (`/` outside a git repository). */
  worktree: string
}

/** What opencode's permission request takes (`@opencode-ai/plugin`'s `AskInput`). */
export interface OpencodeAskInput {
  permission: string
  patterns: string[]
  always: string[]
  metadata: Record<string, unknown>
}

/** The part of `@opencode-ai/plugin`'s `ToolContext` used here. */
export interface OpencodeToolContext {
  directory?: string
  worktree?: string
  abort?: AbortSignal
  metadata?: (input: { title?: string; metadata?: Record<string, unknown> }) => void
  /** Resolves when allowed; throws when a rule denies or the user rejects. */
  ask?: (input: OpencodeAskInput) => Promise<void>
}

/** What a tool's `execute` returns (`@opencode-ai/plugin`'s `ToolResult`, object form). */
export interface OpencodeToolOutput {
  title: string
  output: string
  metadata: Record<string, unknown>
}

/** An opencode plugin tool (`@opencode-ai/plugin`'s `ToolDefinition`). */
export interface OpencodeTool {
  description: string
  /** The arguments as a zod raw shape (opencode builds `z.object(args)` and its JSON Schema). */
  args: Record<string, z.ZodType>
  execute(args: Record<string, unknown>, context: OpencodeToolContext): Promise<OpencodeToolOutput>
}

/** What the plugin gives opencode (`@opencode-ai/plugin`'s `Hooks`, tools only). */
export interface OpencodeHooks {
  tool: Record<string, OpencodeTool>
}

/** Options of {@link createOpencodePlugin}. */
export interface OpencodePluginOptions extends Omit<WorkspaceOptions, 'root' | 'allowedPaths' | 'permissions' | 'confirm' | 'tools'> {
  /** Put before every tool name. Default `fs_`. */
  prefix?: string
  /** Disable or rename tools (before the prefix), as `WorkspaceOptions.tools`. */
  tools?: WorkspaceOptions['tools']
  /**
   * The trees the tools may reach. Default: the project, opencode's worktree (its directory
   * outside a git repository). `null`: every path (a prompt then says which paths are outside
   * the project).
   */
  allowedPaths?: string[] | null
  /**
   * Permission keys granted without asking opencode. Default: none, so every call goes through
   * `ctx.ask` and opencode's `permission` config decides (it allows what it has no rule for).
   */
  permissions?: Permissions
}

/** Every tool, by its canonical name. */
const TOOL_NAMES = [
  'read_file',
  'write_file',
  'edit_file',
  'append_file',
  'apply_patch',
  'list_directory',
  'create_directory',
  'delete_file',
  'remove_dir',
  'move_file',
  'copy_file',
  'restore_file',
  'trash_list',
  'cwd_get',
  'cwd_push',
  'cwd_pop',
  'glob',
  'grep',
] as const satisfies readonly ToolName[]
/** Fails to compile when a tool is missing from {@link TOOL_NAMES}. */
const everyTool: Exclude<ToolName, (typeof TOOL_NAMES)[number]> extends never ? true : never = true
void everyTool

/** No permission granted: opencode is asked for every call. */
const ASK_OPENCODE: Permissions = {
  cwdReadFile: false,
  cwdWriteFile: false,
  cwdRemoveFile: false,
  cwdRemoveDir: false,
  globalReadFile: false,
  globalWriteFile: false,
  globalRemoveFile: false,
  globalRemoveDir: false,
}

/** The workspace's `tools` option: every tool renamed to `<prefix><name>`. */
export function prefixedTools(prefix: string, tools: WorkspaceOptions['tools'] = {}): NonNullable<WorkspaceOptions['tools']> {
  const renamed: NonNullable<WorkspaceOptions['tools']> = {}
  for (const name of TOOL_NAMES) {
    const own = tools[name] ?? {}
    renamed[name] = { ...own, name: `${prefix}${own.name ?? name}` }
  }
  return renamed
}

/** How opencode names a path in a permission pattern: relative to the worktree inside it, else absolute. */
function pattern(path: string, worktree: string): string {
  if (worktree === '' || worktree === sep) return path
  const rel = relative(worktree, path)
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel.split(sep).join('/')
}

/** Asks opencode for `request`: `true` when its permission resolves, `false` when it throws (a deny rule, a reject). */
async function askOpencode(request: ConfirmRequest, context: OpencodeToolContext, worktree: string): Promise<boolean> {
  if (typeof context.ask !== 'function') return false
  const patterns = (request.paths ?? [request.path]).map((path) => pattern(path, worktree))
  try {
    await context.ask({
      permission: request.tool,
      patterns,
      always: ['*'],
      metadata: {
        filepath: patterns.join(', '),
        label: request.label,
        detail: request.detail,
        ...(request.diff !== undefined && { diff: request.diff }),
        ...(request.summary !== undefined && { summary: request.summary }),
      },
    })
    return true
  } catch {
    return false
  }
}

/** A result that is not ok, thrown as opencode expects a tool failure; `code` and `status` kept. */
export class OpencodeToolError extends Error {
  readonly status: ToolResult['status']
  readonly code: ToolResult['code']
  constructor(result: ToolResult) {
    super(result.output)
    this.name = 'OpencodeToolError'
    this.status = result.status
    this.code = result.code
  }
}

/** The opencode result of a successful call: the output for the model, the diff and data for its UI. */
export function toOpencodeOutput(result: ToolResult, title: string): OpencodeToolOutput {
  if (result.status !== 'ok') throw new OpencodeToolError(result)
  return {
    title,
    output: result.output,
    metadata: { ...(result.diff !== undefined && { diff: result.diff }), ...(result.data !== undefined && { data: result.data }) },
  }
}

/** The tools of `ws` as opencode plugin tools (their names are `ws`'s, prefixed by {@link prefixedTools}). */
export function createOpencodeTools(ws: Workspace, worktree: string): Record<string, OpencodeTool> {
  const tools: Record<string, OpencodeTool> = {}
  for (const definition of ws.definitions()) {
    const name = definition.name
    const schema = zodSchemaOf(definition) as z.ZodObject
    tools[name] = {
      description: definition.description,
      args: schema.shape,
      async execute(args, context) {
        const metadata = typeof context.metadata === 'function' ? context.metadata.bind(context) : undefined
        const result = await ws.call(name, args, {
          confirm: (request) => askOpencode(request, context, context.worktree ?? worktree),
          ...(context.abort !== undefined && { signal: context.abort }),
          ...(metadata !== undefined && { onProgress: (progress) => metadata({ title: `Working: ${describeProgress(progress)}` }) }),
        })
        return toOpencodeOutput(result, ws.formatCall(name, args))
      },
    }
  }
  return tools
}

/**
 * Returns an opencode plugin offering the tools, over a workspace rooted at opencode's project
 * directory. In `.opencode/plugin/agent-fs-tools.ts`:
 *
 * @example
 * ```ts
 * import { createOpencodePlugin } from 'agent-fs-tools/opencode'
 * export const AgentFsTools = createOpencodePlugin()
 * ```
 */
export function createOpencodePlugin(options: OpencodePluginOptions = {}): (input: OpencodePluginInput) => Promise<OpencodeHooks> {
  const { prefix = 'fs_', tools, allowedPaths, permissions, ...rest } = options
  return async (input) => {
    const project = input.worktree && input.worktree !== sep ? input.worktree : input.directory
    const ws = new Workspace({
      ...rest,
      root: input.directory,
      ...(allowedPaths !== null && { allowedPaths: allowedPaths ?? [project] }),
      permissions: permissions ?? ASK_OPENCODE,
      tools: prefixedTools(prefix, tools),
      trash: { agentName: 'opencode', ...rest.trash },
    })
    return { tool: createOpencodeTools(ws, project) }
  }
}
