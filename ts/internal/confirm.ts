/**
 * Adapts a host's {@link ConfirmHandler} to what the native core awaits: a function of the request's
 * JSON that always resolves to a boolean and never rejects.
 *
 * @internal
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { ConfirmHandler, ConfirmRequest } from '../types.js'

/**
 * The ids of the calls whose confirm handlers are running in the current async context, outermost
 * first: a call made from a handler carries them, so that the core can refuse a change that would
 * wait for the very answer its handler is working on.
 */
export const answering = new AsyncLocalStorage<readonly number[]>()

/** The callback shape `NativeWorkspace.call` takes. */
export type NativeConfirm = (requestJson: string) => Promise<boolean>

/**
 * Wraps `handler` so that only a literal `true` (or a promise of it) approves; a throw, a rejection,
 * any other value or unparsable request JSON gives `false`. The handler runs with `asking` (the
 * call it answers for and the calls that one was made from) as the {@link answering} context.
 */
export function toNativeConfirm(handler: ConfirmHandler, asking: readonly number[]): NativeConfirm {
  return async (requestJson: string): Promise<boolean> => {
    try {
      const request = JSON.parse(requestJson) as ConfirmRequest
      return (await answering.run(asking, () => handler(request))) === true
    } catch {
      return false
    }
  }
}
