/** A call's result: status, error code, and the output (diff lines coloured), scrollable. */
import { Box, Text, useInput } from 'ink'
import { useState, type ReactElement } from 'react'
import type { ToolResult } from '../../../types.js'
import { DIFF_COLORS, diffLineKind } from '../diff-lines.js'
import { KeyHints } from './KeyHints.js'

export interface ResultViewProps {
  tool: string
  /** `ws.formatCall` of the call. */
  header: string
  result: ToolResult
  /** Output lines visible at once. */
  height: number
  /** Enter or Esc: back. */
  onClose: () => void
  isActive: boolean
}

const STATUS: Readonly<Record<ToolResult['status'], { mark: string; color: string }>> = {
  ok: { mark: '✔', color: 'green' },
  denied: { mark: '⊘', color: 'yellow' },
  error: { mark: '✖', color: 'red' },
}

/** Shows the result; ↑/↓ (PgUp/PgDn, Home/End) scroll long output. */
export function ResultView({ tool, header, result, height, onClose, isActive }: ResultViewProps): ReactElement {
  const lines = result.output.replace(/\n$/, '').split('\n')
  const maxOffset = Math.max(0, lines.length - height)
  const [offset, setOffset] = useState(0)
  const scroll = (delta: number): void => setOffset((o) => Math.min(maxOffset, Math.max(0, o + delta)))
  useInput(
    (_input, key) => {
      if (key.return || key.escape) onClose()
      else if (key.upArrow) scroll(-1)
      else if (key.downArrow) scroll(1)
      else if (key.pageUp) scroll(-height)
      else if (key.pageDown) scroll(height)
      else if (key.home) setOffset(0)
      else if (key.end) setOffset(maxOffset)
    },
    { isActive },
  )
  const { mark, color } = STATUS[result.status]
  const colored = result.diff !== undefined
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold color={color}>{`${mark} ${result.status}${result.code ? ` ${result.code}` : ''}`}</Text>
        <Text>{`  ${tool}`}</Text>
        <Text dimColor>{header ? `  ${header}` : ''}</Text>
      </Text>
      <Box flexDirection="column" borderStyle="single" borderColor="gray" paddingX={1}>
        {lines.slice(offset, offset + height).map((line, i) => (
          <Text key={offset + i} color={colored ? DIFF_COLORS[diffLineKind(line)] : undefined}>
            {line === '' ? ' ' : line}
          </Text>
        ))}
      </Box>
      {maxOffset > 0 ? <Text dimColor>{`lines ${offset + 1}–${Math.min(lines.length, offset + height)} of ${lines.length}`}</Text> : null}
      <KeyHints hints={maxOffset > 0 ? [['Enter/Esc', 'back'], ['↑↓', 'scroll'], ['Home/End', 'top/bottom']] : [['Enter/Esc', 'back']]} />
    </Box>
  )
}
