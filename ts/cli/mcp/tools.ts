/**
 * The mapping between the workspace's tools and MCP: tool definitions → MCP `Tool`s (schema,
 * description, annotations, output schema), and `ToolResult` → MCP `CallToolResult`.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ToolDefinition, ToolResult } from '../../index.js'

/**
 * JSON Schema of every tool's `structuredContent`: the {@link ToolResult} without `output` (which
 * is the text content).
 *
 * - `status`: `ok`, `denied` (the user or a missing confirmation said no; nothing changed) or
 *   `error` (see `code`).
 * - `code`: the error code (SPEC §8) when `status` is `error`.
 * - `diff`: the unified diff alone, for write_file / edit_file / append_file.
 * - `data`: structured details, e.g. `trashedTo` for a delete.
 */
export const OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'denied', 'error'] },
    code: { type: 'string' },
    diff: { type: 'string' },
    data: { type: 'object' },
  },
  required: ['status'],
} as const satisfies Tool['outputSchema']

/** The structured part of a result; see {@link OUTPUT_SCHEMA}. */
export interface StructuredResult {
  [key: string]: unknown
  status: ToolResult['status']
  code?: string
  diff?: string
  data?: Record<string, unknown>
}

/**
 * One MCP tool: the JSON Schema as `inputSchema`, the description, and hints derived from the
 * definition (`openWorldHint` is always false: the tools only touch the local filesystem).
 */
export function toMcpTool(definition: ToolDefinition): Tool {
  return {
    name: definition.name,
    description: definition.description,
    inputSchema: definition.inputSchema,
    outputSchema: OUTPUT_SCHEMA,
    annotations: {
      readOnlyHint: definition.annotations.readOnly,
      destructiveHint: definition.annotations.destructive,
      idempotentHint: definition.annotations.idempotent,
      openWorldHint: false,
    },
  }
}

/**
 * The MCP result of a call: `output` as text content, the rest as `structuredContent`, and
 * `isError: true` unless the status is `ok` (denials included, so the model sees that nothing changed).
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const structured: StructuredResult = { status: result.status }
  if (result.code !== undefined) structured.code = result.code
  if (result.diff !== undefined) structured.diff = result.diff
  if (result.data !== undefined) structured.data = result.data
  return {
    content: [{ type: 'text', text: result.output }],
    structuredContent: structured,
    ...(result.status !== 'ok' && { isError: true }),
  }
}
