/**
 * Skipping a test where the system cannot have what it tests, saying why: only on Windows (no
 * FIFOs, Unix sockets or device files in a directory, names it refuses or folds by design, and
 * under Wine no symbolic links and no `tar`). Elsewhere nothing here skips: a Linux or macOS
 * machine that cannot make a FIFO fails the test.
 */
import { TestRunner } from 'vitest'

/** Why a test of names Windows cannot hold as they are is skipped there. */
export const NAMES_WINDOWS_REFUSES =
  'Windows cannot hold these names as they are: it refuses control characters, `"` and `\\` in a name and bytes that are not UTF-16, drops a trailing space or dot and folds case (docs/windows.md, "Names")'

/** Why a test that takes access away with `chmod` is skipped on Windows. */
export const NO_UNIX_MODES =
  "chmod cannot take access away on Windows (it sets a file's read-only bit; access is an access list there)"

/** Why a test of a Unix socket in a directory is skipped on Windows. */
export const NO_UNIX_SOCKETS = 'Node listens on a named pipe on Windows, not on a Unix socket in a directory'

/** Why a test that limits a child with `ulimit` or `prlimit` (file size, descriptors) is skipped on Windows. */
export const NO_UNIX_RESOURCE_LIMITS =
  'Windows has no per-process file size or descriptor limit to set (`ulimit`, `prlimit` are Unix resource limits)'

/** Skips the current test (called from its body or a `beforeEach`), with `why` as its note. */
export function skipTest(why: string): never {
  const test = TestRunner.getCurrentTest()
  if (test === undefined) throw new Error(`${why}, outside a test (a beforeAll?): nothing to skip`)
  return test.context.skip(why)
}

/** On Windows, skips the current test with `why`; elsewhere does nothing. */
export function skipOnWindows(why: string): void {
  if (process.platform === 'win32') skipTest(why)
}
