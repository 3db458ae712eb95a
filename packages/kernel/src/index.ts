export {
  type Action,
  type ActionKind,
  type Diagnosis,
  encodeActions,
  type FinishCause,
  type RejectReason,
  TOOL_ACTION_KINDS,
} from './actions.js';
export { type ApprovalRecordJson, Approved, type ApprovedBy, type ConsumeError, isApproved } from './approval.js';
export { assert, KernelInvariantError } from './assert.js';
export type { Brand } from './brand.js';
export {
  BUDGET_NAMES,
  type BudgetLimits,
  type BudgetName,
  type BudgetUsage,
  DEFAULT_BUDGET,
  firstExceeded,
} from './budget.js';
export {
  ApprovalIdC,
  boundedString,
  EventSeqC,
  Hash32C,
  JobIdC,
  NonNegativeInt,
  TaskIdC,
  ToolCallIdC,
} from './codecs.js';
export {
  decodeKernelEvent,
  EVENT_CODECS,
  isKernelEventKind,
  KERNEL_EVENT_KINDS,
  type KernelDecodeError,
  type KernelEvent,
  type KernelEventKind,
  type KernelEventOf,
  type TaskEvent,
} from './events.js';
export { isKernelFlag, KERNEL_FLAGS, type KernelFlag, LATEST_KERNEL_FLAGS } from './flags.js';
export { canonicalJson, hashJson, type Json, sha256Hex } from './hash.js';
export {
  type ApprovalId,
  type ArtifactId,
  type EventSeq,
  type Hash32,
  ID_PREFIX,
  type IdError,
  type IdKind,
  isHash32,
  isId,
  type JobId,
  makeId,
  parseEventSeq,
  parseHash32,
  parseId,
  type SecretId,
  type TaskId,
  type ToolCallId,
} from './ids.js';
export {
  type ApprovalRecord,
  createKernel,
  DEFAULT_KERNEL_CONFIG,
  type Kernel,
  type KernelConfig,
  type KernelState,
  type TaskRecord,
} from './kernel.js';
export {
  describeOperation,
  OPERATION_NAMES,
  type Operation,
  type OperationName,
  operationHash,
  type Reversibility,
  reversibilityOf,
} from './operation.js';
export {
  type Actor,
  type Decision,
  decide,
  type PolicyRule,
  type PolicySnapshot,
  type PolicyVerdict,
  type RiskProfile,
} from './policy.js';
export { err, isErr, isOk, type Left, ok, type Result, type Right } from './result.js';
export {
  ActorC,
  type ApprovalMode,
  ApprovalModeC,
  ApprovedByC,
  DecisionC,
  OperationC,
  PolicyRuleC,
  RiskProfileC,
} from './schema.js';
export {
  isLegalTransition,
  PHASE_OF,
  PHASES,
  type Phase,
  phaseEdges,
  phaseOf,
  TASK_STATUSES,
  TASK_TRANSITIONS,
  type TaskStatus,
  TERMINAL_STATUSES,
} from './task-status.js';
