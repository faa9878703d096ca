/** A line of key hints: `[key] action` pairs. */
import { Text } from 'ink'
import type { ReactElement } from 'react'

export interface KeyHintsProps {
  /** `[key, action]` pairs, in display order. */
  hints: ReadonlyArray<readonly [string, string]>
}

/** Renders `key action · key action …`, keys in bold. */
export function KeyHints({ hints }: KeyHintsProps): ReactElement {
  return (
    <Text dimColor>
      {hints.map(([key, action], i) => (
        <Text key={key}>
          {i > 0 ? ' · ' : ''}
          <Text bold>{key}</Text> {action}
        </Text>
      ))}
    </Text>
  )
}
