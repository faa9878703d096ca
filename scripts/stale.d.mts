/** Types of `stale.mjs` (for the tests, which are type-checked). */
export declare function hostPlatform(): string
export declare function staleParts(root: string, platform?: string): { native: string | undefined; js: string | undefined }
