/**
 * Confirmations over MCP: a yes/no elicitation form when the client declares the `elicitation`
 * capability (form mode), else no handler at all, so the core denies, and the model is told why.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { ClientCapabilities, ElicitRequestFormParams, RequestId } from '@modelcontextprotocol/sdk/types.js'
import type { ConfirmHandler, ConfirmRequest, ToolResult } from '../../index.js'

/**
 * How long a confirmation may wait for the user, in milliseconds. The SDK's default request
 * timeout (60 s) is short for a person reading a diff; a timeout counts as "no".
 */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000

/** The form field the user ticks to approve. */
const APPROVE = 'approve'

/**
 * Whether the client can show a form: it declared `elicitation` with `form` (an empty
 * `elicitation: {}` means form mode, and the SDK normalises it so).
 */
export function supportsElicitation(capabilities: ClientCapabilities | undefined): boolean {
  return capabilities?.elicitation?.form !== undefined
}

/**
 * What happens to what the action removes or replaces, said plainly: a permanent action keeps no
 * copy; a recursive one puts the whole tree in the trash, from where it can be restored.
 */
function consequence(request: ConfirmRequest): string | undefined {
  if (request.permanent === true) return 'No copy is kept in the trash: this cannot be undone.'
  if (request.recursive === true) {
    return 'The directory and everything in it go to the trash as one archive, from where they can be restored.'
  }
  return undefined
}

/** The elicitation form for a confirmation: the label, the detail, what happens, and (for writes) the diff. */
export function confirmationForm(request: ConfirmRequest): ElicitRequestFormParams {
  const lines = [`${request.label} ${request.detail}`]
  const then = consequence(request)
  if (then !== undefined) lines.push('', then)
  if (request.diff !== undefined && request.diff !== '') {
    lines.push('', '```diff', request.diff.replace(/\n$/, ''), '```')
  }
  return {
    mode: 'form',
    message: lines.join('\n'),
    requestedSchema: {
      type: 'object',
      properties: {
        [APPROVE]: {
          type: 'boolean',
          title: request.label,
          description: `Allow ${request.tool}: ${request.detail}`,
        },
      },
      required: [APPROVE],
    },
  }
}

/**
 * A confirm handler that asks through `elicitation/create`, tied to the tool call it belongs to
 * (`relatedRequestId`, and `signal` so a cancelled call withdraws its question). Only an accepted
 * form with `approve: true` is a "yes"; decline, cancel, a timeout or an error are "no".
 */
export function elicitationConfirm(server: Server, related: { requestId: RequestId; signal: AbortSignal }): ConfirmHandler {
  return async (request) => {
    const result = await server.elicitInput(confirmationForm(request), {
      relatedRequestId: related.requestId,
      signal: related.signal,
      timeout: CONFIRM_TIMEOUT_MS,
    })
    return result.action === 'accept' && result.content?.[APPROVE] === true
  }
}

/** Why nobody could be asked, in a denial for the model. */
export const NO_ELICITATION_NOTE =
  'this MCP client does not support confirmations (elicitation), so agent-fs-tools cannot ask the user'

/**
 * The core's sentences for a denial nobody could be asked for, up to the end of the one for the
 * host (what the model should do next follows, then, for a patch, a note on a new line).
 */
const NOBODY_ASKED = /^Nobody was asked to approve this (.+?): the host has no way to ask the user \(no confirmation handler\), so nothing was changed\. For the host: [^\n]*?\.(?=\s|$)/

/**
 * A denial nobody could be asked for (`NO_CONFIRM_HANDLER`), told as this server's user can act on
 * it: the client cannot show confirmations, and which permission the `--permissions` file may
 * grant (from the result's `data.grant`), or that the action always needs a confirmation. Other
 * results are returned unchanged.
 */
export function explainDenial(result: ToolResult): ToolResult {
  if (result.status !== 'denied' || result.code !== 'NO_CONFIRM_HANDLER') return result
  const grant = Array.isArray(result.data?.grant) ? (result.data.grant as string[]) : []
  const next =
    grant.length > 0
      ? `The user can grant ${grant.join(' and ')} in the --permissions file of the agent-fs-tools MCP server to allow it without asking.`
      : 'It always needs a confirmation (a recursive removal, the replacement of a whole directory, anything that keeps no copy in the trash), so it cannot run from this client.'
  const output = result.output.replace(NOBODY_ASKED, (_, action: string) => `Nobody was asked to approve this ${action}: ${NO_ELICITATION_NOTE}; nothing was changed. ${next}`)
  return { ...result, output }
}
