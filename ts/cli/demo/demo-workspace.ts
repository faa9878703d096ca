/**
 * The workspace the demo runs in: a fresh sample project in a temporary directory (with its trash
 * and audit log beside it), or the user's own `--root`.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Workspace } from '../../workspace.js'
import { UsageError } from './options.js'
import { writeSampleProject } from './sample-project.js'

/** A workspace for the demo and what to clean up after it. */
export interface DemoWorkspace {
  ws: Workspace
  /** Canonical workspace root. */
  root: string
  /** The trash/audit data directory: in the temporary directory, or the default one for `--root`. */
  dataDir: string
  /** The temporary directory holding the sample project, if any. */
  tempDir: string | undefined
  /** Removes the temporary directory (unless kept); returns a line for the user, if any. */
  dispose(): string | undefined
}

/** How to open the demo's workspace. */
export interface OpenDemoOptions {
  /** The user's directory; omitted: a fresh sample project in a temporary directory. */
  root?: string
  /** Keep the temporary directory on dispose. */
  keep?: boolean
  /** Recorded in trash archives and the audit log. */
  agentName: string
}

/**
 * Opens the demo's workspace. With `root`, that directory (which must exist) with the default trash
 * location; without, a sample project in a new temporary directory whose `data/` holds the trash.
 */
export function openDemoWorkspace(options: OpenDemoOptions): DemoWorkspace {
  const trash = { sessionId: 'demo-session', runId: 'demo-run', agentName: options.agentName }
  if (options.root !== undefined) {
    const root = resolve(options.root)
    if (!existsSync(root) || !statSync(root).isDirectory()) throw new UsageError(`--root: not a directory: ${root}`)
    const ws = new Workspace({ root, trash })
    const dataDir = process.env['AGENT_FS_TOOLS_DATA_DIR'] || join(homedir(), '.agent-fs-tools')
    return { ws, root: ws.cwd().cwd, dataDir, tempDir: undefined, dispose: () => undefined }
  }
  const tempDir = realpathSync(mkdtempSync(join(tmpdir(), 'agent-fs-tools-demo-')))
  const root = join(tempDir, 'sample-project')
  const dataDir = join(tempDir, 'data')
  writeSampleProject(root)
  const ws = new Workspace({ root, trash: { ...trash, dataDir } })
  const dispose = (): string | undefined => {
    if (options.keep) return `kept ${tempDir}`
    rmSync(tempDir, { recursive: true, force: true })
    return undefined
  }
  return { ws, root, dataDir, tempDir, dispose }
}
