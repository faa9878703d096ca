/**
 * Tomo integration: in Tomo's `app.tsx` (or wherever its tools are registered), replace the
 * built-in file tools with these. Permissions and confirmations come from each call's Tomo
 * context, so Tomo's config and its approval prompt (with DiffView) keep working unchanged.
 */
import { Workspace } from 'agent-fs-tools'
import { createTomoTools } from 'agent-fs-tools/tomo'
import type { TomoPermissions, TomoTool } from './tomo-types.js'

/** The slice of Tomo's config this needs. */
export interface TomoConfigSlice {
  permissions: TomoPermissions
  tools?: Record<string, { enabled: boolean }>
}

/** Builds the filesystem tools for Tomo's registry. */
export function fileTools(config: TomoConfigSlice, cwd: string = process.cwd()): TomoTool[] {
  const ws = new Workspace({
    root: cwd,
    // Per-call permissions come from Tomo's ctx; these are the defaults for calls without one.
    permissions: config.permissions,
    // Tomo calls its delete tool remove_file.
    tools: {
      delete_file: { name: 'remove_file', enabled: config.tools?.remove_file?.enabled ?? true },
    },
    trash: { agentName: 'tomo' },
  })
  return createTomoTools(ws)
}

// In app.tsx:
//   for (const tool of fileTools(config)) registerTool(tool)
