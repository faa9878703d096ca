/**
 * Symbolic links for the tests' fixtures, made where the system can make them and a skip
 * (saying why) where it cannot: a Windows without the privilege (no Developer Mode) refuses
 * them, and Wine 8's `symlinkSync` reports success and makes none, so a test whose setup needs
 * a link would test something else (a write "through the link" creating a plain file).
 * Anywhere but Windows a link not made is an error of the machine and fails the test: on
 * Linux and macOS no test is ever skipped for it.
 */
import { lstatSync, symlinkSync } from 'node:fs'
import { skipTest } from './skip.js'

/**
 * `symlinkSync(target, path, type)`, then checked by `lstat`; where the system made no link
 * (see above) the current test is skipped (from its body or a `beforeEach`).
 */
export function symlinkOrSkip(target: string, path: string, type?: 'dir' | 'file' | 'junction'): void {
  const missing = linkNotMade(target, path, type)
  if (missing !== undefined) skipTest(whyNoLink(path, missing, process.platform))
}

/** Makes the link; `undefined` once it is there, else what went wrong. */
function linkNotMade(target: string, path: string, type?: 'dir' | 'file' | 'junction'): Error | string | undefined {
  try {
    symlinkSync(target, path, type)
  } catch (error) {
    return error as Error
  }
  if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) return undefined
  return 'symlinkSync reported success and made none'
}

/**
 * Why no link was made at `path`, as the note of the skip on Windows; anywhere else it throws
 * (the error itself, or one saying no link is there).
 */
export function whyNoLink(path: string, missing: Error | string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') {
    if (missing instanceof Error) throw missing
    throw new Error(`no symbolic link at ${path}: ${missing}`)
  }
  const reason = missing instanceof Error ? missing.message : missing
  return `this system cannot make a symbolic link (${reason})`
}
