/**
 * Adapts a host's {@link ConfirmHandler} to what the native core awaits: a function of the request's
 * JSON that always resolves to a boolean and never rejects.
 *
 * @internal
 */
import type { ConfirmHandler, ConfirmRequest } from '../types.js'

/** The callback shape `NativeWorkspace.call` takes. */
export type NativeConfirm = (requestJson: string) => Promise<boolean>

/**
 * Wraps `handler` so that only a literal `true` (or a promise of it) approves; a throw, a rejection,
 * any other value or unparsable request JSON gives `false`.
 */
export function toNativeConfirm(handler: ConfirmHandler): NativeConfirm {
  return async (requestJson: string): Promise<boolean> => {
    try {
      const request = JSON.parse(requestJson) as ConfirmRequest
      return (await handler(request)) === true
    } catch {
      return false
    }
  }
}
