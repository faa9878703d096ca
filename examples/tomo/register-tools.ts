/**
 * Tomo integration: in Tomo's `app.tsx`, register these in place of its built-in file tools
 * (`app.tsx.patch` beside this file is the whole change). Permissions and confirmations come from
 * each call's Tomo context, so Tomo's config and its approval prompt (with DiffView) keep working.
 */
import { randomUUID } from 'node:crypto'
import { Workspace } from 'agent-fs-tools'
import { createTomoTools } from 'agent-fs-tools/tomo'
import type { TomoPermissions, TomoTool } from './tomo-types.js'

/** The slice of Tomo's config this needs (`loadConfig()`'s `permissions` and `tools`). */
export interface TomoConfigSlice {
  permissions: TomoPermissions
  tools?: Partial<Record<string, { enabled: boolean }>>
}

/** Tomo's built-in tools these replace, by their names in Tomo's tool registry. */
export const REPLACED_TOMO_TOOLS = ['read_file', 'write_file', 'edit_file', 'remove_file', 'remove_dir', 'glob', 'grep'] as const

/** Which of Tomo's `tools.<key>.enabled` switches turns each of these tools off. */
const TOMO_SWITCHES: Record<string, string> = {
  read_file: 'readFile',
  write_file: 'writeFile',
  append_file: 'writeFile',
  edit_file: 'editFile',
  apply_patch: 'editFile',
  delete_file: 'removeFile',
  remove_dir: 'removeDir',
  glob: 'glob',
  grep: 'grep',
}

/**
 * The trees the tools may reach, as Tomo's permissions mean them: the project (Tomo's cwd) is
 * where its `cwd*` keys apply; outside it, its `global*` keys. Until one `global*` key is
 * granted, nothing outside the project is reachable (`PATH_NOT_ALLOWED`, no prompt); once one
 * is, every path is, and the `global*` keys (or a prompt that says the path is outside the
 * project) decide each call.
 */
export function allowedPathsFor(permissions: TomoPermissions, cwd: string): string[] | undefined {
  const { globalReadFile, globalWriteFile, globalRemoveFile, globalRemoveDir } = permissions
  return globalReadFile || globalWriteFile || globalRemoveFile || globalRemoveDir ? undefined : [cwd]
}

/** This Tomo process's session in the history: what `/undo-session` takes back. */
export const FILE_SESSION_ID = `tomo-${randomUUID()}`

let shared: { cwd: string; allowed: string; ws: Workspace } | undefined

/**
 * The workspace of Tomo's project, made once per process (Tomo rebuilds its registries on every
 * render of `App`): the tools and the `/undo` command share it.
 */
export function fileWorkspace(config: TomoConfigSlice, cwd: string = process.cwd()): Workspace {
  const allowedPaths = allowedPathsFor(config.permissions, cwd)
  const allowed = JSON.stringify(allowedPaths ?? null)
  if (shared?.cwd === cwd && shared.allowed === allowed) return shared.ws
  const tools: Record<string, { enabled?: boolean; name?: string }> = {
    // Tomo calls its delete tool remove_file.
    delete_file: { name: 'remove_file' },
  }
  for (const [tool, key] of Object.entries(TOMO_SWITCHES)) {
    if (config.tools?.[key]?.enabled === false) tools[tool] = { ...tools[tool], enabled: false }
  }
  const ws = new Workspace({
    root: cwd,
    ...(allowedPaths !== undefined && { allowedPaths }),
    // Per-call permissions come from Tomo's ctx; these are the defaults for calls without one.
    permissions: config.permissions,
    tools,
    trash: { agentName: 'tomo', sessionId: FILE_SESSION_ID },
  })
  shared = { cwd, allowed, ws }
  return ws
}

/** Builds the filesystem tools for Tomo's registry. */
export function fileTools(config: TomoConfigSlice, cwd: string = process.cwd()): TomoTool[] {
  return createTomoTools(fileWorkspace(config, cwd))
}
