/**
 * `agent-fs-tools`: a safe, recoverable filesystem toolset for LLM agent hosts.
 *
 * @packageDocumentation
 */
export { Workspace } from './workspace.js'
export { ERROR_CODES } from './types.js'
export type {
  CallArgs,
  CallCheck,
  ChangedFile,
  CallContext,
  Change,
  ChangeAction,
  ChangeSummary,
  CheckContext,
  ConfirmHandler,
  ConfirmRequest,
  CwdInfo,
  DefinitionsOptions,
  DenialCode,
  EditFileEdit,
  ErrorCode,
  HistoryOptions,
  FilesSummary,
  JsonSchema,
  Limits,
  NoArgs,
  Permissions,
  ToolArgs,
  ToolConfig,
  ToolData,
  ToolDefinition,
  ToolInputSchema,
  ToolName,
  ToolProgress,
  ToolResult,
  TrashClearOptions,
  TrashClearResult,
  TrashEntry,
  TrashOptions,
  UndoOptions,
  TreeSummary,
  WorkspaceOptions,
} from './types.js'
