/**
 * MCP roots → the workspace's `allowedPaths`. {@link WorkspaceHolder} keeps the current workspace
 * and rebuilds it when the client's roots are (re)read; tool calls wait for a pending re-read, so
 * a call sent after `notifications/roots/list_changed` sees the new roots.
 */
import { statSync, type Stats } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Root } from '@modelcontextprotocol/sdk/types.js'
import type { Workspace } from '../../index.js'
import { buildWorkspace, type McpServerConfig } from './config.js'

/** How long to wait for the client's `roots/list` answer before keeping the previous workspace. */
export const ROOTS_TIMEOUT_MS = 10_000

/** Writes a diagnostic line to stderr (stdout carries only the protocol). */
export type Logger = (message: string) => void

/**
 * The local directories among the client's roots: `file://` URIs as paths. Other schemes, URIs
 * that are not local paths, and existing non-directories are skipped (and logged).
 */
export function rootPaths(roots: readonly Root[], log: Logger): string[] {
  const paths: string[] = []
  for (const root of roots) {
    let path: string
    try {
      if (!root.uri.startsWith('file:')) throw new Error('not a file:// URI')
      path = fileURLToPath(root.uri)
    } catch (error) {
      log(`ignoring MCP root ${root.uri}: ${(error as Error).message}`)
      continue
    }
    let stat: Stats | undefined
    try {
      stat = statSync(path, { throwIfNoEntry: false })
    } catch {
      stat = undefined // Unreadable: leave the decision to the workspace.
    }
    if (stat !== undefined && !stat.isDirectory()) {
      log(`ignoring MCP root ${root.uri}: not a directory`)
      continue
    }
    paths.push(path)
  }
  return paths
}

/**
 * The workspace the server currently serves, with `allowedPaths` = roots ∪ `--allow`. One
 * workspace per set of roots, made when a call first needs it: after the roots a client that
 * declares them offers at startup have been read (a workspace made before would start crash
 * recovery within `--allow` alone). Each {@link WorkspaceHolder.refresh} re-reads the roots and,
 * when they changed, rebuilds it; an empty roots list falls back to the command-line
 * configuration. A rebuilt workspace starts with a fresh cwd stack at `--root`; its trash is the
 * same (keyed by the root).
 */
export class WorkspaceHolder {
  readonly #config: McpServerConfig
  readonly #log: Logger
  #workspace: Workspace | undefined
  #pending: Promise<void> = Promise.resolve()
  #roots: string[] = []

  constructor(config: McpServerConfig, log: Logger) {
    this.#config = config
    this.#log = log
  }

  /** The workspace to run a call on, once any pending roots update has been applied. */
  async current(): Promise<Workspace> {
    await this.#pending
    this.#workspace ??= buildWorkspace(this.#config, this.#roots)
    return this.#workspace
  }

  /** The directories from the client's roots currently in `allowedPaths`. */
  get roots(): readonly string[] {
    return this.#roots
  }

  /**
   * Re-reads the roots with `listRoots` and rebuilds the workspace. Updates are applied in the
   * order requested; a failure (timeout, client error, a root the core refuses) is logged and
   * keeps the previous workspace. Call it synchronously from the notification handler, so calls
   * that arrive afterwards wait for it.
   */
  refresh(listRoots: () => Promise<{ roots: Root[] }>): Promise<void> {
    this.#pending = this.#pending.then(async () => {
      try {
        const { roots } = await listRoots()
        this.#apply(rootPaths(roots, this.#log))
      } catch (error) {
        this.#log(`could not update MCP roots, keeping the previous ones: ${(error as Error).message}`)
      }
    })
    return this.#pending
  }

  #apply(roots: string[]): void {
    const same = roots.length === this.#roots.length && roots.every((root, i) => root === this.#roots[i])
    if (same && this.#workspace !== undefined) return
    this.#workspace = buildWorkspace(this.#config, roots)
    this.#roots = roots
  }
}
