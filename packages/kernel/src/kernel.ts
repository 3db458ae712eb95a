/**
 * The kernel: `step(event) → actions`. Synchronous, deterministic, no I/O,
 * no clock, no randomness. Every decision about what may happen — task moves,
 * tool calls, approvals, budgets — is made here and only here.
 *
 * Invariants asserted by the property tests (packages/kernel/test):
 *  - a killed (or otherwise finished) task emits no new tool action;
 *  - no irreversible operation runs without a matching, unexpired, unused approval;
 *  - no completion without a verified patch for the same task;
 *  - no status change outside TASK_TRANSITIONS; revisits ≤ maxRevisits;
 *  - the same events give the same actions and the same state hash.
 * A rejected event changes nothing and yields exactly one `Rejected` action.
 * Inside, `assert` checks what must hold after each step (assert.ts): a
 * broken invariant throws instead of stepping on from an impossible state.
 *
 * Bounds (every map the kernel keeps): tasks ≤ `maxTasks`; tool calls per
 * task ≤ `maxToolCallsPerTask`; subagents per task ≤ its `subagents` budget;
 * approvals: with flag 3 only pending ones are kept, ≤ `maxPendingApprovals`
 * (settled ones are evicted); without it (old logs) one per tool call or
 * verified patch, as v1 did.
 */
import type { Action, Diagnosis, FinishCause, RejectReason } from './actions.js';
import { type Approved, mintApproved } from './approval.js';
import { assert } from './assert.js';
import {
  type BudgetLimits,
  type BudgetUsage,
  DEFAULT_BUDGET,
  emptyUsage,
  firstExceeded,
  resolveLimits,
} from './budget.js';
import type { KernelEvent, KernelEventOf } from './events.js';
import { isKernelFlag, KERNEL_FLAGS, type KernelFlag } from './flags.js';
import { hashJson, type Json } from './hash.js';
import type { ApprovalId, Hash32, TaskId, ToolCallId } from './ids.js';
import { describeOperation, type Operation, operationHash } from './operation.js';
import { decide, type PolicySnapshot } from './policy.js';
import type { ApprovalMode } from './schema.js';
import { isLegalTransition, phaseOf, type TaskStatus, TERMINAL_STATUSES } from './task-status.js';

export interface KernelConfig {
  readonly defaultLimits: BudgetLimits;
  readonly defaultMaxRevisits: number;
  readonly approvalTtlMs: number;
  readonly maxTasks: number;
  readonly maxToolCallsPerTask: number;
  /** Pending approvals held at once (flag 3); one more is refused as `capacity-exceeded`. */
  readonly maxPendingApprovals: number;
  /** Risks that `--approve auto` may never wave through: a person must look. */
  readonly humanReviewRisks: readonly string[];
  /** Behaviour flags this run uses (flags.ts); none = the behaviour of v1 logs. */
  readonly flags: readonly KernelFlag[];
}

export const DEFAULT_KERNEL_CONFIG: KernelConfig = {
  defaultLimits: DEFAULT_BUDGET,
  defaultMaxRevisits: 3,
  approvalTtlMs: 15 * 60_000,
  maxTasks: 10_000,
  maxToolCallsPerTask: 100_000,
  maxPendingApprovals: 1_024,
  // The verifier's names (@crustcore/verify HUMAN_REVIEW_RISK_KINDS); the kernel
  // cannot import it, so packages/crustcore/test/risk-names.test.ts pins the two.
  humanReviewRisks: [
    'tests-weakened',
    'ci-workflow-changed',
    'secret-like-file',
    'symlink-outside',
    'git-hook-changed',
    'embedded-git-repository',
    'agent-config-changed',
    'editor-config-changed',
    'shell-hook-changed',
    'package-manager-config-changed',
    'verify-command-changed',
    'test-runner-shadowed',
    'hidden-content',
    'dependencies-changed',
  ],
  flags: [],
};

type ToolCallState = 'awaiting-approval' | 'running' | 'done' | 'denied';
type ApprovalState = 'pending' | 'used' | 'denied' | 'expired';

/** A task as the kernel keeps it; exported (as a type) so a snapshot decoder outside the kernel can rebuild it. */
export interface TaskRecord {
  readonly id: TaskId;
  status: TaskStatus;
  pausedFrom: TaskStatus | null;
  readonly createdAt: number;
  /** Kept for the state hash; hashing it at creation would cost more than the step. */
  readonly goal: string;
  readonly policy: PolicySnapshot;
  readonly approvalMode: ApprovalMode;
  readonly limits: BudgetLimits;
  readonly maxRevisits: number;
  readonly onBudgetExhausted: 'pause' | 'fail';
  readonly approvalTtlMs: number;
  readonly usage: BudgetUsage;
  revisits: number;
  attempt: number;
  baseCommit: string | null;
  proposedPatch: Hash32 | null;
  proposedRisks: readonly string[];
  verified: { patchHash: Hash32; treeHash: Hash32; baseCommit: string; risks: readonly string[] } | null;
  readonly toolCalls: Map<ToolCallId, ToolCallState>;
  readonly subagents: Set<string>;
}

export interface ApprovalRecord {
  readonly id: ApprovalId;
  readonly taskId: TaskId;
  readonly subject: 'tool' | 'integrate';
  readonly operation: Operation;
  readonly opHash: Hash32;
  readonly nonce: string;
  readonly expiresAt: number;
  readonly requiresHuman: boolean;
  readonly toolCallId: ToolCallId | null;
  state: ApprovalState;
}

/**
 * A state to resume from (a verified snapshot, decoded outside the kernel so its codecs do not
 * weigh on the kernel bundle). The kernel adopts it as is: whoever restores must first check that
 * the restored `stateHash()` is the one the log recorded at that point.
 */
export interface KernelState {
  readonly lastAt: number;
  readonly tasks: readonly (readonly [TaskId, TaskRecord])[];
  readonly approvals: readonly (readonly [ApprovalId, ApprovalRecord])[];
}

export interface Kernel {
  step(event: KernelEvent): readonly Action[];
  /** SHA-256 of the canonical encoding of the whole state (`snapshot()`). */
  stateHash(): Hash32;
  /** The whole state as canonical-ready JSON: what `stateHash` hashes, and what a snapshot frame stores. */
  snapshot(): Json;
  /** Read-only views for adapters (status lines, inspect). */
  taskStatus(taskId: TaskId): TaskStatus | undefined;
  taskUsage(taskId: TaskId): Readonly<BudgetUsage> | undefined;
}

interface EventLike {
  readonly kind: string;
  readonly seq: number;
}

class KernelImpl implements Kernel {
  readonly #config: KernelConfig;
  readonly #flags: ReadonlySet<KernelFlag>;
  readonly #tasks: Map<TaskId, TaskRecord>;
  readonly #approvals: Map<ApprovalId, ApprovalRecord>;
  #lastAt: number;

  constructor(config: KernelConfig, state?: KernelState) {
    this.#tasks = new Map(state?.tasks);
    this.#approvals = new Map(state?.approvals);
    this.#lastAt = state?.lastAt ?? 0;
    // An unknown flag means a newer kernel wrote the log: running it with that behaviour off would replay wrong.
    for (const flag of config.flags) assert(isKernelFlag(flag), `kernel flag ${flag} is unknown to this kernel`);
    this.#config = config;
    this.#flags = new Set(config.flags);
  }

  taskStatus(taskId: TaskId): TaskStatus | undefined {
    return this.#tasks.get(taskId)?.status;
  }

  taskUsage(taskId: TaskId): Readonly<BudgetUsage> | undefined {
    const task = this.#tasks.get(taskId);
    return task === undefined ? undefined : { ...task.usage };
  }

  step(event: KernelEvent): readonly Action[] {
    if (event.kind === 'TaskCreated') {
      const created = this.#create(event);
      if (created[0]?.kind !== 'Rejected') this.#advanceClock(event.at);
      return created;
    }
    if (event.kind === 'TaskCompacted') return this.#compact(event);
    const task = this.#tasks.get(event.taskId);
    if (task === undefined) return [reject(event, 'unknown-task', 'no such task')];
    if (TERMINAL_STATUSES.has(task.status)) return [reject(event, 'task-not-active', `task is ${task.status}`)];
    const out: Action[] = [];
    this.#dispatch(task, event, out);
    // A rejected event changes nothing: every reject path returns before mutating.
    if (out.length === 1 && out[0]?.kind === 'Rejected') return out;
    this.#advanceClock(event.at);
    task.usage.wallTimeMs = Math.max(task.usage.wallTimeMs, this.#lastAt - task.createdAt);
    if (!TERMINAL_STATUSES.has(task.status) && task.status !== 'Blocked') this.#checkBudget(task, out, event.seq);
    this.#assertTask(task, out);
    return out;
  }

  /** Time never runs backwards inside the kernel, whatever the clock said. */
  #advanceClock(at: number): undefined {
    if (at > this.#lastAt) this.#lastAt = at;
  }

  /** What must hold of a task after any accepted step, and what must never. */
  #assertTask(task: TaskRecord, out: readonly Action[]): undefined {
    assert(task.revisits <= task.maxRevisits, 'revisits stay within the revisit budget');
    if (task.status === 'Blocked') assert(task.pausedFrom !== null, 'a paused task remembers where it paused');
    assert(task.pausedFrom !== 'Blocked', 'a task never pauses from a pause');
    if (task.status === 'Completed') assert(task.verified !== null, 'no completion without a verified patch');
    if (!TERMINAL_STATUSES.has(task.status)) return;
    let finished = false;
    for (const action of out) {
      if (action.kind === 'TaskFinished') finished = true;
      else assert(!finished || !STARTS_WORK.has(action.kind), 'a finished task starts no new work');
    }
  }

  #dispatch(
    task: TaskRecord,
    event: Exclude<KernelEvent, { kind: 'TaskCreated' | 'TaskCompacted' }>,
    out: Action[],
  ): undefined {
    switch (event.kind) {
      case 'WorkspaceReady':
        if (!this.#move(task, 'Planning', event, out)) return;
        task.baseCommit = event.baseCommit;
        return void out.push({ kind: 'PlanTask', taskId: task.id });
      case 'TaskPlanned':
        if (!this.#move(task, 'Running', event, out)) return;
        task.attempt = 1;
        return void out.push({ kind: 'StartAttempt', taskId: task.id, attempt: 1, diagnosis: null });
      case 'ModelOutputReceived':
        if (!isWorking(task)) return void out.push(reject(event, 'task-not-active', `task is ${task.status}`));
        task.usage.turns += 1;
        task.usage.tokens += event.inputTokens + event.outputTokens;
        task.usage.costMicros += event.costMicros;
        return;
      case 'ToolCallRequested':
        return this.#toolRequested(task, event, out);
      case 'ToolCallCompleted':
        return this.#toolCompleted(task, event, out);
      case 'CommandCompleted':
        task.usage.outputBytes += event.outputBytes;
        return;
      case 'PatchProposed':
        return this.#patchProposed(task, event, out);
      case 'PatchVerified':
        return this.#patchVerified(task, event, out);
      case 'PatchRejected':
        return this.#patchRejected(task, event, out);
      case 'ApprovalResolved':
        return this.#approvalResolved(task, event, out);
      case 'PatchApplied':
        return this.#patchApplied(task, event, out);
      case 'IntegrationFailed':
        if (task.status !== 'Integrating')
          return void out.push(reject(event, 'illegal-transition', `not integrating (${task.status})`));
        return this.#fail(task, event, `integration failed: ${event.reason}`, 'integration-failed', out);
      case 'TaskFailed':
        return this.#fail(task, event, event.reason, 'task-failed', out);
      case 'TaskCancelled':
        return this.#stop(task, event, false, event.reason, 'cancelled', out);
      case 'TaskKilled':
        return this.#stop(task, event, true, event.reason, 'killed', out);
      case 'SubagentRequested':
        return this.#subagent(task, event, out);
      case 'UserSteered':
        // Steering changes what the agent reads next, never what policy allows: recorded, no action.
        if (!isWorking(task)) return void out.push(reject(event, 'task-not-active', `task is ${task.status}`));
        return;
    }
  }

  #create(event: KernelEventOf<'TaskCreated'>): readonly Action[] {
    if (this.#tasks.has(event.taskId)) return [reject(event, 'duplicate-task', 'task already exists')];
    if (this.#tasks.size >= this.#config.maxTasks)
      return [reject(event, 'capacity-exceeded', `more than ${this.#config.maxTasks} tasks`)];
    const task: TaskRecord = {
      id: event.taskId,
      status: 'Created',
      pausedFrom: null,
      createdAt: event.at,
      goal: event.goal,
      policy: {
        profile: event.profile,
        rules: event.rules ?? [],
        canAsk: event.canAsk && event.approvalMode !== 'deny',
      },
      approvalMode: event.approvalMode,
      limits: resolveLimits(event.limits, this.#config.defaultLimits),
      maxRevisits: event.maxRevisits ?? this.#config.defaultMaxRevisits,
      onBudgetExhausted: event.onBudgetExhausted ?? 'pause',
      approvalTtlMs: event.approvalTtlMs ?? this.#config.approvalTtlMs,
      usage: emptyUsage(),
      revisits: 0,
      attempt: 0,
      baseCommit: null,
      proposedPatch: null,
      proposedRisks: [],
      verified: null,
      toolCalls: new Map(),
      subagents: new Set(),
    };
    this.#tasks.set(task.id, task);
    return [{ kind: 'PrepareWorkspace', taskId: task.id }];
  }

  /**
   * A ledger's kernel lives as long as the ledger, so a finished task's record,
   * approvals and jobs are dropped on request: the state (and the per-step
   * state hash) stays the size of the live tasks, not of the whole history.
   */
  #compact(event: KernelEventOf<'TaskCompacted'>): readonly Action[] {
    const task = this.#tasks.get(event.taskId);
    if (task === undefined) return [reject(event, 'unknown-task', 'no such task')];
    if (!TERMINAL_STATUSES.has(task.status))
      return [reject(event, 'illegal-transition', `task is ${task.status}; only a finished task is compacted`)];
    this.#tasks.delete(task.id);
    for (const [id, approval] of this.#approvals) if (approval.taskId === task.id) this.#approvals.delete(id);
    this.#advanceClock(event.at);
    return [];
  }

  /** Why a new approval cannot be registered now, if it cannot. */
  #approvalRefusal(event: EventLike & { approvalId: ApprovalId }): Action | undefined {
    if (this.#approvals.has(event.approvalId)) return reject(event, 'approval-mismatch', 'approval id reused');
    if (this.#flags.has(KERNEL_FLAGS.boundedApprovals) && this.#approvals.size >= this.#config.maxPendingApprovals) {
      return reject(event, 'capacity-exceeded', `more than ${this.#config.maxPendingApprovals} pending approvals`);
    }
    return undefined;
  }

  #toolRequested(task: TaskRecord, event: KernelEventOf<'ToolCallRequested'>, out: Action[]): undefined {
    if (!isWorking(task)) return void out.push(reject(event, 'task-not-active', `task is ${task.status}`));
    if (task.toolCalls.has(event.toolCallId))
      return void out.push(reject(event, 'duplicate-tool-call', 'tool call id reused'));
    if (task.toolCalls.size >= this.#config.maxToolCallsPerTask) {
      return void out.push(reject(event, 'capacity-exceeded', 'too many tool calls tracked'));
    }
    const refusal = this.#approvalRefusal(event);
    if (refusal !== undefined) return void out.push(refusal);
    task.usage.toolCalls += 1;
    const operation = event.operation;
    const verdict = decide(task.policy, operation, event.actor);
    if (verdict.decision === 'deny') {
      task.toolCalls.set(event.toolCallId, 'denied');
      out.push({ kind: 'DenyTool', taskId: task.id, toolCallId: event.toolCallId, reason: verdict.reason });
      return;
    }
    if (verdict.decision === 'allow') {
      task.toolCalls.set(event.toolCallId, 'running');
      // Hashing costs more than the rest of the step; only approvals need it.
      out.push(executeTool(task.id, event.toolCallId, operation, null));
      return;
    }
    task.toolCalls.set(event.toolCallId, 'awaiting-approval');
    const approval = this.#register(task, event, 'tool', operation, true, event.toolCallId);
    out.push(requestApproval(approval, [verdict.reason]));
  }

  #register(
    task: TaskRecord,
    event: { readonly approvalId: ApprovalId; readonly nonce: string; readonly at: number },
    subject: 'tool' | 'integrate',
    operation: Operation,
    requiresHuman: boolean,
    toolCallId: ToolCallId | null,
  ): ApprovalRecord {
    assert(!this.#approvals.has(event.approvalId), 'an approval id is registered once');
    const approval: ApprovalRecord = {
      id: event.approvalId,
      taskId: task.id,
      subject,
      operation,
      opHash: operationHash(operation),
      nonce: event.nonce,
      expiresAt: event.at + task.approvalTtlMs,
      requiresHuman,
      toolCallId,
      state: 'pending',
    };
    this.#approvals.set(approval.id, approval);
    return approval;
  }

  #toolCompleted(task: TaskRecord, event: KernelEventOf<'ToolCallCompleted'>, out: Action[]): undefined {
    const state = task.toolCalls.get(event.toolCallId);
    if (state === undefined) return void out.push(reject(event, 'unknown-tool-call', 'no such tool call'));
    if (state !== 'running') return void out.push(reject(event, 'tool-call-not-running', `tool call is ${state}`));
    task.toolCalls.set(event.toolCallId, 'done');
    task.usage.outputBytes += event.outputBytes;
    out.push({
      kind: 'DeliverToolResult',
      taskId: task.id,
      toolCallId: event.toolCallId,
      receiptHash: event.receiptHash,
    });
  }

  #patchProposed(task: TaskRecord, event: KernelEventOf<'PatchProposed'>, out: Action[]): undefined {
    if (task.status !== 'Running')
      return void out.push(reject(event, 'illegal-transition', `cannot verify from ${task.status}`));
    this.#mustMove(task, 'Verifying', event, out);
    task.proposedPatch = event.patchHash;
    task.proposedRisks = event.risks;
    out.push({ kind: 'StartVerify', taskId: task.id, patchHash: event.patchHash });
  }

  #patchVerified(task: TaskRecord, event: KernelEventOf<'PatchVerified'>, out: Action[]): undefined {
    if (task.status !== 'Verifying')
      return void out.push(reject(event, 'illegal-transition', `not verifying (${task.status})`));
    if (task.proposedPatch !== event.patchHash)
      return void out.push(reject(event, 'patch-mismatch', 'verified patch is not the proposed one'));
    const refusal = this.#approvalRefusal(event);
    if (refusal !== undefined) return void out.push(refusal);
    const risks = [...new Set([...task.proposedRisks, ...event.risks])].sort();
    task.verified = { patchHash: event.patchHash, treeHash: event.treeHash, baseCommit: event.baseCommit, risks };
    this.#mustMove(task, 'AwaitingApproval', event, out);
    const operation: Operation = {
      op: 'integrate',
      patchHash: event.patchHash,
      treeHash: event.treeHash,
      baseCommit: event.baseCommit,
      risks,
    };
    // Under `--approve auto` the user's standing instruction can answer, so the
    // policy may ask even with no person at the terminal.
    const canAnswer = task.approvalMode === 'auto' || task.policy.canAsk;
    const verdict = decide({ ...task.policy, canAsk: canAnswer }, operation, 'runtime');
    if (verdict.decision === 'deny')
      return this.#fail(task, event, `integration denied: ${verdict.reason}`, 'approval-denied', out);
    const requiresHuman = task.approvalMode !== 'auto' || risks.some((r) => this.#config.humanReviewRisks.includes(r));
    if (requiresHuman && !task.policy.canAsk) {
      return this.#fail(task, event, 'approval needed but no one can be asked (denied)', 'approval-denied', out);
    }
    const approval = this.#register(task, event, 'integrate', operation, requiresHuman, null);
    out.push(requestApproval(approval, risks));
  }

  #patchRejected(task: TaskRecord, event: KernelEventOf<'PatchRejected'>, out: Action[]): undefined {
    if (task.status !== 'Verifying' && task.status !== 'Running') {
      return void out.push(reject(event, 'illegal-transition', `nothing to reject in ${task.status}`));
    }
    if (event.patchHash !== undefined && task.status === 'Verifying' && event.patchHash !== task.proposedPatch) {
      return void out.push(reject(event, 'patch-mismatch', 'rejected patch is not the proposed one'));
    }
    task.proposedPatch = null;
    task.proposedRisks = [];
    if (task.revisits >= task.maxRevisits) {
      const why = `verify failed and the revisit budget (${task.maxRevisits}) is spent: ${event.category}`;
      return this.#fail(task, event, why, 'revisits-spent', out);
    }
    task.revisits += 1;
    task.attempt += 1;
    this.#mustMove(task, 'Retrying', event, out);
    this.#mustMove(task, 'Running', event, out);
    const diagnosis: Diagnosis = { category: event.category, summary: event.summary, failingTests: event.failingTests };
    out.push({ kind: 'StartAttempt', taskId: task.id, attempt: task.attempt, diagnosis });
  }

  /** Why this resolution cannot be accepted, if it cannot (checked before anything changes). */
  #resolutionRefusal(
    task: TaskRecord,
    approval: ApprovalRecord | undefined,
    event: KernelEventOf<'ApprovalResolved'>,
  ): Action | undefined {
    if (approval === undefined || approval.taskId !== task.id)
      return reject(event, 'unknown-approval', 'no such approval');
    if (approval.state === 'used' || approval.state === 'denied') {
      return reject(event, 'approval-already-used', `approval is ${approval.state}`);
    }
    if (approval.state === 'expired' || event.at > approval.expiresAt) {
      return reject(event, 'approval-expired', 'approval expired');
    }
    if (approval.nonce !== event.nonce || approval.opHash !== event.opHash) {
      return reject(event, 'approval-mismatch', 'nonce or operation hash does not match');
    }
    if (event.decision === 'granted' && event.by === 'policy-auto' && approval.requiresHuman) {
      return reject(event, 'approval-needs-human', 'this approval must come from a person');
    }
    if (approval.subject === 'integrate' && (task.status !== 'AwaitingApproval' || task.verified === null)) {
      return reject(event, 'illegal-transition', `cannot integrate from ${task.status}`);
    }
    return undefined;
  }

  #approvalResolved(task: TaskRecord, event: KernelEventOf<'ApprovalResolved'>, out: Action[]): undefined {
    const approval = this.#approvals.get(event.approvalId);
    const refusal = this.#resolutionRefusal(task, approval, event);
    if (refusal !== undefined) return void out.push(refusal);
    assert(approval !== undefined && approval.state === 'pending', 'only a pending approval is resolved');
    if (event.decision === 'denied') {
      this.#settle(approval, 'denied');
      if (approval.toolCallId === null) return this.#fail(task, event, 'approval denied', 'approval-denied', out);
      task.toolCalls.set(approval.toolCallId, 'denied');
      out.push({
        kind: 'DenyTool',
        taskId: task.id,
        toolCallId: approval.toolCallId,
        reason: 'the user denied this operation',
      });
      return;
    }
    this.#settle(approval, 'used');
    const approved: Approved = mintApproved(approval.operation, {
      approvalId: approval.id,
      taskId: task.id,
      opHash: approval.opHash,
      nonce: approval.nonce,
      expiresAt: approval.expiresAt,
      approvedBy: event.by,
    });
    if (approval.toolCallId !== null) {
      task.toolCalls.set(approval.toolCallId, 'running');
      return void out.push(executeTool(task.id, approval.toolCallId, approval.operation, approved, approval.opHash));
    }
    const verified = task.verified;
    assert(verified !== null, 'an integration approval is granted only for a verified patch');
    this.#mustMove(task, 'Integrating', event, out);
    out.push({
      kind: 'ApplyPatch',
      taskId: task.id,
      patchHash: verified.patchHash,
      treeHash: verified.treeHash,
      approved,
    });
  }

  /** An approval leaves `pending` once; with flag 3 it then leaves the map too. */
  #settle(approval: ApprovalRecord, state: Exclude<ApprovalState, 'pending'>): undefined {
    assert(approval.state === 'pending', 'an approval settles once');
    approval.state = state;
    if (this.#flags.has(KERNEL_FLAGS.boundedApprovals)) this.#approvals.delete(approval.id);
  }

  #patchApplied(task: TaskRecord, event: KernelEventOf<'PatchApplied'>, out: Action[]): undefined {
    if (task.status !== 'Integrating')
      return void out.push(reject(event, 'illegal-transition', `cannot complete from ${task.status}`));
    if (task.verified === null || task.verified.patchHash !== event.patchHash) {
      return void out.push(reject(event, 'patch-mismatch', 'applied patch is not the verified one'));
    }
    this.#mustMove(task, 'Completed', event, out);
    out.push(this.#finished(task, 'completed', `applied (${event.journalId})`, 'applied', event.patchHash));
  }

  #finished(
    task: TaskRecord,
    outcome: 'completed' | 'failed' | 'killed',
    reason: string,
    cause: FinishCause,
    patchHash: Hash32 | null,
  ): Action {
    const base = { kind: 'TaskFinished', taskId: task.id, outcome, reason, patchHash } as const;
    return this.#flags.has(KERNEL_FLAGS.finishCause) ? { ...base, cause } : base;
  }

  #subagent(task: TaskRecord, event: KernelEventOf<'SubagentRequested'>, out: Action[]): undefined {
    if (!isWorking(task)) return void out.push(reject(event, 'task-not-active', `task is ${task.status}`));
    if (task.subagents.has(event.subagentId))
      return void out.push(reject(event, 'duplicate-tool-call', 'subagent id reused'));
    if (task.usage.subagents + 1 > task.limits.subagents) {
      out.push({
        kind: 'DenySubagent',
        taskId: task.id,
        subagentId: event.subagentId,
        reason: `subagent budget (${task.limits.subagents}) spent`,
      });
      return;
    }
    const verdict = decide(task.policy, { op: 'subagent.spawn', role: event.role }, 'agent');
    if (verdict.decision !== 'allow') {
      out.push({ kind: 'DenySubagent', taskId: task.id, subagentId: event.subagentId, reason: verdict.reason });
      return;
    }
    task.usage.subagents += 1;
    task.subagents.add(event.subagentId);
    out.push({ kind: 'SpawnSubagent', taskId: task.id, subagentId: event.subagentId, role: event.role });
  }

  #checkBudget(task: TaskRecord, out: Action[], seq: number): undefined {
    const exceeded = firstExceeded(task.usage, task.limits);
    if (exceeded === undefined) return;
    out.push({
      kind: 'BudgetExhausted',
      taskId: task.id,
      budget: exceeded,
      used: task.usage[exceeded],
      limit: task.limits[exceeded],
    });
    const source = { kind: 'BudgetExhausted', seq };
    const why = `budget exhausted: ${exceeded}`;
    if (task.onBudgetExhausted === 'fail') this.#fail(task, source, why, 'budget-exhausted', out);
    else this.#pause(task, source, why, out);
  }

  /** Cancel (graceful, at the next safe point) or kill (hard): the task ends as Killed either way. */
  #stop(task: TaskRecord, source: EventLike, hard: boolean, why: string, cause: FinishCause, out: Action[]): undefined {
    this.#mustMove(task, 'Killed', source, out);
    this.#dropApprovals(task.id);
    out.push({ kind: 'StopTask', taskId: task.id, hard, reason: why });
    out.push(this.#finished(task, 'killed', `${cause}: ${why}`, cause, null));
  }

  /**
   * A task whose budget ran out under `onBudgetExhausted: 'pause'`. Some
   * statuses cannot pause (integration is under way): the refusal is recorded
   * as a `Rejected` action next to `BudgetExhausted`, as v1 logs have it.
   */
  #pause(task: TaskRecord, source: EventLike, reason: string, out: Action[]): undefined {
    const from = task.status;
    assert(from !== 'Blocked', 'a paused task is not paused again');
    // v1 set `pausedFrom` after the move, so StatusChanged said INIT (flag 1 fixes it).
    if (this.#flags.has(KERNEL_FLAGS.pausedPhase) && isLegalTransition(from, 'Blocked')) task.pausedFrom = from;
    if (!this.#move(task, 'Blocked', source, out)) return;
    task.pausedFrom = from;
    out.push({ kind: 'PauseTask', taskId: task.id, reason });
  }

  #fail(task: TaskRecord, source: EventLike, reason: string, cause: FinishCause, out: Action[]): undefined {
    this.#mustMove(task, 'Failed', source, out);
    this.#dropApprovals(task.id);
    out.push({ kind: 'StopTask', taskId: task.id, hard: false, reason });
    out.push(this.#finished(task, 'failed', reason, cause, null));
  }

  /** A move the caller has already shown legal: failing it is a kernel bug. */
  #mustMove(task: TaskRecord, to: TaskStatus, source: EventLike, out: Action[]): undefined {
    const from = task.status;
    assert(this.#move(task, to, source, out), `${from} → ${to} was checked before it was made`);
  }

  /** The only place a task's status changes. */
  #move(task: TaskRecord, to: TaskStatus, source: EventLike, out: Action[]): boolean {
    const from = task.status;
    if (!isLegalTransition(from, to)) {
      out.push(reject(source, 'illegal-transition', `${from} → ${to} is not in the catalog`, task.id));
      return false;
    }
    task.status = to;
    out.push({ kind: 'StatusChanged', taskId: task.id, from, to, phase: phaseOf(to, task.pausedFrom ?? undefined) });
    return true;
  }

  /** A finished task's pending approvals can never be used (its events are refused). */
  #dropApprovals(taskId: TaskId): undefined {
    for (const approval of this.#approvals.values()) {
      if (approval.taskId === taskId && approval.state === 'pending') this.#settle(approval, 'expired');
    }
  }

  stateHash(): Hash32 {
    return hashJson(this.snapshot());
  }

  snapshot(): Json {
    const tasks: Record<string, Json> = {};
    for (const t of byId(this.#tasks)) tasks[t.id] = taskJson(t);
    const approvals: Record<string, Json> = {};
    for (const a of byId(this.#approvals)) approvals[a.id] = { ...(a as unknown as Record<string, Json>) };
    // `jobs` stays (always empty) so v1 logs keep their state hashes.
    return { v: 1, lastAt: this.#lastAt, tasks, approvals, jobs: {} };
  }
}

/** Actions that start work: after `TaskFinished` in the same step, none may follow. */
const STARTS_WORK: ReadonlySet<Action['kind']> = new Set([
  'ExecuteTool',
  'StartAttempt',
  'StartVerify',
  'ApplyPatch',
  'PlanTask',
  'SpawnSubagent',
  'RequestApproval',
]);

function taskJson(t: TaskRecord): Json {
  return {
    status: t.status,
    pausedFrom: t.pausedFrom,
    createdAt: t.createdAt,
    goal: t.goal,
    policy: t.policy as unknown as Json,
    approvalMode: t.approvalMode,
    limits: t.limits as unknown as Json,
    maxRevisits: t.maxRevisits,
    onBudgetExhausted: t.onBudgetExhausted,
    approvalTtlMs: t.approvalTtlMs,
    usage: { ...t.usage },
    revisits: t.revisits,
    attempt: t.attempt,
    baseCommit: t.baseCommit,
    proposedPatch: t.proposedPatch,
    proposedRisks: [...t.proposedRisks],
    verified: t.verified as unknown as Json,
    toolCalls: Object.fromEntries([...t.toolCalls].sort((a, b) => cmp(a[0], b[0]))),
    subagents: [...t.subagents].sort(),
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A map's records in id order: the canonical order of the state. */
const byId = <T extends { readonly id: string }>(records: ReadonlyMap<string, T>): T[] =>
  [...records.values()].sort((a, b) => cmp(a.id, b.id));

const isWorking = (task: TaskRecord): boolean =>
  task.status === 'Planning' || task.status === 'Running' || task.status === 'Retrying';

function executeTool(
  taskId: TaskId,
  toolCallId: ToolCallId,
  operation: Operation,
  approved: Approved | null,
  opHash: Hash32 | null = null,
): Action {
  return { kind: 'ExecuteTool', taskId, toolCallId, operation, opHash, approved };
}

function reject(event: EventLike & { taskId?: TaskId }, reason: RejectReason, detail: string, taskId?: TaskId): Action {
  return {
    kind: 'Rejected',
    reason,
    eventKind: event.kind,
    seq: event.seq as Action extends { seq: infer S } ? S : never,
    taskId: taskId ?? event.taskId ?? null,
    detail,
  } as Action;
}

function requestApproval(approval: ApprovalRecord, risks: readonly string[]): Action {
  return {
    kind: 'RequestApproval',
    taskId: approval.taskId,
    approvalId: approval.id,
    subject: approval.subject,
    operation: approval.operation,
    description: describeOperation(approval.operation),
    opHash: approval.opHash,
    nonce: approval.nonce,
    expiresAt: approval.expiresAt,
    requiresHuman: approval.requiresHuman,
    risks,
  };
}

export function createKernel(config: Partial<KernelConfig> = {}, state?: KernelState): Kernel {
  return new KernelImpl({ ...DEFAULT_KERNEL_CONFIG, ...config }, state);
}
