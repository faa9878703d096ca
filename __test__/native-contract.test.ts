/**
 * The contract between the Rust core and the JS layer (`ts/native.ts`): the generated loader
 * exports `NativeWorkspace` with exactly the methods listed here — every one the JS layer calls,
 * and no other. The lists are written out by hand and compared with what the built addon really
 * has (its prototype and its static side), so a method added to or removed from the Rust
 * bindings fails this test until the list (and `ts/native.ts`) follow.
 */
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { NativeWorkspaceConstructor, NativeWorkspaceContract } from '../ts/native.js'

const loader = createRequire(resolve(__dirname, '..', 'package.json'))('./index.js') as {
  NativeWorkspace?: { prototype: Record<string, unknown> } & Record<string, unknown>
}

/** The instance methods of `NativeWorkspace`, as the JS layer's contract names them. */
const METHODS = [
  'abort',
  'call',
  'check',
  'cwd',
  'definitions',
  'formatCall',
  'history',
  'trashClear',
  'trashList',
  'undo',
] as const satisfies readonly (keyof NativeWorkspaceContract)[]

/** The static methods of `NativeWorkspace`. */
const STATICS = ['checkOptions'] as const satisfies readonly Exclude<keyof NativeWorkspaceConstructor, 'prototype'>[]

/** Own function-valued properties of `object`, sorted, leaving out what every class has. */
function functionsOf(object: object, inherent: readonly string[]): string[] {
  return Object.getOwnPropertyNames(object)
    .filter((name) => !inherent.includes(name))
    .filter((name) => typeof Object.getOwnPropertyDescriptor(object, name)?.value === 'function')
    .sort()
}

describe('NativeWorkspace', () => {
  it('is exported by the loader', () => {
    expect(typeof loader.NativeWorkspace).toBe('function')
  })

  it('the lists name every method of the JS contract (ts/native.ts)', () => {
    expectTypeOf<Exclude<keyof NativeWorkspaceContract, (typeof METHODS)[number]>>().toEqualTypeOf<never>()
    expectTypeOf<Exclude<keyof NativeWorkspaceConstructor, 'prototype' | (typeof STATICS)[number]>>().toEqualTypeOf<never>()
  })

  it('has exactly the listed instance methods', () => {
    expect(functionsOf(loader.NativeWorkspace!.prototype, ['constructor'])).toEqual([...METHODS].sort())
  })

  it('has exactly the listed static methods', () => {
    expect(functionsOf(loader.NativeWorkspace!, ['length', 'name', 'prototype'])).toEqual([...STATICS].sort())
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
