/**
 * The list of failures `npm run test:windows` counts as Wine's, not the port's
 * (scripts/windows/wine-known-failures.mjs): each entry names a test that exists, so the list
 * cannot go on excusing a failure of a test renamed since, and it excuses only what it names.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { knownWineCargoFailure, knownWineFailure, WINE_KNOWN_CARGO_FAILURES, WINE_KNOWN_FAILURES } from '../scripts/windows/wine-known-failures.mjs'

const tests = join(__dirname)

/** The source of the test file `file` (`__test__/<file>.test.ts` or `.tsx`). */
function source(file: string): string {
  const path = [join(tests, `${file}.test.ts`), join(tests, `${file}.test.tsx`)].find((p) => existsSync(p))
  if (path === undefined) throw new Error(`__test__/${file}.test.ts is not there`)
  return readFileSync(path, 'utf8')
}

describe('failures known under Wine', () => {
  it('each names a test file that exists and, where it names a test, words of its title', () => {
    for (const known of WINE_KNOWN_FAILURES) {
      const text = source(known.file)
      if (known.test !== undefined) expect(text, `${known.file}: ${known.test}`).toContain(known.test)
      expect(known.why.length, known.file).toBeGreaterThan(20)
    }
  })

  it('excuses the test it names in its own file only, and a whole file only for a failure outside its tests', () => {
    expect(knownWineFailure('undo-property', 'undo regressions found by the property: … (seed 198975)')?.why).toContain('Wine')
    expect(knownWineFailure('undo', 'undo regressions (seed 198975)')).toBeUndefined()
    expect(knownWineFailure('undo-property', 'undo regressions (seed 198976)')).toBeUndefined()
    expect(knownWineFailure('docs', undefined)?.why).toContain('git')
    expect(knownWineFailure('docs', 'every link in the docs resolves')).toBeUndefined()
    expect(knownWineFailure('undo-property', undefined)).toBeUndefined()
  })

  it('lists Rust tests by their whole path, each a test function of the crate, once', () => {
    const sources = readdirSync(join(tests, '..', 'src'), { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.rs'))
      .map((path) => readFileSync(join(tests, '..', 'src', path), 'utf8'))
      .join('\n')
    const names = WINE_KNOWN_CARGO_FAILURES.map(({ test }) => test)
    expect(new Set(names).size).toBe(names.length)
    for (const { test, why } of WINE_KNOWN_CARGO_FAILURES) {
      expect(test).toMatch(/^[a-z_]+(::[a-z_0-9]+)+$/)
      expect(sources, test).toContain(`fn ${test.split('::').at(-1)}()`)
      expect(why.length, test).toBeGreaterThan(20)
    }
    const first = names.at(0) ?? ''
    expect(first).not.toBe('')
    expect(knownWineCargoFailure(first)?.test).toBe(first)
    expect(knownWineCargoFailure(first.split('::').slice(1).join('::'))).toBeUndefined()
  })
})
