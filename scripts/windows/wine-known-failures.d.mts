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
/** A Rust test of the library (`--cargo-tests`) that fails under Wine for Wine's reason. */
export interface KnownWineCargoFailure {
  /** The test's path below the crate (`undo::tests::…`), as the harness prints it. */
  test: string
  why: string
}
export declare const WINE_KNOWN_CARGO_FAILURES: KnownWineCargoFailure[]
export declare function knownWineCargoFailure(test: string): KnownWineCargoFailure | undefined
