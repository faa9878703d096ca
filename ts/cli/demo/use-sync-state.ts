/**
 * State whose latest value is readable at once. Ink delivers every key of one input chunk (a fast
 * typist, a paste, `tmux send-keys Down Enter`) before React re-renders, so a key handler must not
 * read a value from its render's closure: it reads `ref.current`, which `set` updates immediately.
 */
import { useCallback, useRef, useState, type MutableRefObject } from 'react'

/** `[value for rendering, setter (value or updater), ref to the latest value]`. */
export function useSyncState<T>(initial: T): [T, (next: T | ((previous: T) => T)) => void, MutableRefObject<T>] {
  const [value, setValue] = useState(initial)
  const ref = useRef(initial)
  const set = useCallback((next: T | ((previous: T) => T)) => {
    ref.current = typeof next === 'function' ? (next as (previous: T) => T)(ref.current) : next
    setValue(ref.current)
  }, [])
  return [value, set, ref]
}
