/**
 * `agent-fs-tools`: a safe, recoverable filesystem toolset for LLM agent hosts.
 *
 * @packageDocumentation
 */
export { Workspace } from './workspace.js'
export { ERROR_CODES } from './types.js'
export type {
  CallContext,
  ConfirmHandler,
  ConfirmRequest,
  CwdInfo,
  ErrorCode,
  JsonSchema,
  Limits,
  Permissions,
  ToolConfig,
  ToolDefinition,
  ToolInputSchema,
  ToolName,
  ToolResult,
  TrashClearOptions,
  TrashClearResult,
  TrashEntry,
  TrashOptions,
  WorkspaceOptions,
} from './types.js'
