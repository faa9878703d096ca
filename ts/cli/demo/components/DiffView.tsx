/** A unified diff, coloured line by line (additions green, removals red, hunks cyan). */
import { Box, Text } from 'ink'
import type { ReactElement } from 'react'
import { DIFF_COLORS, diffLineKind } from '../diff-lines.js'

export interface DiffViewProps {
  diff: string
  /** Show at most this many lines, then a count of the rest. */
  maxLines?: number
}

/** Renders the diff's lines in their colours. */
export function DiffView({ diff, maxLines = Infinity }: DiffViewProps): ReactElement {
  const lines = diff.replace(/\n$/, '').split('\n')
  const shown = lines.slice(0, maxLines)
  return (
    <Box flexDirection="column">
      {shown.map((line, i) => (
        <Text key={i} color={DIFF_COLORS[diffLineKind(line)]}>
          {line === '' ? ' ' : line}
        </Text>
      ))}
      {lines.length > shown.length ? <Text dimColor>{`… ${lines.length - shown.length} more lines`}</Text> : null}
    </Box>
  )
}
