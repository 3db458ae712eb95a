/**
 * @crustcore/runtime: the effect executor every surface drives. It records each
 * kernel event in the ledger before acting, steps the kernel, performs the
 * returned actions through ports, and feeds outcomes back as events.
 */

// The terminal guard lives in @crustcore/safe-text, a leaf the CLI can load at start-up alone.
export {
  guardOutput,
  guardTerminalText,
  hasHiddenCharacters,
  sanitizeForTerminal,
  sanitizeName,
  unguarded,
} from '@crustcore/safe-text';
export { LedgerRecorder, LedgerRefusedFrame, type Redact } from './ledger-recorder.js';
export {
  LedgerBusyError,
  LedgerOpenFailed,
  LedgerSpine,
  type OpenSpineOptions,
  type SubmittedStep,
} from './ledger-spine.js';
export type {
  ApprovalAnswer,
  ApprovalChannel,
  ApprovalContext,
  ApprovalRequest,
  AttemptResult,
  Attempts,
  CommandRecord,
  IntegrationResult,
  Integrator,
  Narrator,
  PendingEvent,
  Recorder,
  RefusedAnswer,
  Verifier,
  VerifyOutcome,
  WorkerRun,
  Workspace,
} from './ports.js';
export {
  projectDirOf,
  type RunTaskOptions,
  type RunTaskResult,
  runTask,
  SetupError,
  TaskKillRequest,
} from './run-task.js';
export { type RuntimeIds, randomIds, randomToken } from './runtime-ids.js';
export { loadRuntimeRedactor } from './runtime-redactor.js';
export {
  type KernelSteps,
  patchVerifiedEvent,
  TaskLoop,
  type TaskOutcome,
  type TaskOutcomeKind,
  type TaskPorts,
  type TaskSpec,
  TOO_LARGE_TO_RECORD,
} from './task-loop.js';
export type { ModelUsage, ToolCallOutcome, ToolCallRequest, ToolExecution, ToolGate } from './tool-gate-types.js';
export { type VerifyProgressEvent, VerifySession, type VerifySessionOptions } from './verify-session.js';
