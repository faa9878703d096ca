/**
 * `agent-fs-tools/zod`: zod 4 schemas of a workspace's tools, built from their JSON Schemas with
 * `z.fromJSONSchema` (zod ≥ 4.2; an optional peer dependency needed only by this entry and `./tomo`).
 *
 * @packageDocumentation
 */
import { z } from 'zod'
import type { ToolDefinition } from './types.js'
import type { Workspace } from './workspace.js'

/** The zod schemas of a workspace's enabled tools, keyed by the tool names the model sees. */
export type ZodSchemas = Record<string, z.ZodType>

/** The zod schema of one tool definition's arguments. */
export function zodSchemaOf(definition: ToolDefinition): z.ZodType {
  return z.fromJSONSchema(definition.inputSchema as Parameters<typeof z.fromJSONSchema>[0])
}

/** Options of {@link zodSchemas}. */
export interface ZodSchemasOptions {
  /** From the strict schemas (`ws.definitions({ strict: true })`): optional arguments are nullable. Default `false`. */
  strict?: boolean
}

/**
 * Returns `{ [toolName]: ZodType }` for every enabled tool of `ws`, so a host can validate a
 * model's arguments with the types it already uses. The tool still validates its arguments itself.
 *
 * @example
 * ```ts
 * const schemas = zodSchemas(ws)
 * const parsed = schemas.read_file.safeParse({ path: 'README.md' })
 * ```
 */
export function zodSchemas(ws: Workspace, options: ZodSchemasOptions = {}): ZodSchemas {
  const schemas: ZodSchemas = {}
  for (const definition of ws.definitions({ strict: options.strict ?? false })) {
    schemas[definition.name] = zodSchemaOf(definition)
  }
  return schemas
}
