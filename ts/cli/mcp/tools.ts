/**
 * The mapping between the workspace's tools and MCP: tool definitions → MCP `Tool`s (schema,
 * description, annotations, output schema), and `ToolResult` → MCP `CallToolResult`.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ToolDefinition, ToolResult } from '../../index.js'

/**
 * JSON Schema of every tool's `structuredContent`: the {@link ToolResult} without its texts. The
 * text for the model (`output`, with the diff it shows) is the text content, sent once; a client
 * that reads only `structuredContent` gets the facts, not the same text a second time.
 *
 * - `status`: `ok`, `denied` (the user or a missing confirmation said no; nothing changed) or
 *   `error` (see `code`).
 * - `code`: the error code (../../../docs/tools.md#error-codes) when `status` is `error`, the denial code when `denied`.
 * - `data`: structured details, e.g. `trashedTo` for a delete, `changeId`, `files` — bounded like the
 *   text: a patch over many files lists in `files` what fits in {@link STRUCTURED_DATA_MAX_BYTES},
 *   and `filesLeftOut` counts the rest.
 */
export const OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'denied', 'error'] },
    code: { type: 'string' },
    data: { type: 'object' },
  },
  required: ['status'],
} as const satisfies Tool['outputSchema']

/** The most bytes of JSON `structuredContent.data` carries (the default `readMaxBytes`). */
export const STRUCTURED_DATA_MAX_BYTES = 65_536

/** `data` within {@link STRUCTURED_DATA_MAX_BYTES}: its `files` cut, `filesLeftOut` counting the rest. */
function boundedData(data: Record<string, unknown>): Record<string, unknown> {
  const files = data.files
  if (!Array.isArray(files) || JSON.stringify(data).length <= STRUCTURED_DATA_MAX_BYTES) return data
  const rest = JSON.stringify({ ...data, files: [], filesLeftOut: files.length }).length
  let used = rest
  let kept = 0
  while (kept < files.length && used + JSON.stringify(files[kept]).length + 1 <= STRUCTURED_DATA_MAX_BYTES) {
    used += JSON.stringify(files[kept]).length + 1
    kept += 1
  }
  return { ...data, files: files.slice(0, kept), filesLeftOut: files.length - kept }
}

/** The structured part of a result; see {@link OUTPUT_SCHEMA}. */
export interface StructuredResult {
  [key: string]: unknown
  status: ToolResult['status']
  code?: string
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
 * The MCP result of a call: `output` as the text content (once), the rest of the result as
 * `structuredContent` (see {@link OUTPUT_SCHEMA}), and `isError: true` unless the status is `ok`
 * (denials included, so the model sees that nothing changed).
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const structured: StructuredResult = { status: result.status }
  if (result.code !== undefined) structured.code = result.code
  if (result.data !== undefined) structured.data = boundedData(result.data)
  return {
    content: [{ type: 'text', text: result.output }],
    structuredContent: structured,
    ...(result.status !== 'ok' && { isError: true }),
  }
}
