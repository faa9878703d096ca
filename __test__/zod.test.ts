/** `agent-fs-tools/zod`: every tool's schema survives `z.fromJSONSchema` and agrees with the tool. */
import { describe, expect, it } from 'vitest'
import { zodSchemas } from 'agent-fs-tools/zod'
import { ARGUMENT_EXAMPLES } from './helpers/examples.js'
import { tempWorkspace } from './helpers/temp.js'

describe('zodSchemas', () => {
  it('has one schema per enabled tool, keyed by the host name', () => {
    const { ws } = tempWorkspace({ tools: { read_file: { name: 'view_file' }, cwd_pop: { enabled: false } } })
    const schemas = zodSchemas(ws)
    expect(Object.keys(schemas).sort()).toEqual(ws.definitions().map((d) => d.name).sort())
    expect(schemas).toHaveProperty('view_file')
    expect(schemas).not.toHaveProperty('read_file')
    expect(schemas).not.toHaveProperty('cwd_pop')
  })

  it('rejects unknown properties for every tool, like the tool does', async () => {
    const { ws } = tempWorkspace()
    const schemas = zodSchemas(ws)
    for (const def of ws.definitions()) {
      const args = { surplusArgument: 1 }
      expect(schemas[def.name]!.safeParse(args).success, def.name).toBe(false)
      const result = await ws.call(def.name, args)
      expect(result.code, def.name).toBe('INVALID_ARGUMENTS')
      expect(result.output, def.name).toContain('surplusArgument')
    }
  })

  const { ws: listed } = tempWorkspace()
  const names = listed.definitions().map((d) => d.name).filter((name) => name in ARGUMENT_EXAMPLES)

  it.each(names)('%s: accepts the valid examples', (name) => {
    const { ws } = tempWorkspace()
    const schema = zodSchemas(ws)[name]!
    for (const args of ARGUMENT_EXAMPLES[name]!.valid) {
      expect(schema.safeParse(args).error, JSON.stringify(args)).toBeUndefined()
    }
  })

  it.each(names)('%s: rejects the invalid examples, as the tool does (INVALID_ARGUMENTS naming the field)', async (name) => {
    const { ws } = tempWorkspace()
    const schema = zodSchemas(ws)[name]!
    for (const { args, field } of ARGUMENT_EXAMPLES[name]!.invalid) {
      const label = `${name} ${JSON.stringify(args)}`
      expect(schema.safeParse(args).success, label).toBe(false)
      const result = await ws.call(name, args)
      expect(result.code, label).toBe('INVALID_ARGUMENTS')
      expect(result.output, label).toContain(field)
    }
  })
})
