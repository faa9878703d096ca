/**
 * Tomo's slash commands over `ws.undo()` and `ws.history()` (../../docs/history-and-undo.md): the user's undo, not the
 * model's. Tomo's commands take no arguments, so there is one per action:
 *
 *   /undo          take back the agent's latest change
 *   /undo-session  take back everything this session's agent did, as one step
 *   /changes       list the agent's changes, newest first, with their ids
 *
 * Typing the command is the user's decision, so nothing asks again (a Tomo command cannot open
 * its approval prompt); what was taken back goes to the trash first, and `/undo` again redoes.
 */
import type { Workspace } from 'agent-fs-tools'
import type { TomoCommand } from './tomo-types.js'

/** `/undo`, `/undo-session` and `/changes` for the workspace of Tomo's file tools. */
export function createUndoCommands(ws: Workspace, sessionId?: string): TomoCommand[] {
  const commands: TomoCommand[] = [
    {
      name: 'undo',
      description: "Undo the agent's latest file change (again to redo it)",
      handler: async () => (await ws.undo()).output,
    },
    {
      name: 'changes',
      description: "List the agent's file changes, newest first",
      handler: async () => {
        const changes = await ws.history({ limit: 20 })
        const lines = changes.map(
          (c) => `${c.id}  ${c.tool} ${c.summary}${c.undoneBy ? ' (undone)' : c.undoable ? '' : ` (${c.reason})`}`,
        )
        return lines.length > 0 ? lines.join('\n') : 'No changes yet.'
      },
    },
  ]
  if (sessionId !== undefined) {
    commands.splice(1, 0, {
      name: 'undo-session',
      description: 'Undo every file change the agent made in this session, as one step',
      handler: async () => (await ws.undo({ sessionId })).output,
    })
  }
  return commands
}
