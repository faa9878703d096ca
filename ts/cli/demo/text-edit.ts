/**
 * The one-line text editor of the argument field, as a pure function of the key pressed.
 */
import type { Key } from 'ink'

/** The editor's text and cursor (an index into `text`, 0…length). */
export interface TextState {
  text: string
  cursor: number
}

/** Control characters, which never go into the text (pasted newlines become spaces first). */
const CONTROL = /[\u0000-\u001f\u007f]/g

/**
 * A chunk of input that ends with Enter: a paste ending in a newline, or text and Enter typed
 * faster than the terminal is read. Returns the text before that Enter (`''` for Enter alone) and
 * whether there was one, so the editor inserts the text and then submits, as if typed one by one.
 */
export function endsWithEnter(input: string): { text: string; enter: boolean } {
  const match = /(\r\n|\r|\n)$/.exec(input)
  return match === null ? { text: input, enter: false } : { text: input.slice(0, match.index), enter: true }
}

/**
 * The state after one key: ←/→, Home/End (also Ctrl+A/Ctrl+E), Backspace, Delete (Ctrl+D forward),
 * Ctrl+U clears the text, Ctrl+K cuts to the end; printable input (typed or pasted) is inserted.
 * Enter and Esc are the caller's. Returns `state` itself when the key changes nothing.
 */
export function editText(state: TextState, input: string, key: Key): TextState {
  const { text, cursor } = state
  if (key.leftArrow) return { text, cursor: Math.max(0, cursor - 1) }
  if (key.rightArrow) return { text, cursor: Math.min(text.length, cursor + 1) }
  if (key.home || (key.ctrl && input === 'a')) return { text, cursor: 0 }
  if (key.end || (key.ctrl && input === 'e')) return { text, cursor: text.length }
  if (key.ctrl && input === 'u') return { text: '', cursor: 0 }
  if (key.ctrl && input === 'k') return { text: text.slice(0, cursor), cursor }
  // Terminals send DEL (0x7f) for Backspace, which Ink reports as `delete`: both erase backwards.
  if (key.backspace || key.delete) {
    if (cursor === 0) return state
    return { text: text.slice(0, cursor - 1) + text.slice(cursor), cursor: cursor - 1 }
  }
  if (key.ctrl && input === 'd') return { text: text.slice(0, cursor) + text.slice(cursor + 1), cursor }
  if (key.ctrl || key.meta || key.return || key.escape || key.tab || key.upArrow || key.downArrow) return state
  const typed = input.replace(/\r\n|\r|\n/g, ' ').replace(CONTROL, '')
  if (typed === '') return state
  return { text: text.slice(0, cursor) + typed + text.slice(cursor), cursor: cursor + typed.length }
}
