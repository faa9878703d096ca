import { describe, expect, it } from 'vitest'
import { argumentsToNative, JsonValueError, resultFromNative, toJson } from '../ts/internal/json.js'

describe('toJson', () => {
  it('serialises plain JSON like JSON.stringify', () => {
    const value = { a: 1, b: [true, null, 'x', { c: 2.5 }], d: undefined }
    expect(toJson(value)).toBe(JSON.stringify(value))
    expect(toJson(undefined)).toBe('null')
  })

  it('honours toJSON (dates become strings)', () => {
    expect(toJson({ when: new Date(0) })).toBe('{"when":"1970-01-01T00:00:00.000Z"}')
  })

  it('names the path of a BigInt, a function and a symbol', () => {
    expect(() => toJson({ limits: { readMaxBytes: 1n } })).toThrow('limits.readMaxBytes: must be a JSON value, got a bigint')
    expect(() => toJson({ edits: [{ oldString: 'a' }, { newString: () => 1 }] })).toThrow(
      'edits[1].newString: must be a JSON value, got a function',
    )
    expect(() => toJson({ s: Symbol('x') })).toThrow('s: must be a JSON value, got a symbol')
    expect(() => toJson(1n)).toThrow(JsonValueError)
  })

  it('rejects non-finite numbers instead of turning them into null', () => {
    expect(() => toJson({ startLine: Number.NaN })).toThrow('startLine: must be a finite number, got NaN')
    expect(() => toJson([Infinity])).toThrow('[0]: must be a finite number, got Infinity')
  })

  it('names the path of a cycle but accepts shared (acyclic) references', () => {
    const shared = { x: 1 }
    expect(toJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}')
    const cyclic: Record<string, unknown> = { a: { b: {} } }
    ;(cyclic.a as { b: Record<string, unknown> }).b.back = cyclic
    expect(() => toJson(cyclic)).toThrow('a.b.back: must not contain a cycle')
  })
})

describe('argumentsToNative', () => {
  const long = 'a "quoted" \\ line\r\n\ttab é 😀 \u0000 end\n'.repeat(1024)

  it('passes long top-level strings as themselves, the rest as JSON', () => {
    const args = { path: 'a.txt', content: long, startLine: 3, nested: { text: long } }
    const { json, strings } = argumentsToNative(args)
    expect(strings).toEqual({ content: long })
    expect(JSON.parse(json)).toEqual({ path: 'a.txt', startLine: 3, nested: { text: long } })
    expect({ ...JSON.parse(json), ...strings }).toEqual(args)
  })

  it('sends short strings, arrays, toJSON objects and non-objects whole as JSON', () => {
    for (const args of [{ path: 'a', content: 'short' }, [long], 'text', null, { toJSON: () => ({ content: long }) }]) {
      expect(argumentsToNative(args)).toEqual({ json: toJson(args), strings: null })
    }
  })

  it('refuses a long string with a lone surrogate, naming it, as toJson does', () => {
    expect(() => argumentsToNative({ content: long + '\uD800' })).toThrow(
      new JsonValueError('content', 'must be valid Unicode text, but contains a lone UTF-16 surrogate'),
    )
    expect(() => argumentsToNative({ content: long, other: 1n })).toThrow('other: must be a JSON value, got a bigint')
  })
})

describe('resultFromNative', () => {
  it('parses a result whose diff came inside its JSON as it is', () => {
    const json = JSON.stringify({ status: 'ok', output: 'o', diff: 'd', data: { n: 1 } })
    expect(resultFromNative({ json })).toEqual({ status: 'ok', output: 'o', diff: 'd', data: { n: 1 } })
    expect(resultFromNative({ json, diff: null })).toEqual({ status: 'ok', output: 'o', diff: 'd', data: { n: 1 } })
  })

  it('puts a diff passed beside back in the place of its key, byte for byte', () => {
    const diff = '--- a\n+++ b\n@@ -1 +1 @@\n-"q" \\ \t\r\u0000 🙂 \u2028\n+x\n'
    const result = resultFromNative<{ status: string; diff?: string }>({
      json: JSON.stringify({ status: 'ok', output: 'o', diff: '', data: {} }),
      diff,
    })
    expect(result.diff).toBe(diff)
    expect(Object.keys(result)).toEqual(['status', 'output', 'diff', 'data'])
  })
})
