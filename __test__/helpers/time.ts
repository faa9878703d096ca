/**
 * How much longer than usual the suite may take to run here: `AGENT_FS_TOOLS_TEST_TIME_SCALE`
 * (`npm run test:arm64` sets it, since emulation is 5–10× slower), else 1. Only limits that
 * stop a hung run scale with it; no test asserts a duration.
 */
export const TIME_SCALE = Math.max(1, Number(process.env.AGENT_FS_TOOLS_TEST_TIME_SCALE) || 1)

/** `ms` scaled for this machine: a limit on how long something may take before it counts as hung. */
export const scaled = (ms: number): number => ms * TIME_SCALE
