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
 * The prompts of one call that are open (asked, not yet answered), each with the signal its
 * {@link ConfirmRequest} carries: {@link OpenPrompts.withdraw} fires them when the call is aborted
 * or ends while they are open, so a UI can close them.
 */
export class OpenPrompts {
  readonly #open = new Set<AbortController>()
  #withdrawn = false

  /** A signal for a prompt being opened; already fired when the call is over. */
  open(): AbortController {
    const controller = new AbortController()
    if (this.#withdrawn) controller.abort()
    else this.#open.add(controller)
    return controller
  }

  /** The prompt was answered: its signal will not fire. */
  close(controller: AbortController): void {
    this.#open.delete(controller)
  }

  /** Fires the signal of every open prompt (and of any opened later). */
  withdraw(): void {
    this.#withdrawn = true
    for (const controller of this.#open) controller.abort()
    this.#open.clear()
  }
}

/**
 * Wraps `handler` so that only a literal `true` (or a promise of it) approves; a throw, a rejection,
 * any other value or unparsable request JSON gives `false`. The handler runs with `asking` (the
 * call it answers for and the calls that one was made from) as the {@link answering} context, and
 * its request carries a `signal` from `prompts` that fires if the prompt is withdrawn.
 */
export function toNativeConfirm(handler: ConfirmHandler, asking: readonly number[], prompts: OpenPrompts): NativeConfirm {
  return async (requestJson: string): Promise<boolean> => {
    const controller = prompts.open()
    try {
      const request = JSON.parse(requestJson) as ConfirmRequest
      request.signal = controller.signal
      return (await answering.run(asking, () => handler(request))) === true
    } catch {
      return false
    } finally {
      prompts.close(controller)
    }
  }
}
