/** Types of `wine-known-failures.mjs` (for the tests, which are type-checked). */
export interface KnownWineFailure {
  /** The test file's name without `.test.ts(x)`. */
  file: string
  /** A part of the test's full name; absent: the file failed outside its tests. */
  test?: string
  why: string
}
export declare const WINE_KNOWN_FAILURES: KnownWineFailure[]
export declare function knownWineFailure(file: string, test: string | undefined): KnownWineFailure | undefined
