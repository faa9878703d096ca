/**
 * Hostile input (issue "Hardening"): every tool of `ws.definitions()` fed wrong types, missing
 * and extra fields, huge strings, deep nesting, NUL and odd Unicode in paths and content.
 *
 * For every call: `ws.call` resolves (never rejects) to a well-formed ToolResult with a documented
 * code (../docs/tools.md#error-codes); the process survives; nothing outside the workspace root changes; a call that fails
 * changes nothing at all; a call that succeeds changes only the paths it names (and, for the
 * path tools, names them byte for byte: no trimming or Unicode normalisation).
 */
import { createHash } from 'node:crypto'
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { ERROR_CODES, Workspace, type ToolDefinition, type ToolResult } from 'agent-fs-tools'
import { tempWorkspaceDirs } from './helpers/temp.js'
import { ALL } from './helpers/trash.js'
import { scaled } from './helpers/time'
import { symlinkOrSkip } from './helpers/links.js'

type Args = Record<string, unknown>

/** How the tools show a name without backslashes: control characters, bidi controls and line separators escaped. */
function shownName(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, (c) => {
    const named: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' }
    const code = c.charCodeAt(0)
    return named[c] ?? (code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
  })
}

interface Fixture {
  ws: Workspace
  root: string
  outside: string
  tools: ToolDefinition[]
}

let fx: Fixture

/** The tree every call starts from (recreated after a call that changed it). */
function plant(root: string, outside: string): void {
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'dir/sub'), { recursive: true })
  writeFileSync(join(root, 'a.txt'), 'alpha\nbeta\ngamma\n')
  writeFileSync(join(root, 'dir/b.txt'), 'inside b\n')
  symlinkOrSkip('a.txt', join(root, 'link'))
  symlinkOrSkip(join(outside, 'secret.txt'), join(root, 'out-link'))
}

beforeEach(() => {
  const { root, dataDir } = tempWorkspaceDirs()
  const outside = join(root, '..', 'outside')
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n')
  plant(root, outside)
  const ws = new Workspace({
    root,
    allowedPaths: [root],
    trash: { dataDir },
    permissions: ALL,
    confirm: () => true,
  })
  fx = { ws, root, outside, tools: ws.definitions() }
})

/** Relative path → type, mode and content digest / link target (atime and mtime left out). */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (abs: string, rel: string): void => {
    const st = lstatSync(abs)
    if (st.isSymbolicLink()) out.set(rel, `link ${readlinkSync(abs)}`)
    else if (st.isFile()) {
      out.set(rel, `file ${st.mode} ${createHash('sha256').update(readFileSync(abs)).digest('hex')}`)
    } else if (st.isDirectory()) {
      out.set(rel, `dir ${st.mode}`)
      for (const name of readdirSync(abs)) walk(join(abs, name), rel === '' ? name : `${rel}/${name}`)
    } else out.set(rel, `other ${st.mode}`)
  }
  walk(dir, '')
  return out
}

function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()])
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort()
}

/** The workspace-relative spellings of the paths a call names (relative ones only). */
function namedPaths(args: unknown): string[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return []
  const out: string[] = []
  for (const key of ['path', 'source', 'destination', 'targetPath']) {
    const v = (args as Args)[key]
    if (typeof v === 'string' && !v.startsWith('/')) out.push(v.replace(/^(\.\/)+/, '').replace(/\/+$/, ''))
  }
  return out
}

/** Is `key` the named path, inside it, or one of its ancestors (created by `mkdir -p`)? */
function covered(key: string, named: string[]): boolean {
  if (key === '') return true // the root's own entry: its mode never changes, its children are checked
  return named.some((p) => key === p || key.startsWith(`${p}/`) || p.startsWith(`${key}/`))
}

const codes = new Set<string>(ERROR_CODES)

/**
 * Calls `name` with `args` and checks every invariant; returns the result. After a call that
 * changed the tree, the tree is planted again so the next call starts from the same state.
 */
async function hostile(name: string, args: unknown, label = ''): Promise<ToolResult> {
  const { ws, root, outside } = fx
  const before = tree(root)
  const outsideBefore = tree(outside)
  let result: ToolResult
  try {
    result = await ws.call(name, args)
  } catch (error) {
    throw new Error(`ws.call(${name}, ${label}) threw instead of returning a ToolResult: ${String(error)}`)
  }
  const what = `${name} ${label}: ${JSON.stringify(result).slice(0, 400)}`
  expect(['ok', 'denied', 'error'], what).toContain(result.status)
  expect(typeof result.output, what).toBe('string')
  if (result.status === 'error') expect(codes.has(result.code ?? ''), what).toBe(true)
  expect(() => ws.formatCall(name, args), `formatCall ${what}`).not.toThrow()
  expect(tree(outside), `outside changed: ${what}`).toEqual(outsideBefore)
  const after = tree(root)
  const changed = changedKeys(before, after)
  if (result.status !== 'ok') {
    expect(changed, `a failed call changed files: ${what}`).toEqual([])
  } else {
    const named = namedPaths(args)
    const stray = changed.filter((k) => !covered(k, named))
    expect(stray, `a successful call changed paths it does not name: ${what}`).toEqual([])
  }
  // Leave the workspace as every call finds it: no pushed cwd, the planted tree.
  while (ws.cwd().depth > 0) await ws.call('cwd_pop', {})
  if (changed.length > 0) plant(root, outside)
  return result
}

/** Values of every JSON kind but `type` (and a few edge values of the same kind that are out of range). */
function wrongValues(schema: Record<string, unknown>): unknown[] {
  const type = schema.type
  const values: unknown[] = []
  if (type !== 'string') values.push('a.txt', '', '\u0000')
  if (type !== 'integer' && type !== 'number') values.push(0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2)
  if (type === 'integer') values.push(1.5, -1, 0, 2 ** 64, -(2 ** 63), 1e308)
  if (type !== 'boolean') values.push(true, false)
  if (type !== 'array') values.push([], ['a.txt'], [[[]]])
  if (type !== 'object') values.push({}, { path: 'a.txt' })
  values.push(null)
  if (type === 'array') values.push([null], [1], ['x'], [{}], [{ oldString: 1, newString: 2 }])
  return values
}

/** A valid call of each tool (used as the base for changing one field at a time). */
function validArgs(name: string): Args {
  const base: Record<string, Args> = {
    read_file: { path: 'a.txt' },
    write_file: { path: 'new.txt', content: 'x' },
    append_file: { path: 'a.txt', content: 'x' },
    edit_file: { path: 'a.txt', edits: [{ oldString: 'beta', newString: 'BETA' }] },
    list_directory: { path: 'dir' },
    create_directory: { path: 'newdir' },
    delete_file: { path: 'dir/b.txt' },
    remove_dir: { path: 'dir/sub' },
    move_file: { source: 'dir/b.txt', destination: 'moved.txt' },
    copy_file: { source: 'dir/b.txt', destination: 'copied.txt' },
    restore_file: { trashedPath: 'no-such-archive.tar.gz' },
    trash_list: {},
    cwd_get: {},
    cwd_push: { path: 'dir' },
    cwd_pop: {},
    glob: { pattern: '**/*.txt' },
    grep: { pattern: 'beta' },
  }
  return structuredClone(base[name] ?? {})
}

function properties(def: ToolDefinition): Record<string, Record<string, unknown>> {
  return (def.inputSchema as { properties: Record<string, Record<string, unknown>> }).properties
}

function required(def: ToolDefinition): string[] {
  return (def.inputSchema as { required?: string[] }).required ?? []
}

/** Nested arrays `depth` deep. */
function nested(depth: number): unknown {
  let v: unknown = 'a.txt'
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

function nestedObject(depth: number): unknown {
  let v: unknown = 'a.txt'
  for (let i = 0; i < depth; i++) v = { path: v }
  return v
}

describe('hostile input', () => {
  it('the definitions cover every tool this test knows a valid call for', () => {
    for (const def of fx.tools) expect(Object.keys(validArgs(def.name)).length + 1, def.name).toBeGreaterThan(0)
    expect(fx.tools.map((d) => d.name)).toContain('write_file')
  })

  it('arguments that are not an object', async () => {
    for (const def of fx.tools) {
      for (const args of [undefined, null, 42, 'a.txt', [], ['a.txt'], true, 0, -0, '']) {
        const r = await hostile(def.name, args, JSON.stringify(args) ?? 'undefined')
        // `undefined` means "no arguments", which is `{}`: valid for tools without required fields.
        if (args !== undefined) {
          expect(r.code, `${def.name} ${JSON.stringify(args)}`).toBe('INVALID_ARGUMENTS')
        }
      }
    }
  })

  it('a wrong type in every field, naming the field', async () => {
    for (const def of fx.tools) {
      for (const [field, schema] of Object.entries(properties(def))) {
        for (const value of wrongValues(schema)) {
          const args = { ...validArgs(def.name), [field]: value }
          const label = `${field}=${JSON.stringify(value)}`
          const r = await hostile(def.name, args, label)
          const schemaAccepts =
            (schema.type === 'integer' &&
              Number.isInteger(value) &&
              (value as number) >= ((schema.minimum as number | undefined) ?? -Infinity) &&
              (value as number) <= ((schema.maximum as number | undefined) ?? Infinity)) ||
            (schema.type === 'string' && typeof value === 'string' && value.length >= ((schema.minLength as number) ?? 0)) ||
            // null for an optional argument means "not given" (../docs/hosts.md#the-workspace-api).
            (value === null && !required(def).includes(field))
          if (schemaAccepts) continue
          expect(r.status, `${def.name} ${label}: ${r.output}`).toBe('error')
          expect(r.code, `${def.name} ${label}: ${r.output}`).toBe('INVALID_ARGUMENTS')
          expect(r.output, `${def.name} ${label}`).toContain(field)
        }
      }
    }
  })

  it('missing required fields, each one in turn, naming it', async () => {
    for (const def of fx.tools) {
      for (const field of required(def)) {
        const args = validArgs(def.name)
        delete args[field]
        const r = await hostile(def.name, args, `without ${field}`)
        expect(r.code, `${def.name} without ${field}: ${r.output}`).toBe('INVALID_ARGUMENTS')
        expect(r.output).toContain(field)
      }
      if (required(def).length > 0) {
        const r = await hostile(def.name, {}, '{}')
        expect(r.code, `${def.name} {}`).toBe('INVALID_ARGUMENTS')
      }
    }
  })

  it('extra fields, including prototype-looking keys', async () => {
    for (const def of fx.tools) {
      const extras: Args[] = [
        { extra: 1 },
        { PATH: 'a.txt' },
        JSON.parse('{"__proto__": {"path": "dir/b.txt"}}') as Args,
        { constructor: 'x' },
        { '': '' },
        { 'path\u0000': 'x' },
      ]
      for (const extra of extras) {
        const key = Object.keys(extra)[0]!
        const r = await hostile(def.name, { ...validArgs(def.name), ...extra }, `+${JSON.stringify(key)}`)
        expect(r.code, `${def.name} +${key}: ${r.output}`).toBe('INVALID_ARGUMENTS')
        expect(r.output).toContain(key.replace('\u0000', ''))
      }
    }
  })

  it('huge strings (5 MB) in every string field', { timeout: scaled(120_000) }, async () => {
    const huge = 'x'.repeat(5 * 1024 * 1024)
    const hugeLine = `${'ab\n'.repeat(1_700_000)}`
    for (const def of fx.tools) {
      for (const [field, schema] of Object.entries(properties(def))) {
        if (schema.type !== 'string') continue
        for (const value of [huge, hugeLine]) {
          const r = await hostile(def.name, { ...validArgs(def.name), [field]: value }, `${field}=<${value.length} chars>`)
          expect(r.output.length, `${def.name} ${field}: the output echoes a huge argument`).toBeLessThan(1_100_000)
        }
      }
    }
    // Inside `edits`: a huge oldString (no match) and a huge newString (over nothing).
    const r1 = await hostile('edit_file', { path: 'a.txt', edits: [{ oldString: huge, newString: 'x' }] }, 'huge oldString')
    expect(r1.code).toBe('NO_MATCH')
    expect(r1.output.length).toBeLessThan(1_100_000)
    const r2 = await hostile('edit_file', { path: 'a.txt', edits: [{ oldString: 'beta', newString: huge }] }, 'huge newString')
    expect(['ok', 'error']).toContain(r2.status)
    // Many edits, and many tiny path components.
    const many = Array.from({ length: 20_000 }, (_, i) => ({ oldString: `nope${i}`, newString: 'x' }))
    expect((await hostile('edit_file', { path: 'a.txt', edits: many }, '20k edits')).code).toBe('NO_MATCH')
    const deepPath = 'd/'.repeat(3000) + 'f.txt'
    for (const name of ['write_file', 'create_directory', 'read_file', 'append_file']) {
      const r = await hostile(name, { ...validArgs(name), path: deepPath }, 'a 9 KB path of 3000 components')
      expect(r.status, `${name}: ${r.output.slice(0, 200)}`).toBe('error')
    }
    const longName = 'n'.repeat(300)
    for (const name of ['write_file', 'create_directory', 'append_file']) {
      const r = await hostile(name, { ...validArgs(name), path: `fresh/${longName}` }, 'a 300-byte file name')
      expect(r.status, `${name}: ${r.output.slice(0, 200)}`).toBe('error')
    }
  })

  it('deep nesting, in fields and as the whole arguments', { timeout: scaled(60_000) }, async () => {
    for (const def of fx.tools) {
      for (const depth of [200, 5_000, 100_000]) {
        const field = Object.keys(properties(def))[0] ?? 'extra'
        for (const value of [nested(depth), nestedObject(depth)]) {
          const r = await hostile(def.name, { ...validArgs(def.name), [field]: value }, `${field} nested ${depth}`)
          expect(r.code, `${def.name} ${field} nested ${depth}: ${r.output.slice(0, 200)}`).toBe('INVALID_ARGUMENTS')
        }
      }
      const r = await hostile(def.name, nestedObject(100_000), 'arguments nested 100000')
      expect(r.code).toBe('INVALID_ARGUMENTS')
    }
  })

  it('NUL bytes in paths are INVALID_ARGUMENTS; in content they are just bytes', async () => {
    // A real archive, so that restore_file gets as far as its targetPath.
    const trashed = await fx.ws.call('delete_file', { path: 'dir/b.txt' })
    expect(trashed.status).toBe('ok')
    plant(fx.root, fx.outside)
    const base = (name: string): Args =>
      name === 'restore_file' ? { trashedPath: trashed.data?.trashedTo } : validArgs(name)
    for (const def of fx.tools) {
      for (const [field, schema] of Object.entries(properties(def))) {
        if (schema.type !== 'string' || !['path', 'source', 'destination', 'targetPath', 'trashedPath'].includes(field)) continue
        for (const value of ['a\u0000b', '\u0000', 'a.txt\u0000', 'dir/\u0000/b.txt', '\u0000/../etc/passwd']) {
          const r = await hostile(def.name, { ...base(def.name), [field]: value }, `${field}=${JSON.stringify(value)}`)
          expect(r.code, `${def.name} ${field}=${JSON.stringify(value)}: ${r.output}`).toBe('INVALID_ARGUMENTS')
          expect(r.output).toContain(field)
        }
      }
    }
    const w = await hostile('write_file', { path: 'zero-byte.bin', content: 'a\u0000b' }, 'NUL content')
    expect(w.status).toBe('ok')
    const a = await hostile('append_file', { path: 'a.txt', content: '\u0000\u0000' }, 'NUL append')
    expect(a.status).toBe('ok')
    const e = await hostile('edit_file', { path: 'a.txt', edits: [{ oldString: 'beta', newString: 'b\u0000' }] }, 'NUL newString')
    expect(['ok', 'error']).toContain(e.status)
  })

  it('odd Unicode in paths is taken literally, never normalised; in content it round-trips', async () => {
    const odd = [
      '\u202Eevil.txt', // right-to-left override
      '\u200F\u200Ertl.txt', // RTL/LTR marks
      'e\u0301.txt', // combining acute (NFD é)
      '\u00E9.txt', // precomposed é (NFC), a different name
      '\uFEFFbom.txt', // BOM / zero-width no-break space
      'zero\u200Bwidth.txt',
      ' spaced .txt ',
      '\u2024\u2024\u2215x.txt', // one-dot leaders and a division slash: not `..` or `/`
      '\uFF0E\uFF0E', // fullwidth dots
      '\u0301', // a lone combining mark
      '\u{1F4A9}.txt',
      'a\u000Ab.txt', // newline
      'tab\t.txt',
    ]
    for (const name of odd) {
      const content = `${name}\n\u202E\u0301\uFEFF\r\n`
      const w = await hostileKeep('write_file', { path: name, content })
      expect(w.status, `${JSON.stringify(name)}: ${w.output}`).toBe('ok')
      expect(readdirSync(fx.root), JSON.stringify(name)).toContain(name)
      expect(readFileSync(join(fx.root, name), 'utf8')).toBe(content)
      const r = await hostileKeep('read_file', { path: name })
      expect(r.status).toBe('ok')
      // Named in its shown form: control and bidi characters escaped (none has a backslash).
      expect(r.data?.path, JSON.stringify(name)).toBe(join(fx.root, shownName(name)))
      const e = await hostileKeep('edit_file', { path: name, edits: [{ oldString: '\u202E\u0301', newString: '\u0301\u202E' }] })
      expect(e.status, e.output).toBe('ok')
      const del = await hostileKeep('delete_file', { path: name })
      expect(del.status, del.output).toBe('ok')
      expect(readdirSync(fx.root)).not.toContain(name)
      // The other normalisation form names a different (missing) file.
      const other = name.normalize('NFC') === name ? name.normalize('NFD') : name.normalize('NFC')
      if (other !== name) expect((await hostile('read_file', { path: other }, 'other form')).code).toBe('NOT_FOUND')
      plant(fx.root, fx.outside)
    }
    // Lone surrogates cannot be UTF-8: refused before reaching the core, naming the field.
    for (const def of fx.tools) {
      const field = Object.keys(properties(def))[0]
      if (!field) continue
      const r = await hostile(def.name, { ...validArgs(def.name), [field]: 'a\uD800b' }, 'lone surrogate')
      expect(r.code).toBe('INVALID_ARGUMENTS')
      expect(r.output).toContain(field)
    }
  })

  it('numbers at and beyond the edges', async () => {
    for (const [startLine, endLine] of [
      [0, 1],
      [1, 0],
      [-1, 3],
      [3, 1],
      [2 ** 53, 2 ** 53 + 2],
      [1, 2 ** 64],
      [1.0000001, 2],
    ] as const) {
      const r = await hostile('read_file', { path: 'a.txt', startLine, endLine }, `${startLine}..${endLine}`)
      expect(r.status, `${startLine}..${endLine}: ${r.output}`).toBe('error')
    }
    for (const v of [Infinity, -Infinity, NaN, 10n]) {
      const r = await hostile('read_file', { path: 'a.txt', startLine: v }, String(v))
      expect(r.code).toBe('INVALID_ARGUMENTS')
      expect(r.output).toContain('startLine')
    }
  })

  it('odd argument values of JS that JSON cannot carry', async () => {
    const cyclic: Args = { path: 'a.txt' }
    cyclic.self = cyclic
    // (A Date is JSON: its toJSON() string, a path like any other.)
    for (const args of [cyclic, { path: () => 'a.txt' }, { path: Symbol('a') }, { path: new Map() }, { path: Buffer.from('a.txt') }]) {
      const r = await hostile('read_file', args, Object.prototype.toString.call(args.path))
      expect(r.status).toBe('error')
      expect(r.code).toBe('INVALID_ARGUMENTS')
    }
  })

  it('unknown, empty and odd tool names', async () => {
    for (const name of ['', 'nope', 'READ_FILE', 'read_file\u0000', 'read_file ', '__proto__', 'constructor', 'x'.repeat(100_000)]) {
      const r = await hostile(name, { path: 'a.txt' }, 'odd name')
      expect(r.code, JSON.stringify(name.slice(0, 40))).toBe('UNKNOWN_TOOL')
    }
    for (const name of [42, null, undefined, {}, ['read_file']] as unknown as string[]) {
      const r = await hostile(name, { path: 'a.txt' }, `name ${String(name)}`)
      expect(r.status).toBe('error')
    }
  })
})

/** `hostile` without re-planting: for a sequence of calls on one new entry. */
async function hostileKeep(name: string, args: Args): Promise<ToolResult> {
  const { ws, outside } = fx
  const outsideBefore = tree(outside)
  let result: ToolResult
  try {
    result = await ws.call(name, args)
  } catch (error) {
    throw new Error(`ws.call(${name}) threw instead of returning a ToolResult: ${String(error)}`)
  }
  expect(tree(outside)).toEqual(outsideBefore)
  return result
}
