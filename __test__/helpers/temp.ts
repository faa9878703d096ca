/** Fresh temporary workspaces for tests: a root directory and a trash data directory beside it. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { Workspace, type WorkspaceOptions } from 'agent-fs-tools'

/** A temporary directory holding `root/` (the workspace) and `data/` (trash and audit). */
export interface TempWorkspaceDirs {
  /** Canonical path of the workspace root. */
  root: string
  /** Trash/audit data directory, outside `root`. */
  dataDir: string
}

const created: string[] = []

/**
 * Creates the directories, in `under` (default: the OS's temp directory); they are removed after
 * the current test.
 */
export function tempWorkspaceDirs(under: string = tmpdir()): TempWorkspaceDirs {
  const base = realpathSync(mkdtempSync(join(under, 'afs-test-')))
  created.push(base)
  const root = join(base, 'root')
  const dataDir = join(base, 'data')
  mkdirSync(root)
  mkdirSync(dataDir)
  return { root, dataDir }
}

/**
 * A workspace over fresh temporary directories (made in `under`, default the OS's temp directory);
 * `options` are merged over `{ root, trash: { dataDir } }`.
 */
export function tempWorkspace(options: Partial<WorkspaceOptions> = {}, under?: string): { ws: Workspace } & TempWorkspaceDirs {
  const dirs = tempWorkspaceDirs(under)
  const ws = new Workspace({ root: dirs.root, ...options, trash: { dataDir: dirs.dataDir, ...options.trash } })
  return { ws, ...dirs }
}

afterEach(() => {
  // Retried (Node retries ENOTEMPTY and EBUSY): where deletes lack POSIX semantics (Wine) a name
  // stays until its last handle closes, and a handle of the test's Workspace may outlive it by a
  // moment (under Wine three tests at random met ENOTEMPTY here in a whole run).
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
})
