/** The tool picker: the enabled tools on the left, the selected tool's description on the right. */
import { Box, Text, useInput } from 'ink'
import type { ReactElement } from 'react'
import type { ToolDefinition } from '../../../types.js'
import { listMove } from '../keys.js'
import { wrapWords } from '../wrap.js'
import { KeyHints } from './KeyHints.js'

export interface ToolListProps {
  tools: readonly ToolDefinition[]
  /** Index of the highlighted tool. */
  selected: number
  /** Moves the highlight by `delta` (the owner clamps it). */
  onMove: (delta: number) => void
  /** Enter: edit the arguments of the highlighted tool (the owner knows which one is). */
  onChoose: () => void
  /** `t`: open the trash browser. */
  onTrash: () => void
  /** `u`: undo the latest change. */
  onUndo: () => void
  /** `h`: open the history. */
  onHistory: () => void
  /** `q`: leave the playground. */
  onQuit: () => void
  /** Columns the description is shown in (it is wrapped to them). */
  width: number
  /** Whether this screen takes the keyboard. */
  isActive: boolean
}

/** The first paragraph of a tool description. */
function summary(description: string): string {
  return description.split(/\n\s*\n/)[0]!.trim()
}

/** A short tag for a tool's annotations. */
function tag(tool: ToolDefinition): ReactElement | null {
  if (tool.annotations.destructive) return <Text color="red"> destructive</Text>
  if (!tool.annotations.readOnly) return <Text color="yellow"> writes</Text>
  return null
}

/** Lists the tools; ↑/↓ (or k/j) moves, Enter chooses. */
export function ToolList({ tools, selected, onMove, onChoose, onTrash, onUndo, onHistory, onQuit, width, isActive }: ToolListProps): ReactElement {
  useInput(
    (input, key) => {
      const move = listMove(input, key)
      if (move !== 0) onMove(move)
      else if (key.return) onChoose()
      else if (input === 't') onTrash()
      else if (input === 'u') onUndo()
      else if (input === 'h') onHistory()
      else if (input === 'q') onQuit()
    },
    { isActive },
  )
  const current = tools[selected]
  return (
    <Box flexDirection="column">
      <Text bold>Pick a tool</Text>
      <Box>
        <Box flexDirection="column" width={22} flexShrink={0}>
          {tools.map((tool, i) => (
            <Text key={tool.name} color={i === selected ? 'cyan' : undefined} bold={i === selected}>
              {i === selected ? '▸ ' : '  '}
              {tool.name}
            </Text>
          ))}
        </Box>
        {current ? (
          <Box flexDirection="column" flexGrow={1} height={tools.length} overflow="hidden">
            <Text>
              <Text bold>{current.name}</Text>
              {tag(current)}
            </Text>
            <Text dimColor>{wrapWords(summary(current.description), width)}</Text>
          </Box>
        ) : null}
      </Box>
      <KeyHints hints={[['↑↓', 'select'], ['Enter', 'arguments'], ['t', 'trash'], ['u', 'undo'], ['h', 'history'], ['q', 'quit']]} />
    </Box>
  )
}
