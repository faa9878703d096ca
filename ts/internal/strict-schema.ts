/**
 * A tool's JSON Schema in the shape OpenAI's strict function calling (structured outputs)
 * accepts, made from the schema the tools check arguments against: every property required, the
 * optional ones nullable (`null` means "not given" to every tool, ../../docs/hosts.md#the-workspace-api), `additionalProperties:
 * false` on every object, and only the keywords strict mode supports (`minLength` and the like
 * dropped: the tools still check them, and say so in their error).
 *
 * @internal
 */
import type { JsonSchema, ToolInputSchema } from '../types.js'

/** The keywords strict mode supports (OpenAI, "Supported schemas"), plus `description`. */
export const STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$defs',
  '$ref',
  // strings
  'pattern',
  'format',
  // numbers
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  // arrays
  'minItems',
  'maxItems',
])

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * `schema` accepting `null` too, as `anyOf: [schema, { type: 'null' }]` (which strict mode takes,
 * and Ajv's strict mode too, unlike a union `type` array), its description kept outside.
 */
function nullable(schema: JsonSchema): JsonSchema {
  const { description, ...rest } = schema
  return { anyOf: [rest, { type: 'null' }], ...(description !== undefined && { description }) }
}

/** One schema (at any depth) in the strict shape. */
function strict(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {}
  for (const [keyword, value] of Object.entries(schema)) {
    if (STRICT_KEYWORDS.has(keyword)) out[keyword] = value
  }
  if (isObject(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
    const properties: Record<string, JsonSchema> = {}
    for (const [name, property] of Object.entries(schema.properties)) {
      if (!isObject(property)) continue
      const made = strict(property)
      properties[name] = required.has(name) ? made : nullable(made)
    }
    out.properties = properties
    out.required = Object.keys(properties)
    out.additionalProperties = false
  }
  if (isObject(schema.items)) out.items = strict(schema.items)
  if (Array.isArray(schema.anyOf)) out.anyOf = schema.anyOf.map((s) => (isObject(s) ? strict(s) : s))
  if (isObject(schema.$defs)) {
    out.$defs = Object.fromEntries(Object.entries(schema.$defs).map(([k, s]) => [k, isObject(s) ? strict(s) : s]))
  }
  return out
}

/** The tool's input schema in OpenAI's strict shape (see the module documentation). */
export function toStrictSchema(schema: ToolInputSchema): ToolInputSchema {
  return strict(schema) as ToolInputSchema
}
