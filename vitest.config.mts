import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Vitest runs the TS tests in `__test__/` against the built package (`npm run build` first). The
 * tests inside real hosts (`__test__/hosts/`) have a configuration of their own
 * (`vitest.hosts.config.mts`) and a stage of their own in `scripts/run-tests.mjs`.
 */
export default defineConfig({
  test: {
    include: ['__test__/**/*.test.{ts,tsx}'],
    exclude: [...configDefaults.exclude, '__test__/hosts/**'],
    environment: 'node',
    // The machine has two cores shared with cargo: keep the worker pool small.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
