/** The side panel: the cwd stack (bottom first) and the latest calls. */
import { Box, Text } from 'ink'
import type { ReactElement } from 'react'
import type { ToolResult } from '../../../types.js'
import { displayPath } from '../cwd-stack.js'

/** One call in the history. */
export interface HistoryEntry {
  tool: string
  header: string
  status: ToolResult['status']
  code?: string | undefined
}

export interface SidebarProps {
  root: string
  /** cwd frames, bottom first; the last is the current directory. */
  cwdStack: readonly string[]
  /** Newest first. */
  history: readonly HistoryEntry[]
  /** Columns, borders included. */
  width: number
}

const MARK: Readonly<Record<ToolResult['status'], [string, string]>> = {
  ok: ['✔', 'green'],
  denied: ['⊘', 'yellow'],
  error: ['✖', 'red'],
}

/** The cwd stack, top (current directory) marked. */
function CwdStack({ root, cwdStack }: Pick<SidebarProps, 'root' | 'cwdStack'>): ReactElement {
  return (
    <Box flexDirection="column">
      <Text bold>{`cwd stack (depth ${cwdStack.length - 1})`}</Text>
      {cwdStack.map((dir, i) => {
        const top = i === cwdStack.length - 1
        return (
          <Text key={i} color={top ? 'cyan' : undefined} wrap="truncate-start">
            {`${i} ${displayPath(dir, root)}${top ? '  ← cwd' : ''}`}
          </Text>
        )
      })}
    </Box>
  )
}

/** The latest calls with their outcome. */
function History({ history }: Pick<SidebarProps, 'history'>): ReactElement {
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>recent calls</Text>
      {history.length === 0 ? <Text dimColor>none yet</Text> : null}
      {history.map((entry, i) => {
        const [mark, color] = MARK[entry.status]
        return (
          <Text key={i} wrap="truncate-end">
            <Text color={color}>{mark}</Text>
            {` ${entry.tool}`}
            <Text dimColor>{entry.header ? ` ${entry.header}` : ''}</Text>
          </Text>
        )
      })}
    </Box>
  )
}

/** Both panels, in a bordered column. */
export function Sidebar({ root, cwdStack, history, width }: SidebarProps): ReactElement {
  return (
    <Box flexDirection="column" width={width} flexShrink={0} borderStyle="single" borderColor="gray" paddingX={1}>
      <CwdStack root={root} cwdStack={cwdStack} />
      <History history={history} />
    </Box>
  )
}
