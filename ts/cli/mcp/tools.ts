/**
 * The mapping between the workspace's tools and MCP: tool definitions → MCP `Tool`s (schema,
 * description, annotations, output schema), and `ToolResult` → MCP `CallToolResult`.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ToolDefinition, ToolResult } from '../../index.js'

/**
 * JSON Schema of every tool's `structuredContent`, the {@link ToolResult} as bounded as the text
 * content (a client may hand either to the model):
 *
 * - `status`: `ok`, `denied` (the user or a missing confirmation said no; nothing changed) or
 *   `error` (see `code`).
 * - `output`: the text for the model, the same as the text content (a diff in it is cut at the
 *   output limit, with a note).
 * - `code`: the error code (SPEC §8) when `status` is `error`.
 * - `diff`: the unified diff alone, for write_file / edit_file / append_file, when `output` holds
 *   it whole (a larger diff is only in `output`, cut).
 * - `data`: structured details, e.g. `trashedTo` for a delete.
 */
export const OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'denied', 'error'] },
    output: { type: 'string' },
    code: { type: 'string' },
    diff: { type: 'string' },
    data: { type: 'object' },
  },
  required: ['status', 'output'],
} as const satisfies Tool['outputSchema']

/** The structured part of a result; see {@link OUTPUT_SCHEMA}. */
export interface StructuredResult {
  [key: string]: unknown
  status: ToolResult['status']
  output: string
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
 * The MCP result of a call: `output` as text content, the result as `structuredContent` (see
 * {@link OUTPUT_SCHEMA}), and `isError: true` unless the status is `ok` (denials included, so the
 * model sees that nothing changed).
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const structured: StructuredResult = { status: result.status, output: result.output }
  if (result.code !== undefined) structured.code = result.code
  if (result.diff !== undefined && result.output.includes(result.diff)) structured.diff = result.diff
  if (result.data !== undefined) structured.data = result.data
  return {
    content: [{ type: 'text', text: result.output }],
    structuredContent: structured,
    ...(result.status !== 'ok' && { isError: true }),
  }
}
