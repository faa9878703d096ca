/**
 * The parts of Tomo's tool API (github.com/LeeCheneler/tomo, `src/tools/types.ts` and
 * `src/config/schema.ts`) that a tool sees, restated here so the examples and tests can check that
 * `createTomoTools` is assignable to Tomo's `Tool` without depending on Tomo itself.
 */
import type { z } from 'zod'

/** Tomo's resolved file permissions: `cwdReadFile` defaulted, the rest optional. */
export interface TomoPermissions {
  cwdReadFile: boolean
  cwdWriteFile?: boolean | undefined
  cwdRemoveFile?: boolean | undefined
  cwdRemoveDir?: boolean | undefined
  globalReadFile?: boolean | undefined
  globalWriteFile?: boolean | undefined
  globalRemoveFile?: boolean | undefined
  globalRemoveDir?: boolean | undefined
}

/** Tomo's provider config (only what the context carries). */
export interface TomoProvider {
  name: string
  type: string
  baseUrl: string
  apiKey?: string
}

/** Options of Tomo's approval prompt. */
export interface TomoConfirmOptions {
  diff?: string
  label?: string
  detail?: string
}

/** Tomo's `ToolContext`. */
export interface TomoToolContext {
  permissions: TomoPermissions
  allowedCommands: readonly string[]
  confirm: (message: string, options?: TomoConfirmOptions) => Promise<boolean>
  ask: (question: string, options?: string[]) => Promise<string | null>
  webSearchApiKey?: string
  onProgress?: (output: string) => void
  signal: AbortSignal
  provider: TomoProvider
  model: string
  contextWindow: number
  depth: number
}

/** Tomo's `ToolResult`. */
export interface TomoToolResult {
  output: string
  status: 'ok' | 'error' | 'denied'
  format: 'plain' | 'diff'
}

/** Tomo's `Tool`. */
export interface TomoTool {
  name: string
  displayName: string
  description: string
  parameters: Record<string, unknown>
  argsSchema: z.ZodType
  formatCall: (args: Record<string, unknown>) => string
  execute: (args: unknown, context: TomoToolContext) => Promise<TomoToolResult>
}

/** What Tomo passes a slash command's handler (`src/commands/registry.ts`; only the parts used here). */
export interface TomoCommandContext {
  usage: { promptTokens: number; completionTokens: number } | null
  contextWindow: number
}

/**
 * Tomo's slash command that answers with text (`CommandDefinition`'s handler form). Tomo passes no
 * arguments: `/undo history` runs `undo`, so each action is a command of its own.
 */
export interface TomoCommand {
  name: string
  description: string
  handler: (context: TomoCommandContext) => string | Promise<string>
}
