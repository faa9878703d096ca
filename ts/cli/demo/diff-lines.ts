/**
 * Classifies the lines of a unified diff for colouring.
 */

/** What a diff line is. */
export type DiffLineKind = 'header' | 'hunk' | 'add' | 'remove' | 'context'

/** The kind of one line of a unified diff (`---`/`+++` are file headers, not removals/additions). */
export function diffLineKind(line: string): DiffLineKind {
  if (line.startsWith('--- ') || line.startsWith('+++ ')) return 'header'
  if (line.startsWith('@@')) return 'hunk'
  if (line.startsWith('+')) return 'add'
  if (line.startsWith('-')) return 'remove'
  return 'context'
}

/** Ink colour of each kind (`undefined`: the terminal's default). */
export const DIFF_COLORS: Readonly<Record<DiffLineKind, string | undefined>> = {
  header: 'gray',
  hunk: 'cyan',
  add: 'green',
  remove: 'red',
  context: undefined,
}
