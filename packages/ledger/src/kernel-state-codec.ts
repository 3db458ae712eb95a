/**
 * Decoding a kernel state (what `Kernel.snapshot()` returns) back into the
 * records the kernel keeps, with io-ts. It lives here, not in the kernel, so
 * the codecs do not weigh on the kernel bundle (size gates, .size-limit.json).
 *
 * Decoding proves only the shape. Whether the state is the TRUE one is proved
 * by its hash: the caller restores a kernel from it and compares the
 * restored `stateHash()` with the one the log recorded (snapshot.ts).
 */
import {
  ApprovalIdC,
  ApprovalModeC,
  type ApprovalRecord,
  BUDGET_NAMES,
  type BudgetUsage,
  createKernel,
  err,
  Hash32C,
  type Json,
  type Kernel,
  type KernelConfig,
  type KernelState,
  OperationC,
  ok,
  PolicyRuleC,
  type Result,
  RiskProfileC,
  TASK_STATUSES,
  TaskIdC,
  type TaskRecord,
  ToolCallIdC,
} from '@crustcore/kernel';
import * as t from 'io-ts';

const Finite = t.refinement(t.number, Number.isFinite, 'finite number');
const Budget = t.type(
  Object.fromEntries(BUDGET_NAMES.map((name) => [name, Finite])) as Record<
    (typeof BUDGET_NAMES)[number],
    typeof Finite
  >,
);
const StatusC = t.keyof(Object.fromEntries(TASK_STATUSES.map((s) => [s, null])) as Record<TaskRecord['status'], null>);
const ToolCallStateC = t.keyof({ 'awaiting-approval': null, running: null, done: null, denied: null });

// Exact: a task's hash covers only these fields (kernel.ts taskJson), so anything else is dropped
// rather than carried, unhashed, into the kernel.
const TaskJsonC = t.exact(
  t.type({
    status: StatusC,
    pausedFrom: t.union([StatusC, t.null]),
    createdAt: Finite,
    goal: t.string,
    policy: t.type({ profile: RiskProfileC, rules: t.readonlyArray(PolicyRuleC), canAsk: t.boolean }),
    approvalMode: ApprovalModeC,
    limits: Budget,
    maxRevisits: Finite,
    onBudgetExhausted: t.keyof({ pause: null, fail: null }),
    approvalTtlMs: Finite,
    usage: Budget,
    revisits: Finite,
    attempt: Finite,
    baseCommit: t.union([t.string, t.null]),
    proposedPatch: t.union([Hash32C, t.null]),
    proposedRisks: t.readonlyArray(t.string),
    verified: t.union([
      t.type({ patchHash: Hash32C, treeHash: Hash32C, baseCommit: t.string, risks: t.readonlyArray(t.string) }),
      t.null,
    ]),
    toolCalls: t.record(ToolCallIdC, ToolCallStateC),
    subagents: t.readonlyArray(t.string),
  }),
);

const ApprovalJsonC = t.type({
  id: ApprovalIdC,
  taskId: TaskIdC,
  subject: t.keyof({ tool: null, integrate: null }),
  operation: OperationC,
  opHash: Hash32C,
  nonce: t.string,
  expiresAt: Finite,
  requiresHuman: t.boolean,
  toolCallId: t.union([ToolCallIdC, t.null]),
  state: t.keyof({ pending: null, used: null, denied: null, expired: null }),
});

const StateJsonC = t.type({
  v: t.literal(1),
  lastAt: Finite,
  tasks: t.record(TaskIdC, TaskJsonC),
  approvals: t.record(ApprovalIdC, ApprovalJsonC),
  jobs: t.type({}),
});

type TaskJson = t.TypeOf<typeof TaskJsonC>;

function taskRecord(id: TaskRecord['id'], json: TaskJson): TaskRecord {
  const { verified, ...rest } = json;
  return {
    ...rest,
    id,
    usage: { ...json.usage } as BudgetUsage,
    verified: verified === null ? null : { ...verified },
    toolCalls: new Map(Object.entries(json.toolCalls) as [keyof typeof json.toolCalls, TaskJson['toolCalls'][never]][]),
    subagents: new Set(json.subagents),
  } as TaskRecord;
}

/** Decodes a kernel state (untrusted: it comes from a file) into the records the kernel keeps. */
export function decodeKernelState(value: unknown): Result<string, KernelState> {
  const decoded = StateJsonC.decode(value);
  if (decoded._tag === 'Left') return err('the snapshot state does not decode as a kernel state');
  const { lastAt, tasks, approvals } = decoded.right;
  for (const [id, approval] of Object.entries(approvals)) {
    if (approval.id !== id) return err(`approval ${id} is stored under another id (${approval.id})`);
  }
  return ok({
    lastAt,
    tasks: Object.entries(tasks).map(([id, json]) => [
      id as TaskRecord['id'],
      taskRecord(id as TaskRecord['id'], json),
    ]),
    approvals: Object.entries(approvals).map(([id, json]) => [
      id as ApprovalRecord['id'],
      { ...json } as ApprovalRecord,
    ]),
  });
}

/** A kernel with `config`, resumed from a decoded state; the caller checks its hash. */
export function restoreKernel(config: Partial<KernelConfig>, state: Json): Result<string, Kernel> {
  const decoded = decodeKernelState(state);
  return decoded._tag === 'Left' ? decoded : ok(createKernel(config, decoded.right));
}
