/**
 * Schemas every provider takes (issue 28 item 4): both shapes of `ws.definitions()` compile under
 * Ajv 2020-12 in strict mode; `{ strict: true }` also obeys OpenAI's strict function calling rules
 * (checked below from OpenAI's published list, "Structured Outputs: supported schemas"), and a
 * model held to them — every argument sent, `null` for the ones it leaves out — is understood.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { jsonSchema } from 'ai'
import type { JsonSchema, ToolDefinition } from 'agent-fs-tools'
import { createAiSdkTools } from 'agent-fs-tools/ai-sdk'
import { zodSchemas } from 'agent-fs-tools/zod'
import { describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'

type Schema = JsonSchema

/**
 * OpenAI's strict-mode rules for a function's `parameters`, as published ("Supported schemas"):
 * the root is an object (not `anyOf`); every object sets `additionalProperties: false` and lists
 * every property in `required`; only the supported types, and per type only the supported
 * keywords (strings: `pattern`, `format` from its list; numbers: `multipleOf`, `maximum`,
 * `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; arrays: `minItems`, `maxItems`), plus
 * `description`, `enum`, `const`, `anyOf`, `$defs`, `$ref`; at most 5000 properties and 10 levels
 * of nesting; at most 1000 enum values; at most 120,000 characters of property names, definition
 * names, enum and const values. Returns every violation (empty: accepted).
 */
function strictModeViolations(root: Schema): string[] {
  const problems: string[] = []
  const types = new Set(['string', 'number', 'boolean', 'integer', 'object', 'array', 'null'])
  const formats = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])
  const common = new Set(['type', 'description', 'enum', 'const', 'anyOf', '$defs', '$ref'])
  const byType: Record<string, string[]> = {
    string: ['pattern', 'format'],
    number: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
    integer: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
    array: ['items', 'minItems', 'maxItems'],
    object: ['properties', 'required', 'additionalProperties'],
  }
  let properties = 0
  let enumValues = 0
  let characters = 0
  if (root.type !== 'object' || 'anyOf' in root) problems.push('root: must be an object, not anyOf')
  const visit = (schema: Schema, at: string, depth: number): void => {
    const declared = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type]
    for (const t of declared) if (!types.has(t as string)) problems.push(`${at}: type ${String(t)} is not supported`)
    const allowed = new Set([...common, ...declared.flatMap((t) => byType[t as string] ?? [])])
    for (const keyword of Object.keys(schema)) {
      if (!allowed.has(keyword)) problems.push(`${at}: keyword ${keyword} is not supported here`)
    }
    if (typeof schema.format === 'string' && !formats.has(schema.format)) problems.push(`${at}: format ${schema.format}`)
    if (Array.isArray(schema.enum)) {
      enumValues += schema.enum.length
      for (const v of schema.enum) characters += String(v).length
    }
    if (schema.const !== undefined) characters += String(schema.const).length
    if (declared.includes('object')) {
      if (depth > 10) problems.push(`${at}: nested deeper than 10 levels`)
      if (schema.additionalProperties !== false) problems.push(`${at}: additionalProperties must be false`)
      const props = (schema.properties ?? {}) as Record<string, Schema>
      const required = new Set((schema.required ?? []) as string[])
      for (const [name, property] of Object.entries(props)) {
        properties += 1
        characters += name.length
        if (!required.has(name)) problems.push(`${at}.${name}: every property must be in required`)
        visit(property, `${at}.${name}`, depth + 1)
      }
    }
    if (declared.includes('array') && typeof schema.items === 'object') visit(schema.items as Schema, `${at}[]`, depth)
    if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((s, i) => visit(s as Schema, `${at}.anyOf[${i}]`, depth))
    for (const [name, s] of Object.entries((schema.$defs ?? {}) as Record<string, Schema>)) {
      characters += name.length
      visit(s, `${at}.$defs.${name}`, depth)
    }
  }
  visit(root, 'parameters', 1)
  if (properties > 5000) problems.push(`${properties} properties, over 5000`)
  if (enumValues > 1000) problems.push(`${enumValues} enum values, over 1000`)
  if (characters > 120_000) problems.push(`${characters} characters of names and values, over 120,000`)
  return problems
}

function definitions(strict: boolean): ToolDefinition[] {
  return tempWorkspace().ws.definitions({ strict })
}

describe('schemas every provider takes', () => {
  it('both shapes compile under Ajv 2020-12 in strict mode', () => {
    for (const strict of [false, true]) {
      const ajv = new Ajv2020({ strict: true })
      for (const d of definitions(strict)) {
        expect(() => ajv.compile(d.inputSchema), `${d.name} (strict: ${strict})`).not.toThrow()
      }
    }
  })

  it('the strict shape obeys every published strict-mode rule; the default shape does not', () => {
    const strict = definitions(true)
    expect(strict).toHaveLength(18)
    for (const d of strict) expect(strictModeViolations(d.inputSchema), d.name).toEqual([])
    // The checker can fail: the default shape has optional properties and minLength (which is
    // why a host could not use it with strict mode).
    const loose = definitions(false).flatMap((d) => strictModeViolations(d.inputSchema))
    expect(loose.filter((p) => p.includes('every property must be in required')).length).toBeGreaterThan(10)
    expect(loose.filter((p) => p.includes('keyword minLength')).length).toBeGreaterThanOrEqual(12)
  })

  it('the strict shape is the default one made strict: same properties, optional ones nullable', () => {
    const loose = definitions(false)
    const strict = definitions(true)
    const ajv = new Ajv2020({ strict: true })
    for (const [i, d] of loose.entries()) {
      const s = strict[i]!
      expect(s.name).toBe(d.name)
      expect(s.description).toBe(d.description)
      expect(Object.keys(s.inputSchema.properties)).toEqual(Object.keys(d.inputSchema.properties))
      const optional = Object.keys(d.inputSchema.properties).filter((p) => !d.inputSchema.required.includes(p))
      // Every argument given, the optional ones as null: valid against the strict schema only.
      const args: Record<string, unknown> = Object.fromEntries(Object.keys(d.inputSchema.properties).map((p) => [p, null]))
      for (const p of d.inputSchema.required) args[p] = d.name === 'edit_file' && p === 'edits' ? [{ oldString: 'a', newString: 'b', replaceAll: null }] : 'x'
      expect(ajv.validate(s.inputSchema, args), `${d.name}: ${ajv.errorsText()}`).toBe(true)
      if (optional.length > 0) expect(ajv.validate(d.inputSchema, args), d.name).toBe(false)
    }
  })

  it('a call the way a strict model makes it, null for what it leaves out, runs as without them', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    writeFileSync(join(root, 'a.txt'), 'one\ntwo\n')
    const read = await ws.call('read_file', { path: 'a.txt', startLine: null, endLine: null, startColumn: null })
    expect(read.status, read.output).toBe('ok')
    const edit = await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'one', newString: '1', replaceAll: null }] })
    expect(edit.status, edit.output).toBe('ok')
    const found = await ws.call('glob', { pattern: '*.txt', path: null, includeIgnored: null })
    expect(found.output).toBe('a.txt')
    expect(ws.formatCall('read_file', { path: 'a.txt', startLine: null, endLine: null })).toBe('a.txt')
    // A required argument is not optional: null is refused, naming it.
    const missing = await ws.call('read_file', { path: null } as never)
    expect(missing).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS', output: 'read_file: invalid arguments: path: must be a string, got null' })
  })

  it('the adapters take the strict shape on request; their defaults are unchanged', () => {
    const { ws } = tempWorkspace()
    const strictZod = zodSchemas(ws, { strict: true })
    expect(strictZod.read_file!.safeParse({ path: 'a', startLine: null, endLine: null, startColumn: null }).success).toBe(true)
    expect(zodSchemas(ws).read_file!.safeParse({ path: 'a', startLine: null }).success).toBe(false)

    const strictTools = createAiSdkTools(ws, { strict: true })
    const loose = createAiSdkTools(ws)
    expect(strictTools.read_file!.strict).toBe(true)
    expect(loose.read_file!.strict).toBeUndefined()
    const schemaOf = (t: { inputSchema: unknown }) => (t.inputSchema as ReturnType<typeof jsonSchema>).jsonSchema as Schema
    expect(strictModeViolations(schemaOf(strictTools.edit_file!))).toEqual([])
    expect(strictModeViolations(schemaOf(loose.edit_file!))).not.toEqual([])
    expect(() => createAiSdkTools(ws, { strict: 'yes' as never })).toThrow(/^strict: must be a boolean$/)
    expect(() => ws.definitions({ strict: 1 as never })).toThrow(TypeError)
  })
})
