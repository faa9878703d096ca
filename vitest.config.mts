import { configDefaults, defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { scaled } from './__test__/helpers/time.js'

/**
 * Test files that take minutes, longest first. On a clean clone (CI) vitest knows no durations
 * and starts the largest files first; `crash-undo.test.ts` is small but takes about as long as
 * `crash.test.ts`, and started last it ran alone, one core idle, for minutes.
 */
const LONGEST_FIRST = ['crash-undo.test.ts', 'crash.test.ts']

/** vitest's own order, with the files of `LONGEST_FIRST` moved to the front in that order. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST_FIRST.findIndex((name) => spec.moduleId.endsWith(`/${name}`))
      return at < 0 ? LONGEST_FIRST.length : at
    }
    const sorted = await super.sort(files)
    return sorted
      .map((spec, order) => ({ spec, order }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.order - b.order)
      .map(({ spec }) => spec)
  }
}

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
    sequence: { sequencer: LongestFirst },
    // Longer where the suite runs slower (emulated arm64, Wine): `AGENT_FS_TOOLS_TEST_TIME_SCALE`.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(30_000),
  },
})
