/**
 * The kernel: `step(event) → actions`. Synchronous, deterministic, no I/O,
 * no clock, no randomness. Every decision about what may happen — task moves,
 * tool calls, approvals, budgets, leases — is made here and only here.
 *
 * Invariants asserted by the property tests (packages/kernel/test):
 *  - a killed (or otherwise finished) task emits no new tool action;
 *  - no irreversible operation runs without a matching, unexpired, unused approval;
 *  - no completion without a verified patch for the same task;
 *  - no status change outside TASK_TRANSITIONS; revisits ≤ maxRevisits;
 *  - the same events give the same actions and the same state hash.
 * A rejected event changes nothing and yields exactly one `Rejected` action.
 */
import type { Action, Diagnosis, RejectReason } from './actions.js';
import { type Approved, mintApproved } from './approval.js';
import {
  type BudgetLimits,
  type BudgetUsage,
  DEFAULT_BUDGET,
  emptyUsage,
  firstExceeded,
  resolveLimits,
} from './budget.js';
import type { KernelEvent, KernelEventOf, TaskEvent } from './events.js';
import { hashJson, type Json } from './hash.js';
import type { ApprovalId, Hash32, JobId, TaskId, ToolCallId } from './ids.js';
import { DEFAULT_RETRY_POLICY, type JobStatus, type RetryPolicy, retryDelayMs } from './job-status.js';
import { describeOperation, type Operation, operationHash } from './operation.js';
import { type Actor, decide, type PolicyRule, type PolicySnapshot, type RiskProfile } from './policy.js';
import { isLegalTransition, phaseOf, type TaskStatus, TERMINAL_STATUSES } from './task-status.js';

export interface KernelConfig {
  readonly defaultLimits: BudgetLimits;
  readonly defaultMaxRevisits: number;
  readonly approvalTtlMs: number;
  readonly maxTasks: number;
  readonly maxToolCallsPerTask: number;
  readonly retryPolicy: RetryPolicy;
  /** Risks that `--approve auto` may never wave through: a person must look. */
  readonly humanReviewRisks: readonly string[];
}

export const DEFAULT_KERNEL_CONFIG: KernelConfig = {
  defaultLimits: DEFAULT_BUDGET,
  defaultMaxRevisits: 3,
  approvalTtlMs: 15 * 60_000,
  maxTasks: 10_000,
  maxToolCallsPerTask: 100_000,
  retryPolicy: DEFAULT_RETRY_POLICY,
  // The verifier's names (@crustcore/verify HUMAN_REVIEW_RISK_KINDS); the kernel
  // cannot import it, so packages/crustcore/test/risk-names.test.ts pins the two.
  humanReviewRisks: [
    'tests-weakened',
    'ci-workflow-changed',
    'secret-like-file',
    'symlink-outside',
    'dependencies-changed',
  ],
};

type ToolCallState = 'awaiting-approval' | 'running' | 'done' | 'denied';
type ApprovalState = 'pending' | 'used' | 'denied' | 'expired';

interface TaskRecord {
  readonly id: TaskId;
  status: TaskStatus;
  pausedFrom: TaskStatus | null;
  readonly createdAt: number;
  /** Kept for the state hash; hashing it at creation would cost more than the step. */
  readonly goal: string;
  readonly policy: PolicySnapshot;
  readonly approvalMode: 'auto' | 'ask' | 'deny';
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

interface ApprovalRecord {
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

interface JobRecord {
  readonly id: JobId;
  readonly taskId: TaskId;
  status: JobStatus;
  owner: string | null;
  leaseExpiresAt: number;
  fencingToken: number;
  attempt: number;
  readonly maxAttempts: number;
}

export interface Kernel {
  step(event: KernelEvent): readonly Action[];
  /** SHA-256 of the canonical encoding of the whole state. */
  stateHash(): Hash32;
  /** Read-only views for adapters (status lines, inspect). */
  taskStatus(taskId: TaskId): TaskStatus | undefined;
  taskUsage(taskId: TaskId): Readonly<BudgetUsage> | undefined;
}

class KernelImpl implements Kernel {
  readonly #config: KernelConfig;
  readonly #tasks = new Map<TaskId, TaskRecord>();
  readonly #approvals = new Map<ApprovalId, ApprovalRecord>();
  readonly #jobs = new Map<JobId, JobRecord>();
  #lastAt = 0;

  constructor(config: KernelConfig) {
    this.#config = config;
  }

  taskStatus(taskId: TaskId): TaskStatus | undefined {
    return this.#tasks.get(taskId)?.status;
  }

  taskUsage(taskId: TaskId): Readonly<BudgetUsage> | undefined {
    const task = this.#tasks.get(taskId);
    return task === undefined ? undefined : { ...task.usage };
  }

  step(event: KernelEvent): readonly Action[] {
    if (event.kind === 'Tick') {
      this.#advanceClock(event.at);
      return this.#tick(event.seq);
    }
    if (event.kind === 'TaskCreated') {
      const created = this.#create(event);
      if (created[0]?.kind !== 'Rejected') this.#advanceClock(event.at);
      return created;
    }
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
    return out;
  }

  /** Time never runs backwards inside the kernel, whatever the clock said. */
  #advanceClock(at: number): undefined {
    if (at > this.#lastAt) this.#lastAt = at;
  }

  #dispatch(task: TaskRecord, event: TaskEvent, out: Action[]): undefined {
    switch (event.kind) {
      case 'TaskCreated':
        out.push(reject(event, 'duplicate-task', 'task already exists'));
        return;
      case 'WorkspaceReady':
        if (!this.#move(task, 'Planning', event, out)) return;
        task.baseCommit = event.baseCommit;
        out.push({ kind: 'PlanTask', taskId: task.id });
        return;
      case 'TaskPlanned':
        if (!this.#move(task, 'Running', event, out)) return;
        task.attempt = 1;
        out.push({ kind: 'StartAttempt', taskId: task.id, attempt: 1, diagnosis: null });
        return;
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
        if (task.status !== 'Running')
          return void out.push(reject(event, 'illegal-transition', `cannot verify from ${task.status}`));
        this.#move(task, 'Verifying', event, out);
        task.proposedPatch = event.patchHash;
        task.proposedRisks = event.risks;
        out.push({ kind: 'StartVerify', taskId: task.id, patchHash: event.patchHash });
        return;
      case 'PatchVerified':
        return this.#patchVerified(task, event, out);
      case 'PatchRejected':
        return this.#patchRejected(task, event, out);
      case 'ApprovalResolved':
        return this.#approvalResolved(task, event, out);
      case 'PatchApplied':
        if (task.status !== 'Integrating')
          return void out.push(reject(event, 'illegal-transition', `cannot complete from ${task.status}`));
        if (task.verified === null || task.verified.patchHash !== event.patchHash) {
          return void out.push(reject(event, 'patch-mismatch', 'applied patch is not the verified one'));
        }
        this.#move(task, 'Completed', event, out);
        out.push({
          kind: 'TaskFinished',
          taskId: task.id,
          outcome: 'completed',
          reason: `applied (${event.journalId})`,
          patchHash: event.patchHash,
        });
        return;
      case 'IntegrationFailed':
        if (task.status !== 'Integrating')
          return void out.push(reject(event, 'illegal-transition', `not integrating (${task.status})`));
        return this.#fail(task, event, `integration failed: ${event.reason}`, out);
      case 'TaskFailed':
        return this.#fail(task, event, event.reason, out);
      case 'TaskPaused':
        if (task.status === 'Blocked') return void out.push(reject(event, 'illegal-transition', 'already paused'));
        return this.#pause(task, event, event.reason, out);
      case 'TaskResumed': {
        if (task.status !== 'Blocked' || task.pausedFrom === null) {
          return void out.push(reject(event, 'illegal-transition', `not paused (${task.status})`));
        }
        const exceeded = firstExceeded(task.usage, task.limits);
        if (exceeded !== undefined)
          return void out.push(reject(event, 'illegal-transition', `budget ${exceeded} still exhausted`));
        const back = task.pausedFrom;
        this.#move(task, back, event, out);
        task.pausedFrom = null;
        out.push({ kind: 'ResumeTask', taskId: task.id, status: back });
        return;
      }
      case 'TaskCancelled':
        return this.#stop(task, event, false, event.reason, `cancelled: ${event.reason}`, out);
      case 'TaskKilled':
        return this.#stop(task, event, true, event.reason, `killed: ${event.reason}`, out);
      case 'UserMessage':
        out.push(
          event.steer
            ? { kind: 'SteerTask', taskId: task.id, textHash: event.textHash }
            : { kind: 'QueueUserMessage', taskId: task.id, textHash: event.textHash },
        );
        return;
      case 'SubagentRequested':
        return this.#subagent(task, event, out);
      case 'JobQueued':
      case 'JobLeased':
      case 'JobHeartbeat':
      case 'JobFinished':
        return this.#job(task, event, out);
    }
  }

  #create(event: KernelEventOf<'TaskCreated'>): readonly Action[] {
    if (this.#tasks.has(event.taskId)) return [reject(event, 'duplicate-task', 'task already exists')];
    if (this.#tasks.size >= this.#config.maxTasks)
      return [reject(event, 'capacity-exceeded', `more than ${this.#config.maxTasks} tasks`)];
    const policy: PolicySnapshot = {
      profile: event.profile as RiskProfile,
      rules: (event.rules ?? []) as readonly PolicyRule[],
      canAsk: event.canAsk && event.approvalMode !== 'deny',
    };
    const task: TaskRecord = {
      id: event.taskId,
      status: 'Created',
      pausedFrom: null,
      createdAt: event.at,
      goal: event.goal,
      policy,
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

  #toolRequested(task: TaskRecord, event: KernelEventOf<'ToolCallRequested'>, out: Action[]): undefined {
    if (!isWorking(task)) return void out.push(reject(event, 'task-not-active', `task is ${task.status}`));
    if (task.toolCalls.has(event.toolCallId))
      return void out.push(reject(event, 'duplicate-tool-call', 'tool call id reused'));
    if (task.toolCalls.size >= this.#config.maxToolCallsPerTask) {
      return void out.push(reject(event, 'capacity-exceeded', 'too many tool calls tracked'));
    }
    if (this.#approvals.has(event.approvalId))
      return void out.push(reject(event, 'approval-mismatch', 'approval id reused'));
    task.usage.toolCalls += 1;
    const operation = event.operation as Operation;
    const verdict = decide(task.policy, operation, event.actor as Actor);
    if (verdict.decision === 'deny') {
      task.toolCalls.set(event.toolCallId, 'denied');
      out.push({ kind: 'DenyTool', taskId: task.id, toolCallId: event.toolCallId, reason: verdict.reason });
      return;
    }
    if (verdict.decision === 'allow') {
      task.toolCalls.set(event.toolCallId, 'running');
      out.push({
        kind: 'ExecuteTool',
        taskId: task.id,
        toolCallId: event.toolCallId,
        operation,
        // Hashing costs more than the rest of the step; only approvals need it.
        opHash: null,
        approved: null,
      });
      return;
    }
    task.toolCalls.set(event.toolCallId, 'awaiting-approval');
    const approval: ApprovalRecord = {
      id: event.approvalId,
      taskId: task.id,
      subject: 'tool',
      operation,
      opHash: operationHash(operation),
      nonce: event.nonce,
      expiresAt: event.at + task.approvalTtlMs,
      requiresHuman: true,
      toolCallId: event.toolCallId,
      state: 'pending',
    };
    this.#approvals.set(approval.id, approval);
    out.push(requestApproval(approval, [verdict.reason]));
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

  #patchVerified(task: TaskRecord, event: KernelEventOf<'PatchVerified'>, out: Action[]): undefined {
    if (task.status !== 'Verifying')
      return void out.push(reject(event, 'illegal-transition', `not verifying (${task.status})`));
    if (task.proposedPatch !== event.patchHash)
      return void out.push(reject(event, 'patch-mismatch', 'verified patch is not the proposed one'));
    if (this.#approvals.has(event.approvalId))
      return void out.push(reject(event, 'approval-mismatch', 'approval id reused'));
    const risks = [...new Set([...task.proposedRisks, ...event.risks])].sort();
    task.verified = { patchHash: event.patchHash, treeHash: event.treeHash, baseCommit: event.baseCommit, risks };
    this.#move(task, 'AwaitingApproval', event, out);
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
    if (verdict.decision === 'deny') return this.#fail(task, event, `integration denied: ${verdict.reason}`, out);
    const requiresHuman = task.approvalMode !== 'auto' || risks.some((r) => this.#config.humanReviewRisks.includes(r));
    if (requiresHuman && !task.policy.canAsk) {
      return this.#fail(task, event, 'approval needed but no one can be asked (denied)', out);
    }
    const approval: ApprovalRecord = {
      id: event.approvalId,
      taskId: task.id,
      subject: 'integrate',
      operation,
      opHash: operationHash(operation),
      nonce: event.nonce,
      expiresAt: event.at + task.approvalTtlMs,
      requiresHuman,
      toolCallId: null,
      state: 'pending',
    };
    this.#approvals.set(approval.id, approval);
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
      return this.#fail(
        task,
        event,
        `verify failed and the revisit budget (${task.maxRevisits}) is spent: ${event.category}`,
        out,
      );
    }
    task.revisits += 1;
    task.attempt += 1;
    this.#move(task, 'Retrying', event, out);
    this.#move(task, 'Running', event, out);
    const diagnosis: Diagnosis = { category: event.category, summary: event.summary, failingTests: event.failingTests };
    out.push({ kind: 'StartAttempt', taskId: task.id, attempt: task.attempt, diagnosis });
  }

  #approvalResolved(task: TaskRecord, event: KernelEventOf<'ApprovalResolved'>, out: Action[]): undefined {
    const approval = this.#approvals.get(event.approvalId);
    if (approval === undefined || approval.taskId !== task.id)
      return void out.push(reject(event, 'unknown-approval', 'no such approval'));
    if (approval.state === 'used' || approval.state === 'denied') {
      return void out.push(reject(event, 'approval-already-used', `approval is ${approval.state}`));
    }
    if (approval.state === 'expired' || event.at > approval.expiresAt) {
      return void out.push(reject(event, 'approval-expired', 'approval expired'));
    }
    if (approval.nonce !== event.nonce || approval.opHash !== event.opHash) {
      return void out.push(reject(event, 'approval-mismatch', 'nonce or operation hash does not match'));
    }
    if (event.decision === 'granted' && event.by === 'policy-auto' && approval.requiresHuman) {
      return void out.push(reject(event, 'approval-needs-human', 'this approval must come from a person'));
    }
    const integrating = approval.subject === 'integrate';
    if (integrating && (task.status !== 'AwaitingApproval' || task.verified === null)) {
      return void out.push(reject(event, 'illegal-transition', `cannot integrate from ${task.status}`));
    }
    if (event.decision === 'denied') {
      approval.state = 'denied';
      if (approval.subject === 'tool' && approval.toolCallId !== null) {
        task.toolCalls.set(approval.toolCallId, 'denied');
        out.push({
          kind: 'DenyTool',
          taskId: task.id,
          toolCallId: approval.toolCallId,
          reason: 'the user denied this operation',
        });
        return;
      }
      return this.#fail(task, event, 'approval denied', out);
    }
    approval.state = 'used';
    const approved: Approved = mintApproved(approval.operation, {
      approvalId: approval.id,
      taskId: task.id,
      opHash: approval.opHash,
      nonce: approval.nonce,
      expiresAt: approval.expiresAt,
      approvedBy: event.by,
    });
    if (approval.subject === 'tool' && approval.toolCallId !== null) {
      task.toolCalls.set(approval.toolCallId, 'running');
      out.push({
        kind: 'ExecuteTool',
        taskId: task.id,
        toolCallId: approval.toolCallId,
        operation: approval.operation,
        opHash: approval.opHash,
        approved,
      });
      return;
    }
    const verified = task.verified;
    if (verified === null) return;
    this.#move(task, 'Integrating', event, out);
    out.push({
      kind: 'ApplyPatch',
      taskId: task.id,
      patchHash: verified.patchHash,
      treeHash: verified.treeHash,
      approved,
    });
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

  #job(
    task: TaskRecord,
    event: KernelEventOf<'JobQueued' | 'JobLeased' | 'JobHeartbeat' | 'JobFinished'>,
    out: Action[],
  ): undefined {
    if (event.kind === 'JobQueued') {
      if (this.#jobs.has(event.jobId)) return void out.push(reject(event, 'invalid-event', 'job already queued'));
      this.#jobs.set(event.jobId, {
        id: event.jobId,
        taskId: task.id,
        status: 'Queued',
        owner: null,
        leaseExpiresAt: 0,
        fencingToken: 0,
        attempt: 1,
        maxAttempts: Math.max(1, event.maxAttempts),
      });
      return;
    }
    const job = this.#jobs.get(event.jobId);
    if (job === undefined || job.taskId !== task.id) return void out.push(reject(event, 'unknown-job', 'no such job'));
    switch (event.kind) {
      case 'JobLeased':
        if (job.status !== 'Queued' && job.status !== 'Retrying')
          return void out.push(reject(event, 'illegal-transition', `job is ${job.status}`));
        if (event.fencingToken <= job.fencingToken)
          return void out.push(reject(event, 'stale-fencing-token', 'fencing token must increase'));
        job.status = 'Leased';
        job.owner = event.owner;
        job.leaseExpiresAt = event.leaseExpiresAt;
        job.fencingToken = event.fencingToken;
        out.push({ kind: 'RunJob', taskId: task.id, jobId: job.id, fencingToken: job.fencingToken });
        return;
      case 'JobHeartbeat':
        if (job.fencingToken !== event.fencingToken || job.owner !== event.owner) {
          return void out.push(reject(event, 'stale-fencing-token', 'lease was granted to someone else'));
        }
        if (job.status !== 'Leased' && job.status !== 'Running' && job.status !== 'HeartbeatMissing') {
          return void out.push(reject(event, 'job-not-leased', `job is ${job.status}`));
        }
        job.status = 'Running';
        job.leaseExpiresAt = event.leaseExpiresAt;
        return;
      case 'JobFinished':
        if (job.fencingToken !== event.fencingToken)
          return void out.push(reject(event, 'stale-fencing-token', 'lease was granted to someone else'));
        if (job.status !== 'Leased' && job.status !== 'Running' && job.status !== 'HeartbeatMissing') {
          return void out.push(reject(event, 'job-not-leased', `job is ${job.status}`));
        }
        if (event.outcome === 'completed') job.status = 'Completed';
        else if (event.outcome === 'killed') job.status = 'Killed';
        else if (event.retryable) this.#retryJob(job, out, 'job failed');
        else {
          job.status = 'Failed';
          out.push({ kind: 'AbandonJob', taskId: job.taskId, jobId: job.id, reason: 'job failed (not retryable)' });
        }
        return;
    }
  }

  #retryJob(job: JobRecord, out: Action[], why: string): undefined {
    if (job.attempt >= Math.min(job.maxAttempts, this.#config.retryPolicy.maxAttempts)) {
      job.status = 'Failed';
      out.push({
        kind: 'AbandonJob',
        taskId: job.taskId,
        jobId: job.id,
        reason: `${why}; attempts spent (${job.attempt})`,
      });
      return;
    }
    job.attempt += 1;
    job.status = 'Retrying';
    job.owner = null;
    out.push({
      kind: 'RequeueJob',
      taskId: job.taskId,
      jobId: job.id,
      attempt: job.attempt,
      delayMs: retryDelayMs(this.#config.retryPolicy, job.attempt),
    });
  }

  #tick(seq: number): readonly Action[] {
    const at = this.#lastAt;
    const out: Action[] = [];
    for (const approval of this.#approvals.values()) {
      if (approval.state !== 'pending' || at <= approval.expiresAt) continue;
      approval.state = 'expired';
      const task = this.#tasks.get(approval.taskId);
      out.push({ kind: 'ApprovalExpired', taskId: approval.taskId, approvalId: approval.id });
      if (task === undefined || TERMINAL_STATUSES.has(task.status)) continue;
      if (approval.subject === 'tool' && approval.toolCallId !== null) {
        task.toolCalls.set(approval.toolCallId, 'denied');
        out.push({
          kind: 'DenyTool',
          taskId: task.id,
          toolCallId: approval.toolCallId,
          reason: 'approval expired unanswered (denied)',
        });
      } else if (task.status === 'AwaitingApproval') {
        this.#fail(task, { kind: 'Tick', seq }, 'approval expired unanswered (denied)', out);
      }
    }
    for (const job of this.#jobs.values()) {
      if (
        (job.status === 'Leased' || job.status === 'Running' || job.status === 'HeartbeatMissing') &&
        at > job.leaseExpiresAt
      ) {
        job.status = 'Expired';
        this.#retryJob(job, out, 'lease expired');
      }
    }
    for (const task of this.#tasks.values()) {
      if (TERMINAL_STATUSES.has(task.status) || task.status === 'Blocked') continue;
      task.usage.wallTimeMs = Math.max(task.usage.wallTimeMs, at - task.createdAt);
      this.#checkBudget(task, out, seq);
    }
    return out;
  }

  #checkBudget(task: TaskRecord, out: Action[], seq?: number): undefined {
    const exceeded = firstExceeded(task.usage, task.limits);
    if (exceeded === undefined) return;
    out.push({
      kind: 'BudgetExhausted',
      taskId: task.id,
      budget: exceeded,
      used: task.usage[exceeded],
      limit: task.limits[exceeded],
    });
    const source = { kind: 'BudgetExhausted', seq: seq ?? 0 };
    if (task.onBudgetExhausted === 'fail') this.#fail(task, source, `budget exhausted: ${exceeded}`, out);
    else this.#pause(task, source, `budget exhausted: ${exceeded}`, out);
  }

  /** Cancel (graceful, at the next safe point) or kill (hard): the task ends as Killed either way. */
  #stop(task: TaskRecord, source: EventLike, hard: boolean, why: string, outcome: string, out: Action[]): undefined {
    if (!this.#move(task, 'Killed', source, out)) return;
    this.#dropPendingApprovals(task.id);
    out.push({ kind: 'StopTask', taskId: task.id, hard, reason: why });
    out.push({ kind: 'TaskFinished', taskId: task.id, outcome: 'killed', reason: outcome, patchHash: null });
  }

  #pause(task: TaskRecord, source: EventLike, reason: string, out: Action[]): undefined {
    const from = task.status;
    if (!this.#move(task, 'Blocked', source, out)) return;
    task.pausedFrom = from;
    out.push({ kind: 'PauseTask', taskId: task.id, reason });
  }

  #fail(task: TaskRecord, source: EventLike, reason: string, out: Action[]): undefined {
    if (!this.#move(task, 'Failed', source, out)) return;
    this.#dropPendingApprovals(task.id);
    out.push({ kind: 'StopTask', taskId: task.id, hard: false, reason });
    out.push({ kind: 'TaskFinished', taskId: task.id, outcome: 'failed', reason, patchHash: null });
  }

  /** The only place a task's status changes. */
  #move(task: TaskRecord, to: TaskStatus, source: EventLike, out: Action[]): boolean {
    const from = task.status;
    if (
      !isLegalTransition(from, to) ||
      (from === 'Blocked' && to !== task.pausedFrom && to !== 'Failed' && to !== 'Killed')
    ) {
      out.push(reject(source, 'illegal-transition', `${from} → ${to} is not in the catalog`, task.id));
      return false;
    }
    task.status = to;
    out.push({ kind: 'StatusChanged', taskId: task.id, from, to, phase: phaseOf(to, task.pausedFrom ?? undefined) });
    return true;
  }

  #dropPendingApprovals(taskId: TaskId): undefined {
    for (const approval of this.#approvals.values()) {
      if (approval.taskId === taskId && approval.state === 'pending') approval.state = 'expired';
    }
  }

  stateHash(): Hash32 {
    const tasks: Record<string, Json> = {};
    for (const t of [...this.#tasks.values()].sort((a, b) => cmp(a.id, b.id))) {
      tasks[t.id] = {
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
    const approvals: Record<string, Json> = {};
    for (const a of [...this.#approvals.values()].sort((x, y) => cmp(x.id, y.id))) {
      approvals[a.id] = { ...(a as unknown as Record<string, Json>) };
    }
    const jobs: Record<string, Json> = {};
    for (const j of [...this.#jobs.values()].sort((x, y) => cmp(x.id, y.id))) {
      jobs[j.id] = { ...(j as unknown as Record<string, Json>) };
    }
    return hashJson({ v: 1, lastAt: this.#lastAt, tasks, approvals, jobs });
  }
}

interface EventLike {
  readonly kind: string;
  readonly seq: number;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const isWorking = (task: TaskRecord): boolean =>
  task.status === 'Planning' || task.status === 'Running' || task.status === 'Retrying';

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

export function createKernel(config: Partial<KernelConfig> = {}): Kernel {
  return new KernelImpl({ ...DEFAULT_KERNEL_CONFIG, ...config });
}
