import { defineConfig } from 'vitest/config'

/** Vitest runs the TS tests in `__test__/` against the built package (`npm run build` first). */
export default defineConfig({
  test: {
    include: ['__test__/**/*.test.{ts,tsx}'],
    environment: 'node',
    // The machine has two cores shared with cargo: keep the worker pool small.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
