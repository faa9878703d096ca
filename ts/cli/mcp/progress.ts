/**
 * Progress over MCP: a call whose request carries `_meta.progressToken` sends
 * `notifications/progress` as the core reports progress (at most 10 a second), with the update in
 * words as the message. MCP wants each notification's `progress` to increase, so an update that
 * does not is skipped.
 */
import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js'
import type { CallContext } from '../../index.js'
import { describeProgress } from '../../internal/progress.js'

/** Sends one notification; what the SDK's request handler `extra.sendNotification` does. */
export type SendNotification = (notification: ServerNotification) => Promise<void>

/** Progress of one call for its client: the call's `onProgress`, and `sent()`, which resolves once every notification is written. */
export interface ProgressNotifier {
  onProgress: NonNullable<CallContext['onProgress']>
  /** Await before answering the call: a notification written after the answer would be dropped by the client. */
  sent: () => Promise<void>
}

/** The progress of a call whose client asked for it with `token`. */
export function progressNotifier(token: ProgressToken, send: SendNotification): ProgressNotifier {
  let last = -1
  let pending: Promise<void> = Promise.resolve()
  const onProgress: ProgressNotifier['onProgress'] = (update) => {
    if (update.done <= last) return
    last = update.done
    const notification = send({
      method: 'notifications/progress',
      params: {
        progressToken: token,
        progress: update.done,
        ...(update.total !== undefined && { total: update.total }),
        message: describeProgress(update),
      },
    }).catch(() => undefined)
    pending = pending.then(() => notification)
  }
  return { onProgress, sent: () => pending }
}
