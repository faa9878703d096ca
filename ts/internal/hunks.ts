/**
 * Unified-diff helpers for hosts that render hunks only.
 *
 * @internal
 */

/**
 * The diff from its first `@@` hunk header on, without the `---`/`+++` file header and without
 * trailing newlines; `undefined` when the diff has no hunk (e.g. nothing changed).
 */
export function hunksOnly(diff: string): string | undefined {
  const start = diff.startsWith('@@') ? 0 : diff.indexOf('\n@@') + 1
  if (start === 0 && !diff.startsWith('@@')) return undefined
  return diff.slice(start).replace(/\n+$/, '')
}
