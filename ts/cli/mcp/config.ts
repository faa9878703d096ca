/**
 * Turns the command-line arguments into the `Workspace` options the server builds its workspaces
 * from, reading the `--permissions` file. Problems are {@link UsageError}s (exit 2).
 */
import { readFileSync } from 'node:fs'
import { Workspace, type Permissions, type WorkspaceOptions } from '../../index.js'
import { checkWorkspaceOptions } from '../../workspace.js'
import { UsageError, type McpArgs } from './args.js'

/** Workspace options without `allowedPaths` (which MCP roots may change) and without `confirm`. */
export type BaseWorkspaceOptions = Omit<WorkspaceOptions, 'allowedPaths' | 'confirm'>

/** What the server is configured with. */
export interface McpServerConfig {
  /** Options shared by every workspace the server builds. */
  workspace: BaseWorkspaceOptions
  /** `--allow` directories: always allowed, also when the client offers roots. Empty: no sandbox unless roots. */
  allow: string[]
}

/**
 * Reads a `--permissions` file: a JSON object of {@link Permissions} keys. The keys themselves are
 * checked by the `Workspace` constructor (see {@link loadConfig}).
 */
export function readPermissionsFile(file: string): Permissions {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new UsageError(`--permissions: cannot read ${file}: ${(error as Error).message}`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`--permissions: ${file} is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`--permissions: ${file} must hold a JSON object such as {"cwdWriteFile": true}`)
  }
  return value as Permissions
}

/**
 * Builds the server configuration and checks it as a workspace would (without making one: no
 * crash recovery starts for a check), so a missing root, a bad `--allow` or an unknown
 * permission key is a usage error at startup, naming the flag.
 */
export function loadConfig(args: McpArgs): McpServerConfig {
  const workspace: BaseWorkspaceOptions = {
    root: args.root,
    ...(args.readOnly && { readOnly: true }),
    ...(args.allowStaleWrites === true && { staleWrites: 'allow' as const }),
    ...(args.permissionsFile !== undefined && { permissions: readPermissionsFile(args.permissionsFile) }),
  }
  const config: McpServerConfig = { workspace, allow: args.allow }
  try {
    checkWorkspaceOptions(workspaceOptions(config))
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(flagOf(error.message, args))
    throw error
  }
  return config
}

/**
 * The workspace options for the given MCP roots: `allowedPaths` = roots ∪ `--allow`; no roots
 * and no `--allow` → no sandbox (`allowedPaths` unset).
 */
function workspaceOptions(config: McpServerConfig, roots: readonly string[] = []): WorkspaceOptions {
  const allowedPaths = [...new Set([...roots, ...config.allow])]
  return { ...config.workspace, ...(allowedPaths.length > 0 && { allowedPaths }) }
}

/**
 * The workspace for the given MCP roots (see {@link workspaceOptions}). Throws the constructor's
 * `TypeError` for a bad option.
 */
export function buildWorkspace(config: McpServerConfig, roots: readonly string[] = []): Workspace {
  return new Workspace(workspaceOptions(config, roots))
}

/** Rewrites a constructor message (`root: …`, `allowedPaths[1]: …`, `permissions.x: …`) to name the flag. */
function flagOf(message: string, args: McpArgs): string {
  return message
    .replace(/^root:/, '--root:')
    .replace(/^allowedPaths\[\d+\]:/, '--allow:')
    .replace(/^permissions\./, `--permissions ${args.permissionsFile ?? ''}: `)
}
