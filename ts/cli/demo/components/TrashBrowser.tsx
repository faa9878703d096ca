/** The workspace's trash (`ws.trashList()`), newest first, with restore keys. */
import { Box, Text, useInput } from 'ink'
import type { ReactElement } from 'react'
import type { TrashEntry } from '../../../types.js'
import { listMove } from '../keys.js'
import { KeyHints } from './KeyHints.js'

export interface TrashBrowserProps {
  /** `undefined` while loading. */
  entries: readonly TrashEntry[] | undefined
  /** Why the trash could not be listed, if it could not. */
  error: string | undefined
  selected: number
  onMove: (delta: number) => void
  /** Enter or `r`: restore the selected entry to its original path; `o`: overwriting what is there now. */
  onRestore: (overwrite: boolean) => void
  /** Esc: back to the tools. */
  onBack: () => void
  isActive: boolean
}

/** `1.2 KiB`-style size. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

/** One entry's line. */
function EntryLine({ entry, selected }: { entry: TrashEntry; selected: boolean }): ReactElement {
  const files = entry.fileCount === undefined ? '' : `, ${entry.fileCount} file${entry.fileCount === 1 ? '' : 's'}`
  return (
    <Text color={selected ? 'cyan' : undefined} bold={selected} wrap="truncate-end">
      {selected ? '▸ ' : '  '}
      {`${entry.kind.padEnd(9)} ${entry.relativePath}`}
      <Text dimColor>{`  ${formatSize(entry.size)}${files}  ${entry.trashedAt}  by ${entry.agentName}`}</Text>
    </Text>
  )
}

/** `label value`, the value truncated at its start when too long (the end of a path says most). */
function Labelled({ label, value }: { label: string; value: string }): ReactElement {
  return (
    <Box>
      <Box width={8} flexShrink={0}>
        <Text dimColor>{label}</Text>
      </Box>
      <Text dimColor wrap="truncate-start">
        {value}
      </Text>
    </Box>
  )
}

/** Lists the archives; the selected one's paths below. */
export function TrashBrowser({ entries, error, selected, onMove, onRestore, onBack, isActive }: TrashBrowserProps): ReactElement {
  useInput(
    (input, key) => {
      const move = listMove(input, key)
      if (key.escape || input === 'q') onBack()
      else if (move !== 0) onMove(move)
      else if (key.return || input === 'r') onRestore(false)
      else if (input === 'o') onRestore(true)
    },
    { isActive },
  )
  const current = entries?.[selected]
  return (
    <Box flexDirection="column">
      <Text bold>Trash</Text>
      {error ? <Text color="red">{error}</Text> : null}
      {entries === undefined && !error ? <Text dimColor>loading…</Text> : null}
      {entries?.length === 0 ? <Text dimColor>The trash is empty: delete, remove or overwrite something first.</Text> : null}
      {entries?.map((entry, i) => <EntryLine key={entry.archivePath} entry={entry} selected={i === selected} />)}
      {current ? (
        <Box flexDirection="column" marginTop={1}>
          <Labelled label="from" value={current.originalPath} />
          <Labelled label="archive" value={current.archivePath} />
        </Box>
      ) : null}
      <KeyHints hints={[['↑↓', 'select'], ['Enter/r', 'restore'], ['o', 'restore, overwriting'], ['Esc', 'back']]} />
    </Box>
  )
}
