/**
 * Tomo's `/undo` slash command over `ws.undo()` (SPEC §13): the user's undo, not the model's.
 *
 *   /undo              take back the agent's latest change (asks first, with the diff)
 *   /undo <change id>  take back that change (an undo's id redoes it)
 *   /undo session      take back everything this session's agent did, as one step
 *   /undo history      list the changes, newest first
 */
import type { ConfirmHandler, Workspace } from 'agent-fs-tools'
import type { TomoCommand } from './tomo-types.js'

export function createUndoCommand(ws: Workspace, sessionId: string, confirm: ConfirmHandler): TomoCommand {
  return {
    name: 'undo',
    description: "Undo the agent's latest file change (/undo <id>, /undo session, /undo history)",
    execute: async (args) => {
      const arg = args.trim()
      if (arg === 'history') {
        const changes = await ws.history({ limit: 20 })
        const lines = changes.map(
          (c) => `${c.id}  ${c.tool} ${c.summary}${c.undoneBy ? ' (undone)' : c.undoable ? '' : ` (${c.reason})`}`,
        )
        return { output: lines.length > 0 ? lines.join('\n') : 'No changes yet.' }
      }
      const result = await ws.undo({
        ...(arg === 'session' ? { sessionId } : arg !== '' ? { id: arg } : {}),
        confirm,
      })
      return { output: result.output }
    },
  }
}
