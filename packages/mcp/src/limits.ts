/**
 * Every bound of the MCP server in one place. Inputs over a bound are refused
 * with a message that names the bound; outputs over a bound are cut and say so.
 */
export const MCP_LIMITS = {
  /** One JSON-RPC message on stdin; a longer line is refused before it is parsed. */
  maxMessageBytes: 8 * 1024 * 1024,
  /** One stage_diff `diff` (the state plane stores at most 4 MiB of diff text per file). */
  maxDiffBytes: 4 * 1024 * 1024,
  maxDiffFiles: 200,
  maxGoalBytes: 8 * 1024,
  maxExplanationBytes: 16 * 1024,
  maxPathBytes: 4 * 1024,
  maxCommandBytes: 8 * 1024,
  maxIdBytes: 64,
  maxTokenBytes: 128,
  /** Text returned by diff / export / status. */
  maxOutputChars: 256 * 1024,
  /** An exported patch larger than this is refused (use `crustcore diff --export`). */
  maxExportBytes: 1024 * 1024,
  /** Tasks listed by `status` without a task id. */
  maxTasksListed: 50,
  /** Live approval tokens held by one server. */
  maxLiveTokens: 1_000,
  tokenTtlMs: 10 * 60_000,
  /** Revisits (failed verifications) a task may have: the kernel's and the state plane's budget. */
  maxRevisits: 3,
  /** How long the kernel's approval request waits for a person (a token itself lives tokenTtlMs). */
  approvalTtlMs: 24 * 60 * 60_000,
  /** An MCP task's wall-time budget: it waits for a model and a person, not a local worker. */
  taskWallTimeMs: 7 * 24 * 60 * 60_000,
  /** Verify output tails shown to the caller. */
  maxLogTailChars: 4 * 1024,
} as const;
