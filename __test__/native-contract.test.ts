/**
 * The contract between the Rust core and the JS layer (`ts/native.ts`): the generated loader
 * exports `NativeWorkspace` with every method the JS layer calls.
 */
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const loader = createRequire(resolve(__dirname, '..', 'package.json'))('./index.js') as {
  NativeWorkspace?: { prototype: Record<string, unknown> }
}

const METHODS = ['definitions', 'call', 'abort', 'formatCall', 'cwd', 'trashList', 'trashClear'] as const

describe('NativeWorkspace', () => {
  it('is exported by the loader', () => {
    expect(typeof loader.NativeWorkspace).toBe('function')
  })

  it.each(METHODS)('has %s()', (method) => {
    expect(typeof loader.NativeWorkspace?.prototype[method]).toBe('function')
  })

  it('rejects a bad option with an InvalidArg error naming it', () => {
    const NativeWorkspace = loader.NativeWorkspace as unknown as new (json: string) => unknown
    let caught: unknown
    try {
      new NativeWorkspace('{}')
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(Error)
    expect((caught as { code?: unknown }).code).toBe('InvalidArg')
    expect((caught as Error).message).toMatch(/^root/)
  })
})
