/** The confirmation a tool asks for (../../../../docs/permissions-and-prompts.md): label, detail, the diff, and Approve/Deny keys. */
import { Box, Text, useInput } from 'ink'
import type { ReactElement } from 'react'
import type { ConfirmRequest } from '../../../types.js'
import { DiffView } from './DiffView.js'
import { KeyHints } from './KeyHints.js'

export interface ConfirmPromptProps {
  request: ConfirmRequest
  /** `y`: true; `n` or Esc: false. */
  onAnswer: (approve: boolean) => void
  /** Most diff lines to show. */
  maxDiffLines: number
  isActive: boolean
}

/** Asks the user; nothing happens until `y`, `n` or Esc. */
export function ConfirmPrompt({ request, onAnswer, maxDiffLines, isActive }: ConfirmPromptProps): ReactElement {
  useInput(
    (input, key) => {
      if (input === 'y' || input === 'Y') onAnswer(true)
      else if (input === 'n' || input === 'N' || key.escape) onAnswer(false)
    },
    { isActive },
  )
  const irreversible = request.permanent === true
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={irreversible ? 'red' : 'yellow'} paddingX={1}>
      <Text>
        <Text bold color={irreversible ? 'red' : 'yellow'}>{request.label}</Text>
        <Text dimColor>{`  ${request.tool}`}</Text>
      </Text>
      <Text>{request.detail}</Text>
      {request.recursive ? <Text color="yellow">The whole tree goes {irreversible ? 'away for good' : 'to the trash'}.</Text> : null}
      {irreversible ? <Text color="red">Permanent: this cannot be undone.</Text> : null}
      {request.diff ? <DiffView diff={request.diff} maxLines={maxDiffLines} /> : null}
      <KeyHints hints={[['y', 'approve'], ['n', 'deny'], ['Esc', 'deny']]} />
    </Box>
  )
}
