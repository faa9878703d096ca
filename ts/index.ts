/**
 * `agent-fs-tools`: a safe, recoverable filesystem toolset for LLM agent hosts.
 *
 * @packageDocumentation
 */
export { Workspace } from './workspace.js'
export { ERROR_CODES } from './types.js'
export type {
  CallCheck,
  CallContext,
  ChangeSummary,
  CheckContext,
  ConfirmHandler,
  ConfirmRequest,
  CwdInfo,
  DenialCode,
  ErrorCode,
  FilesSummary,
  JsonSchema,
  Limits,
  Permissions,
  ToolConfig,
  ToolDefinition,
  ToolInputSchema,
  ToolName,
  ToolProgress,
  ToolResult,
  TrashClearOptions,
  TrashClearResult,
  TrashEntry,
  TrashOptions,
  TreeSummary,
  WorkspaceOptions,
} from './types.js'
