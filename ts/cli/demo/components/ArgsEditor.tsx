/** The argument form: the tool's parameters and a one-line JSON editor, prefilled with an example. */
import { Box, Text, useInput } from 'ink'
import { useState, type ReactElement } from 'react'
import { useSyncState } from '../use-sync-state.js'
import type { ToolDefinition } from '../../../types.js'
import { editText, endsWithEnter, type TextState } from '../text-edit.js'
import { KeyHints } from './KeyHints.js'

export interface ArgsEditorProps {
  tool: ToolDefinition
  /** The text to start from (the last arguments run, or the example). */
  initial: string
  /** The example, restored by Ctrl+R. */
  example: string
  /** `ws.formatCall` of parsed arguments, for the live header. */
  formatCall: (args: unknown) => string
  /** Enter with valid JSON: run the call. */
  onSubmit: (args: unknown, text: string) => void
  /** Esc: back to the tool list. */
  onCancel: () => void
  isActive: boolean
}

/** Parses the editor's text: the value, or the JSON error message. */
function parse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (error) {
    return { ok: false, error: (error as Error).message }
  }
}

/** `name*: type` for each parameter (`*` = required). */
function Parameters({ tool }: { tool: ToolDefinition }): ReactElement {
  const { properties, required } = tool.inputSchema
  const names = Object.keys(properties)
  if (names.length === 0) return <Text dimColor>no parameters: run it with {'{}'}</Text>
  return (
    <Text dimColor>
      {names.map((name, i) => {
        const type = properties[name]?.['type']
        return (
          <Text key={name}>
            {i > 0 ? ' · ' : ''}
            <Text bold={required.includes(name)}>{name}</Text>
            {required.includes(name) ? '*' : ''}
            {type === undefined ? '' : `: ${Array.isArray(type) ? type.join('|') : String(type)}`}
          </Text>
        )
      })}
    </Text>
  )
}

/** The text with an inverse block at the cursor. */
function Field({ state }: { state: TextState }): ReactElement {
  const { text, cursor } = state
  return (
    <Text>
      {text.slice(0, cursor)}
      <Text inverse>{text[cursor] ?? ' '}</Text>
      {text.slice(cursor + 1)}
    </Text>
  )
}

/** Edits the arguments as JSON; Enter runs the call when the text parses. */
export function ArgsEditor({ tool, initial, example, formatCall, onSubmit, onCancel, isActive }: ArgsEditorProps): ReactElement {
  const [state, setState, stateRef] = useSyncState<TextState>({ text: initial, cursor: initial.length })
  const [error, setError] = useState<string | undefined>(undefined)
  useInput(
    (input, key) => {
      if (key.escape) return onCancel()
      const chunk = endsWithEnter(input)
      if (key.return || chunk.enter) {
        // Text and Enter in one chunk (a paste ending in a newline): the text goes in, then Enter.
        const state = chunk.text === '' ? stateRef.current : editText(stateRef.current, chunk.text, key)
        if (state !== stateRef.current) setState(state)
        const parsed = parse(state.text)
        if (parsed.ok) onSubmit(parsed.value, state.text)
        else setError(parsed.error)
        return
      }
      if (key.ctrl && input === 'r') {
        setState({ text: example, cursor: example.length })
        setError(undefined)
        return
      }
      setState((previous) => editText(previous, input, key))
      setError(undefined)
    },
    { isActive },
  )
  const parsed = parse(state.text)
  const header = parsed.ok ? formatCall(parsed.value) : ''
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold color="cyan">{tool.name}</Text>
        {header ? <Text>{`  ${header}`}</Text> : null}
      </Text>
      <Parameters tool={tool} />
      <Box borderStyle="round" borderColor={error ? 'red' : 'gray'} paddingX={1}>
        <Field state={state} />
      </Box>
      {error ? <Text color="red">{`Not valid JSON: ${error}`}</Text> : null}
      <KeyHints hints={[['Enter', 'run'], ['Esc', 'back'], ['Ctrl+U', 'clear'], ['Ctrl+R', 'example'], ['←→', 'move']]} />
    </Box>
  )
}
