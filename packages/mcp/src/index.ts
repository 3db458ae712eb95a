/**
 * @crustcore/mcp — a stdio MCP server with a small frozen tool set over the
 * state plane and the verify package: models create, stage and verify;
 * approval comes from a person (a one-time token from `crustcore mcp-token`).
 * See docs/mcp.md.
 */
export { type ApprovalGrant, ApprovalTokenBook, type TokenRefusal } from './approval-tokens.js';
export { MCP_LIMITS } from './limits.js';
export { createMcpServer, type RedactText, SERVER_NAME } from './server.js';
export {
  McpService,
  type McpServiceOptions,
  type ToolFailure,
  type ToolFailureCode,
  type ToolResult,
} from './service.js';
export { type PlannedFile, planStagedFiles, renderFilePatch, type StagingRefusal } from './staging.js';
export { MessageSizeGuard, oversizedReply, recoverRequestId, serveStdio } from './stdio.js';
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
export { patchFromStaged, type VerificationFailure, verifyStaged } from './verification.js';
