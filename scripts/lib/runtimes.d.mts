/** Types of `runtimes.mjs` (for the tests, which are type-checked). */
export interface RuntimeTarget {
  platform?: string
  arch?: string
}
export interface Runtime {
  versions: string[]
  registry: 'npm' | 'pypi'
  package(target: Required<RuntimeTarget>): string
  file(target: Required<RuntimeTarget>): string
  about: string
}
export declare const RUNTIMES: Record<'node' | 'bun' | 'deno' | 'opencode' | 'actionlint', Runtime>
export declare function cacheDir(): string
export declare function pinnedVersion(name: string, version?: string): string
export declare function cachedRuntimePath(name: string, version?: string, target?: RuntimeTarget): string | undefined
export declare function runtimePath(name: string, version?: string, target?: RuntimeTarget): Promise<string>
export declare function runtimeAvailable(name: string, target?: RuntimeTarget): boolean
export declare function npmPackageDir(name: string, version: string): Promise<string>
