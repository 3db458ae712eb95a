/**
 * @crustcore/mcp — a stdio MCP server with a small frozen tool set: every MCP
 * task is a kernel task in the repository's ledger, driven through the
 * runtime (the same spine and VerifySession as `crustcore run`). Models
 * create, stage and verify; approval comes from a person (a one-time token
 * from `crustcore mcp-token`) and the kernel mints the Approved.
 * See docs/mcp.md.
 */
export { type ApprovalGrant, ApprovalTokenBook, type TokenRefusal } from './approval-tokens.js';
export { MCP_LIMITS } from './limits.js';
export { LedgerUnavailable, logPathOf, McpLedgers } from './mcp-ledger.js';
export { createMcpServer, type RedactText, SERVER_NAME } from './server.js';
export { McpService, type McpServiceOptions } from './service.js';
export { type PlannedFile, planStagedFiles, renderFilePatch, type StagingRefusal } from './staging.js';
export { type ClaimedSlot, claimStateSlot, MAX_STATE_SLOTS, slotDir } from './state-slot.js';
export { envelopeError, MessageSizeGuard, oversizedReply, recoverRequestId, serveStdio } from './stdio.js';
export {
  StatePlaneUnavailable,
  type ToolCallContext,
  type ToolFailure,
  type ToolFailureCode,
  type ToolResult,
} from './task-host.js';
export { type TaskMetadata, TaskMetadataStore } from './task-metadata.js';
export {
  describeToolInputErrors,
  FROZEN_TOOLS,
  TOOL_DESCRIPTIONS,
  type ToolInput,
  ToolInputCodecs,
  type ToolName,
  ToolShapes,
} from './tool-inputs.js';
export { KEEP_ALIVE_MS, type ProgressNote, type SendProgress, VerifyProgress } from './verify-progress.js';
