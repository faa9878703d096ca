/**
 * Key helpers shared by the list screens.
 */
import type { Key } from 'ink'

/**
 * How far ↑/↓ or vi-style `k`/`j` move a list selection: -1, +1, or a count when several `j`/`k`
 * arrive in one input chunk (a held key on a busy event loop), 0 for any other key.
 */
export function listMove(input: string, key: Key): number {
  if (key.upArrow) return -1
  if (key.downArrow) return 1
  if (/^[jk]+$/.test(input)) return [...input].reduce((sum, ch) => sum + (ch === 'j' ? 1 : -1), 0)
  return 0
}
