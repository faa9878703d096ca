/**
 * The only module that touches the addon loader (`index.js` at the package root, written for this
 * package: it honours `NAPI_RS_NATIVE_LIBRARY_PATH`, then finds the binary beside it or in the
 * per-platform package). The specifier is relative to `ts/`; the build rewrites it for `dist/esm/`
 * and `dist/cjs/` (see `scripts/build-ts.mjs`). The loader is CommonJS and declares its exports as
 * `module.exports.X = …`, so it can be imported from ESM as well as from CJS.
 *
 * @internal
 */
import { NativeWorkspace as LoadedNativeWorkspace } from '../index.js'

/**
 * The native class as this layer uses it: the contract between the Rust core and the JS layer.
 * The compiler checks that the class the loader declares (`index.d.ts`, generated from the Rust
 * signatures) satisfies it: {@link NativeWorkspace} is assigned without a cast.
 */
export interface NativeWorkspaceContract {
  /** JSON of `ToolDefinition[]` (enabled tools, host names). Static per workspace. */
  definitions(): string
  /**
   * Runs one call; resolves to a `ToolResult` (`resultFromNative`) and never rejects for tool
   * failures.
   * `argsStrings`: top-level string arguments passed as themselves beside `argsJson`
   * (`argumentsToNative`). `confirm` must never reject; Rust applies `confirmTimeoutMs`. `answering`: the ids of the
   * calls whose confirm handlers made this call, outermost first (a change of a path such a call
   * holds is refused rather than left waiting for its own answer). `progress` is called with the
   * JSON of a `ToolProgress` update, queued from native threads (never awaited).
   */
  call(
    callId: number,
    name: string,
    argsJson: string,
    argsStrings: Record<string, string> | null,
    permissionsJson: string | null,
    confirm: ((requestJson: string) => Promise<boolean>) | null,
    answering: number[] | null,
    progress: ((updateJson: string) => void) | null,
  ): Promise<NativeResult>
  /**
   * What call `callId` would do about asking, without doing it: the JSON of a `CallCheck`. Never
   * rejects for tool failures (a call that would fail is `{ decision: "fail", result }`).
   */
  check(callId: number, name: string, argsJson: string, permissionsJson: string | null): Promise<string>
  /** Marks call `callId` aborted; safe before, during or after the call. */
  abort(callId: number): void
  /** One-line header of a call. */
  formatCall(name: string, argsJson: string): string
  /** JSON `{ cwd, projectRoot, depth }`. */
  cwd(): string
  /** JSON `TrashEntry[]`. */
  trashList(): Promise<string>
  /** JSON `{ cleared, bytesFreed }`. */
  trashClear(olderThanMs: number | null): Promise<string>
  /** JSON `Change[]`, newest first. */
  history(limit?: number | undefined | null, sessionId?: string | undefined | null): Promise<string>
  /** A `ToolResult` (`resultFromNative`); `requestJson` is `{ id?, sessionId?, dryRun? }`. */
  undo(
    callId: number,
    requestJson: string,
    confirm: ((requestJson: string) => Promise<boolean>) | null,
    progress: ((updateJson: string) => void) | null,
  ): Promise<NativeResult>
}

/**
 * A tool's result from the core: its JSON, and a long `diff` passed as itself beside it (the
 * JSON then holds the key `diff`, empty, where it goes back).
 */
export interface NativeResult {
  json: string
  diff?: string | null
}

/** Constructor of the native class; throws an `InvalidArg` error naming a bad option. */
export interface NativeWorkspaceConstructor {
  new (optionsJson: string): NativeWorkspaceContract
  /**
   * Checks options as the constructor does, without making a workspace (so no crash recovery
   * starts); throws an `InvalidArg` error naming a bad option.
   */
  checkOptions(optionsJson: string): void
}

/** The native class from the loader, checked against the contract by the compiler. */
export const NativeWorkspace: NativeWorkspaceConstructor = LoadedNativeWorkspace
