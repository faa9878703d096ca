/**
 * `agent-fs-tools/ai-sdk`: the workspace's tools as Vercel AI SDK 6 tools (`ai` is an optional
 * peer dependency needed only by this entry).
 *
 * @packageDocumentation
 */
import { jsonSchema, tool, type JSONSchema7, type ModelMessage, type Tool } from 'ai'
import type { ConfirmHandler, Permissions, ToolResult } from './types.js'
import type { Workspace } from './workspace.js'

/** Options of {@link createAiSdkTools}. */
export interface AiSdkToolsOptions {
  /** Confirmation handler for these tools' calls; defaults to the workspace's `confirm`. */
  confirm?: ConfirmHandler
  /** Permissions for these tools' calls, merged over the workspace's. */
  permissions?: Permissions
  /**
   * Who asks the user when a call needs an approval:
   * - `'callback'` (default): the `confirm` handler, while `execute` waits for its answer.
   * - `'sdk'`: the AI SDK's own tool approval (AI SDK 6 `needsApproval`), for a UI that approves
   *   between requests (a web chat). `needsApproval` is our permission decision for that call
   *   ({@link Workspace.check}: `true` when it would ask); a call the user approved through the SDK
   *   (its `tool-approval-response` is in the messages) runs without asking again. A call that
   *   was not approved that way and turns out to need an approval when it runs (the files changed
   *   meanwhile) falls back to `confirm` (or the workspace's), and without one is denied with
   *   `NO_CONFIRM_HANDLER`.
   */
  approval?: 'callback' | 'sdk'
  /**
   * Offer the tools in strict mode (`strict: true` on each tool, with the schemas of
   * `ws.definitions({ strict: true })`: every property required, optional ones nullable), for
   * providers that need it (OpenAI's strict function calling). Default `false`.
   */
  strict?: boolean
}

/** The options the AI SDK passes to a tool's `execute` (its `ToolExecutionOptions`). */
export type AiSdkExecuteOptions = Parameters<NonNullable<Tool<Record<string, unknown>, ToolResult>['execute']>>[1]

/**
 * An AI SDK tool of this package: input is the model's arguments, output the {@link ToolResult}.
 * `execute` is always present and returns a promise, so a host may also call it directly.
 */
export type AiSdkTool = {
  execute: (input: Record<string, unknown>, options: AiSdkExecuteOptions) => Promise<ToolResult>
} & Tool<Record<string, unknown>, ToolResult>

/** What `toModelOutput` gives the AI SDK (its `ToolResultOutput`, which `ai` does not re-export). */
export type AiSdkModelOutput = Awaited<ReturnType<NonNullable<AiSdkTool['toModelOutput']>>>

/** The tools of a workspace, keyed by the names the model sees; pass it as `tools` to `generateText`/`streamText`. */
export type AiSdkTools = Record<string, AiSdkTool>

/**
 * What the model sees of a result: the output text; failures as error text and denials as an
 * execution denial, so the model knows nothing changed.
 */
export function toModelOutput(result: ToolResult): AiSdkModelOutput {
  switch (result.status) {
    case 'ok':
      return { type: 'text', value: result.output }
    case 'denied':
      return { type: 'execution-denied', reason: result.output }
    default:
      return { type: 'error-text', value: result.output }
  }
}

/**
 * Returns `{ [toolName]: tool(...) }` for every enabled tool of `ws`. Each `execute` runs the call
 * through the workspace with the AI SDK's `abortSignal` wired to the call, and resolves to the
 * {@link ToolResult} (its `diff` and `data` stay available to a UI).
 *
 * @example
 * ```ts
 * const result = await generateText({ model, tools: createAiSdkTools(ws, { confirm }), prompt })
 * ```
 */
export function createAiSdkTools(ws: Workspace, options: AiSdkToolsOptions = {}): AiSdkTools {
  const approval = options.approval ?? 'callback'
  if (approval !== 'callback' && approval !== 'sdk') throw new TypeError("approval: must be 'callback' or 'sdk'")
  const permissions = options.permissions === undefined ? {} : { permissions: options.permissions }
  const strict = options.strict ?? false
  if (typeof strict !== 'boolean') throw new TypeError('strict: must be a boolean')
  const tools: AiSdkTools = {}
  for (const definition of ws.definitions({ strict })) {
    const name = definition.name
    const execute = (input: Record<string, unknown>, { abortSignal, toolCallId, messages }: AiSdkExecuteOptions): Promise<ToolResult> => {
      const approvedBySdk = approval === 'sdk' && approvedInMessages(messages, toolCallId)
      const confirm = approvedBySdk ? approvedAlready : options.confirm
      return ws.call(name, input, {
        ...(confirm !== undefined && { confirm }),
        ...permissions,
        ...(abortSignal !== undefined && { signal: abortSignal }),
      })
    }
    const made = tool<Record<string, unknown>, ToolResult>({
      description: definition.description,
      inputSchema: jsonSchema<Record<string, unknown>>(definition.inputSchema as JSONSchema7),
      ...(strict && { strict: true }),
      ...(approval === 'sdk' && {
        needsApproval: async (input: Record<string, unknown>) => (await ws.check(name, input, permissions)).decision === 'ask',
      }),
      execute,
      toModelOutput: ({ output }) => toModelOutput(output),
    })
    tools[name] = { ...made, execute }
  }
  return tools
}

/** The confirm handler of a call the user already approved through the AI SDK. */
const approvedAlready = (): boolean => true

/**
 * Whether the user approved tool call `toolCallId` through the AI SDK: the messages hold the
 * assistant's `tool-approval-request` for it and a `tool-approval-response` with `approved: true`.
 */
export function approvedInMessages(messages: readonly ModelMessage[], toolCallId: string): boolean {
  const requested = new Set<string>()
  const approved = new Set<string>()
  for (const message of messages) {
    if (typeof message.content === 'string') continue
    for (const part of message.content) {
      if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) requested.add(part.approvalId)
      if (part.type === 'tool-approval-response' && part.approved) approved.add(part.approvalId)
    }
  }
  return [...requested].some((id) => approved.has(id))
}
