/**
 * `agent-fs-tools`: a safe, recoverable filesystem toolset for LLM agent hosts.
 *
 * @packageDocumentation
 */
export { Workspace } from './workspace.js'
export { ERROR_CODES } from './types.js'
export type {
  CallContext,
  Change,
  ChangeAction,
  ConfirmHandler,
  ConfirmRequest,
  CwdInfo,
  ErrorCode,
  HistoryOptions,
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
  UndoOptions,
  WorkspaceOptions,
} from './types.js'
