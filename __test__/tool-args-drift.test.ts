/**
 * Each tool's arguments are written three times: the JSON Schema in its Rust file (what
 * `ws.definitions()` gives hosts and models), its serde `Args` (pinned to the schema by the cargo
 * test `every_tool_parses_exactly_the_arguments_its_schema_lists`), and `ToolArgs` in
 * `ts/types.ts`. This test pins the last to the first: for every tool, the argument names, which
 * are required and their JSON types, at every depth (an edit's fields too), read from
 * `ts/types.ts` with the TypeScript compiler.
 */
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'

/** One argument as both sides describe it: required or not, its JSON type, and an object's (or object array item's) fields. */
interface Shape {
  required: boolean
  type: string
  fields?: Record<string, Shape>
}

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; required?: string[]; items?: JsonSchema }

/** The fields of an object schema. */
function fromSchema(schema: JsonSchema): Record<string, Shape> {
  const required = new Set(schema.required ?? [])
  return Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([name, property]) => {
      const object = property.type === 'object' ? property : property.items?.type === 'object' ? property.items : undefined
      const type = property.type === 'array' ? `array of ${property.items?.type}` : String(property.type)
      const shape: Shape = { required: required.has(name), type: type === 'number' ? 'integer' : type }
      if (object) shape.fields = fromSchema(object)
      return [name, shape]
    }),
  )
}

/** `ts/types.ts` as the compiler sees it. */
function typesProgram(): { checker: ts.TypeChecker; file: ts.SourceFile } {
  const path = join(__dirname, '..', 'ts', 'types.ts')
  const program = ts.createProgram([path], { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true })
  return { checker: program.getTypeChecker(), file: program.getSourceFile(path)! }
}

/** The JSON type of a TypeScript type, `null` and `undefined` left out (they mean "not given"). */
function jsonType(checker: ts.TypeChecker, type: ts.Type): { type: string; item?: ts.Type } {
  const present = checker.getNonNullableType(type)
  if (checker.isArrayType(present)) {
    const item = checker.getTypeArguments(present as ts.TypeReference)[0]!
    return { type: `array of ${jsonType(checker, item).type}`, item }
  }
  if (present.flags & ts.TypeFlags.StringLike) return { type: 'string' }
  if (present.flags & ts.TypeFlags.NumberLike) return { type: 'integer' }
  if (present.flags & ts.TypeFlags.BooleanLike) return { type: 'boolean' }
  if (present.flags & ts.TypeFlags.Object) return { type: 'object' }
  return { type: checker.typeToString(present) }
}

/** The fields of an object type. */
function fromType(checker: ts.TypeChecker, type: ts.Type, at: ts.Node): Record<string, Shape> {
  return Object.fromEntries(
    checker.getPropertiesOfType(type).map((symbol) => {
      const propertyType = checker.getTypeOfSymbolAtLocation(symbol, at)
      const { type: json, item } = jsonType(checker, propertyType)
      const shape: Shape = { required: (symbol.flags & ts.SymbolFlags.Optional) === 0, type: json }
      const object = json === 'object' ? checker.getNonNullableType(propertyType) : json === 'array of object' ? item : undefined
      if (object) shape.fields = fromType(checker, object, at)
      return [symbol.name, shape]
    }),
  )
}

/** `ToolArgs` of `ts/types.ts`: each tool's fields. */
function toolArgs(): Record<string, Record<string, Shape>> {
  const { checker, file } = typesProgram()
  const declaration = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'ToolArgs')
  if (!declaration) throw new Error('ts/types.ts declares no interface ToolArgs')
  const toolArgsType = checker.getTypeAtLocation(declaration)
  return Object.fromEntries(
    checker.getPropertiesOfType(toolArgsType).map((tool) => [tool.name, fromType(checker, checker.getTypeOfSymbolAtLocation(tool, declaration), declaration)]),
  )
}

describe('ToolArgs (ts/types.ts) and the schemas the tools report', () => {
  const { ws } = tempWorkspace()
  const definitions = ws.definitions()
  const declared = toolArgs()

  it('name the same tools', () => {
    expect(Object.keys(declared).sort()).toEqual(definitions.map((d) => d.name).sort())
  })

  it.each(definitions.map((d) => [d.name, d] as const))('%s: same arguments, required-ness and types', (name, definition) => {
    expect(declared[name]).toEqual(fromSchema(definition.inputSchema as JsonSchema))
  })
})
