/** The playground's title bar: workspace root, trash location and size. */
import { Box, Text } from 'ink'
import type { ReactElement } from 'react'

export interface HeaderProps {
  /** Canonical workspace root. */
  root: string
  /** Trash/audit data directory, when the demo chose it. */
  dataDir: string | undefined
  /** Archives in the trash, when known. */
  trashCount: number | undefined
}

/** Title, root and trash, on two lines. */
export function Header({ root, dataDir, trashCount }: HeaderProps): ReactElement {
  const trash = trashCount === undefined ? '…' : `${trashCount} archive${trashCount === 1 ? '' : 's'}`
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text bold color="magenta">agent-fs-tools playground</Text>
        <Text dimColor>  reads inside the root run without asking; everything else asks you</Text>
      </Text>
      <Text wrap="truncate-start">
        <Text dimColor>root </Text>
        {root}
        <Text dimColor>  trash </Text>
        {trash}
        {dataDir === undefined ? null : <Text dimColor>{`  in ${dataDir}`}</Text>}
      </Text>
    </Box>
  )
}
