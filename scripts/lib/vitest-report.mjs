/**
 * Reading vitest's JSON report: what `scripts/run-tests.mjs` and `scripts/test-runtimes.mjs`
 * count beyond `numFailedTests`.
 */

/**
 * The test files of `report` that failed with no failed test: one that did not load, or whose
 * hook failed so that its tests were skipped. Each counts as one failure.
 */
export function filesFailedOutsideTests(report) {
  return report.testResults.filter((file) => file.status === 'failed' && !file.assertionResults.some((test) => test.status === 'failed')).length
}
