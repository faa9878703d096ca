/** The workspace's history (`ws.history()`), newest first, with the undo key (../../../../docs/history-and-undo.md). */
import { Box, Text, useInput } from 'ink'
import type { ReactElement } from 'react'
import type { Change } from '../../../types.js'
import { listMove } from '../keys.js'
import { KeyHints } from './KeyHints.js'

export interface HistoryViewProps {
  /** `undefined` while loading. */
  changes: readonly Change[] | undefined
  /** Why the history could not be read, if it could not. */
  error: string | undefined
  selected: number
  onMove: (delta: number) => void
  /** Enter or `u`: undo the selected change (an undo's undo redoes it). */
  onUndo: () => void
  /** Esc: back to the tools. */
  onBack: () => void
  isActive: boolean
}

/** One change's line: its state, time, tool and summary. */
function ChangeLine({ change, selected }: { change: Change; selected: boolean }): ReactElement {
  const state = change.undoneBy ? 'undone' : change.undoable ? '' : 'kept'
  return (
    <Text color={selected ? 'cyan' : undefined} bold={selected} wrap="truncate-end">
      {selected ? '▸ ' : '  '}
      {`${change.tool.padEnd(15)} ${change.summary}`}
      <Text dimColor>{`  ${change.time.slice(11, 19)}${state ? `  (${state})` : ''}`}</Text>
    </Text>
  )
}

/** Lists the changes; the selected one's files (and why it cannot be undone) below. */
export function HistoryView({ changes, error, selected, onMove, onUndo, onBack, isActive }: HistoryViewProps): ReactElement {
  useInput(
    (input, key) => {
      const move = listMove(input, key)
      if (key.escape || input === 'q') onBack()
      else if (move !== 0) onMove(move)
      else if (key.return || input === 'u') onUndo()
    },
    { isActive },
  )
  const current = changes?.[selected]
  return (
    <Box flexDirection="column">
      <Text bold>History</Text>
      {error ? <Text color="red">{error}</Text> : null}
      {changes === undefined && !error ? <Text dimColor>loading…</Text> : null}
      {changes?.length === 0 ? <Text dimColor>No changes yet: write, edit or delete something first.</Text> : null}
      {changes?.map((change, i) => <ChangeLine key={change.id} change={change} selected={i === selected} />)}
      {current ? (
        <Box flexDirection="column" marginTop={1}>
          {current.files.map((file) => (
            <Text key={`${file.action}:${file.path}`} dimColor wrap="truncate-start">
              {`${file.action.padEnd(9)} ${file.from ? `${file.from} → ` : ''}${file.path}`}
            </Text>
          ))}
          {current.reason ? <Text color="yellow">{`cannot be undone: ${current.reason}`}</Text> : null}
        </Box>
      ) : null}
      <KeyHints hints={[['↑↓', 'select'], ['Enter/u', current?.tool === 'undo' ? 'redo' : 'undo'], ['Esc', 'back']]} />
    </Box>
  )
}
