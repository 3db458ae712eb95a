/**
 * Kernel actions: what the kernel asks the runtime to do. The kernel never
 * performs them; an effect executor does, through the adapter that holds the
 * capability, and reports the outcome back as an event. Actions are data
 * (plus `Approved` tokens, which serialize to their binding record), so the
 * ledger can store them and replay can compare them byte for byte.
 */
import type { Approved } from './approval.js';
import type { BudgetName } from './budget.js';
import { canonicalJson, type Json } from './hash.js';
import type { ApprovalId, EventSeq, Hash32, TaskId, ToolCallId } from './ids.js';
import type { Operation } from './operation.js';
import type { Phase, TaskStatus } from './task-status.js';

export interface Diagnosis {
  readonly category: string;
  readonly summary: string;
  readonly failingTests: readonly string[];
}

/** Why a task finished: one value per path to Completed, Failed or Killed. */
export type FinishCause =
  | 'applied'
  | 'task-failed'
  | 'integration-failed'
  | 'revisits-spent'
  | 'approval-denied'
  | 'budget-exhausted'
  | 'cancelled'
  | 'killed';

export type RejectReason =
  | 'unknown-task'
  | 'duplicate-task'
  | 'illegal-transition'
  | 'task-not-active'
  | 'unknown-tool-call'
  | 'duplicate-tool-call'
  | 'tool-call-not-running'
  | 'unknown-approval'
  | 'approval-already-used'
  | 'approval-expired'
  | 'approval-mismatch'
  | 'approval-needs-human'
  | 'patch-mismatch'
  | 'capacity-exceeded'
  | 'invalid-event';

export type Action =
  | { readonly kind: 'PrepareWorkspace'; readonly taskId: TaskId }
  | { readonly kind: 'PlanTask'; readonly taskId: TaskId }
  | {
      readonly kind: 'StartAttempt';
      readonly taskId: TaskId;
      readonly attempt: number;
      readonly diagnosis: Diagnosis | null;
    }
  | {
      readonly kind: 'ExecuteTool';
      readonly taskId: TaskId;
      readonly toolCallId: ToolCallId;
      readonly operation: Operation;
      /** Set when the call was approved (the approval is bound to it); null otherwise. */
      readonly opHash: Hash32 | null;
      readonly approved: Approved | null;
    }
  | { readonly kind: 'DenyTool'; readonly taskId: TaskId; readonly toolCallId: ToolCallId; readonly reason: string }
  | {
      readonly kind: 'DeliverToolResult';
      readonly taskId: TaskId;
      readonly toolCallId: ToolCallId;
      readonly receiptHash: Hash32;
    }
  | { readonly kind: 'StartVerify'; readonly taskId: TaskId; readonly patchHash: Hash32 }
  | {
      readonly kind: 'RequestApproval';
      readonly taskId: TaskId;
      readonly approvalId: ApprovalId;
      readonly subject: 'tool' | 'integrate';
      readonly operation: Operation;
      /** The kernel's own description of the operation, never the model's words. */
      readonly description: string;
      readonly opHash: Hash32;
      readonly nonce: string;
      readonly expiresAt: number;
      /** True when `--approve auto` may not answer: a person must. */
      readonly requiresHuman: boolean;
      readonly risks: readonly string[];
    }
  | {
      readonly kind: 'ApplyPatch';
      readonly taskId: TaskId;
      readonly patchHash: Hash32;
      readonly treeHash: Hash32;
      readonly approved: Approved;
    }
  | {
      readonly kind: 'BudgetExhausted';
      readonly taskId: TaskId;
      readonly budget: BudgetName;
      readonly used: number;
      readonly limit: number;
    }
  | { readonly kind: 'PauseTask'; readonly taskId: TaskId; readonly reason: string }
  | { readonly kind: 'StopTask'; readonly taskId: TaskId; readonly hard: boolean; readonly reason: string }
  | {
      readonly kind: 'TaskFinished';
      readonly taskId: TaskId;
      readonly outcome: 'completed' | 'failed' | 'killed';
      readonly reason: string;
      readonly patchHash: Hash32 | null;
      /** Why, as a value (kernel flag 2; absent in logs written before it). */
      readonly cause?: FinishCause;
    }
  | {
      readonly kind: 'StatusChanged';
      readonly taskId: TaskId;
      readonly from: TaskStatus;
      readonly to: TaskStatus;
      readonly phase: Phase;
    }
  | { readonly kind: 'SpawnSubagent'; readonly taskId: TaskId; readonly subagentId: string; readonly role: string }
  | { readonly kind: 'DenySubagent'; readonly taskId: TaskId; readonly subagentId: string; readonly reason: string }
  | {
      readonly kind: 'Rejected';
      readonly reason: RejectReason;
      readonly eventKind: string;
      readonly seq: EventSeq;
      readonly taskId: TaskId | null;
      readonly detail: string;
    };

export type ActionKind = Action['kind'];

/** Canonical JSON of an action list: what the ledger records and replay compares. */
export const encodeActions = (actions: readonly Action[]): string =>
  canonicalJson(JSON.parse(JSON.stringify(actions)) as Json);

/** Actions that make something happen in the world (as opposed to bookkeeping). */
export const TOOL_ACTION_KINDS: ReadonlySet<ActionKind> = new Set([
  'ExecuteTool',
  'StartAttempt',
  'StartVerify',
  'ApplyPatch',
  'PlanTask',
  'PrepareWorkspace',
  'SpawnSubagent',
  'DeliverToolResult',
]);
