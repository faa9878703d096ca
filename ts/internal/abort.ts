/**
 * Abort signals shared by many calls. A host often passes one `AbortSignal` to every call of a
 * turn; one `abort` listener per call would pass Node's default of 10 and warn
 * (`MaxListenersExceededWarning`). So each signal gets one listener, registered while any call
 * uses it, which aborts every call waiting on it.
 *
 * @internal
 */

interface Waiting {
  callbacks: Set<() => void>
  listener: () => void
}

const bySignal = new WeakMap<AbortSignal, Waiting>()

/**
 * Runs `callback` when `signal` aborts (at once if it already has). Returns the function that
 * withdraws it; the signal's listener goes with the last callback withdrawn.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback()
    return () => {}
  }
  let waiting = bySignal.get(signal)
  if (waiting === undefined) {
    const callbacks = new Set<() => void>()
    const listener = (): void => {
      bySignal.delete(signal)
      for (const run of callbacks) run()
    }
    waiting = { callbacks, listener }
    bySignal.set(signal, waiting)
    signal.addEventListener('abort', listener, { once: true })
  }
  const entry = waiting
  entry.callbacks.add(callback)
  return () => {
    entry.callbacks.delete(callback)
    if (entry.callbacks.size === 0 && bySignal.get(signal) === entry) {
      bySignal.delete(signal)
      signal.removeEventListener('abort', entry.listener)
    }
  }
}

/** Whether `value` can be used as an abort signal (an `AbortSignal`, or one from a polyfill). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as Partial<AbortSignal>
  return typeof candidate.aborted === 'boolean' && typeof candidate.addEventListener === 'function' && typeof candidate.removeEventListener === 'function'
}
