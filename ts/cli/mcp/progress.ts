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

/** The `onProgress` of a call whose client asked for progress with `token`. */
export function progressNotifier(token: ProgressToken, send: SendNotification): NonNullable<CallContext['onProgress']> {
  let last = -1
  return (update) => {
    if (update.done <= last) return
    last = update.done
    void send({
      method: 'notifications/progress',
      params: {
        progressToken: token,
        progress: update.done,
        ...(update.total !== undefined && { total: update.total }),
        message: describeProgress(update),
      },
    }).catch(() => undefined)
  }
}
