/**
 * Kernel events: everything the kernel can be told. Adapters stamp `seq`
 * (the ledger position) and `at` (milliseconds, from the runtime's clock),
 * then decode through `decodeKernelEvent`; the kernel itself never reads a
 * clock or invents an id. Field names here are the ledger's payload format:
 * renaming one changes old logs' meaning, so don't.
 */
import * as t from 'io-ts';
import { BUDGET_NAMES } from './budget.js';
import {
  ApprovalIdC,
  boundedString,
  EventSeqC,
  Hash32C,
  JobIdC,
  NonNegativeInt,
  TaskIdC,
  ToolCallIdC,
} from './codecs.js';
import { err, ok, type Result } from './result.js';

const MAX_GOAL = 16_000;
const MAX_TEXT = 4_000;
const MAX_NAME = 200;
const MAX_ARGV = 256;
const MAX_LIST = 256;

const Name = boundedString(MAX_NAME);
const Text = boundedString(MAX_TEXT);
const PathText = boundedString(4_096);
const Timestamp = NonNegativeInt;

const boundedArray = <C extends t.Mixed>(codec: C, max: number) =>
  t.refinement(t.readonlyArray(codec), (a) => a.length <= max, `array(<=${max})`);

const Header = { seq: EventSeqC, at: Timestamp };

const BudgetPartial = t.partial(
  Object.fromEntries(BUDGET_NAMES.map((n) => [n, NonNegativeInt])) as Record<
    (typeof BUDGET_NAMES)[number],
    typeof NonNegativeInt
  >,
);

export const RiskProfileC = t.keyof({ readonly: null, supervised: null, full: null });
export const ApprovalModeC = t.keyof({ auto: null, ask: null, deny: null });
export const ActorC = t.keyof({ agent: null, subagent: null, worker: null, runtime: null });
export const DecisionC = t.keyof({ allow: null, ask: null, deny: null });
export const ApprovedByC = t.keyof({ human: null, 'policy-auto': null });

export const PolicyRuleC = t.intersection([
  t.type({
    decision: DecisionC,
    op: t.keyof({
      'fs.read': null,
      'fs.write': null,
      'fs.delete': null,
      exec: null,
      'net.connect': null,
      integrate: null,
      'git.commit': null,
      'git.push': null,
      'package.install': null,
      'secret.use': null,
      'subagent.spawn': null,
      'message.user': null,
      github: null,
    }),
  }),
  t.partial({ match: Name }),
]);

export const OperationC = t.union([
  t.type({ op: t.literal('fs.read'), path: PathText }),
  t.type({ op: t.literal('fs.write'), path: PathText }),
  t.type({ op: t.literal('fs.delete'), path: PathText }),
  t.type({
    op: t.literal('exec'),
    argv: boundedArray(PathText, MAX_ARGV),
    cwd: PathText,
    profile: Name,
    recognizedRunner: t.boolean,
  }),
  t.type({ op: t.literal('net.connect'), host: Name, port: NonNegativeInt }),
  t.type({
    op: t.literal('integrate'),
    patchHash: Hash32C,
    treeHash: Hash32C,
    baseCommit: Name,
    risks: boundedArray(Name, MAX_LIST),
  }),
  t.type({ op: t.literal('git.commit'), branch: Name }),
  t.type({ op: t.literal('git.push'), remote: Name, branch: Name, force: t.boolean }),
  t.type({ op: t.literal('package.install'), manager: Name, packages: boundedArray(Name, MAX_LIST) }),
  t.type({ op: t.literal('secret.use'), handle: Name }),
  t.type({ op: t.literal('subagent.spawn'), role: Name }),
  t.type({ op: t.literal('message.user'), channel: Name }),
  t.type({ op: t.literal('github'), action: Name, repo: Name }),
]);

const taskEvent = <K extends string, P extends t.Props>(kind: K, props: P) =>
  t.type({ kind: t.literal(kind), ...Header, taskId: TaskIdC, ...props });

const taskEventWith = <K extends string, P extends t.Props, O extends t.Props>(kind: K, props: P, optional: O) =>
  t.intersection([taskEvent(kind, props), t.partial(optional)]);

export const EVENT_CODECS = {
  TaskCreated: taskEventWith(
    'TaskCreated',
    { goal: boundedString(MAX_GOAL), profile: RiskProfileC, approvalMode: ApprovalModeC, canAsk: t.boolean },
    {
      limits: BudgetPartial,
      maxRevisits: NonNegativeInt,
      onBudgetExhausted: t.keyof({ pause: null, fail: null }),
      rules: boundedArray(PolicyRuleC, MAX_LIST),
      approvalTtlMs: NonNegativeInt,
    },
  ),
  WorkspaceReady: taskEvent('WorkspaceReady', { baseCommit: Name }),
  TaskPlanned: taskEvent('TaskPlanned', { summary: Text }),
  ModelOutputReceived: taskEvent('ModelOutputReceived', {
    inputTokens: NonNegativeInt,
    outputTokens: NonNegativeInt,
    costMicros: NonNegativeInt,
  }),
  ToolCallRequested: taskEvent('ToolCallRequested', {
    toolCallId: ToolCallIdC,
    tool: Name,
    actor: ActorC,
    operation: OperationC,
    approvalId: ApprovalIdC,
    nonce: Name,
  }),
  ToolCallCompleted: taskEvent('ToolCallCompleted', {
    toolCallId: ToolCallIdC,
    ok: t.boolean,
    outputBytes: NonNegativeInt,
    receiptHash: Hash32C,
  }),
  CommandCompleted: taskEventWith(
    'CommandCompleted',
    {
      argv: boundedArray(PathText, MAX_ARGV),
      exitCode: t.union([t.Int, t.null]),
      outputBytes: NonNegativeInt,
      durationMs: NonNegativeInt,
      purpose: t.keyof({ worker: null, verify: null, baseline: null, tool: null }),
    },
    { toolCallId: ToolCallIdC, stdoutArtifact: Hash32C, stderrArtifact: Hash32C, timedOut: t.boolean },
  ),
  PatchProposed: taskEvent('PatchProposed', {
    patchHash: Hash32C,
    selfClaimedDone: t.boolean,
    filesChanged: NonNegativeInt,
    risks: boundedArray(Name, MAX_LIST),
  }),
  PatchVerified: taskEvent('PatchVerified', {
    patchHash: Hash32C,
    treeHash: Hash32C,
    baseCommit: Name,
    argv: boundedArray(PathText, MAX_ARGV),
    profile: Name,
    exitCode: t.literal(0),
    stdoutHash: Hash32C,
    stderrHash: Hash32C,
    risks: boundedArray(Name, MAX_LIST),
    approvalId: ApprovalIdC,
    nonce: Name,
  }),
  PatchRejected: taskEventWith(
    'PatchRejected',
    { category: Name, summary: Text, failingTests: boundedArray(Name, MAX_LIST) },
    { patchHash: Hash32C },
  ),
  ApprovalResolved: taskEvent('ApprovalResolved', {
    approvalId: ApprovalIdC,
    decision: t.keyof({ granted: null, denied: null }),
    by: ApprovedByC,
    nonce: Name,
    opHash: Hash32C,
  }),
  PatchApplied: taskEvent('PatchApplied', { patchHash: Hash32C, journalId: Name }),
  IntegrationFailed: taskEvent('IntegrationFailed', { reason: Name, detail: Text }),
  TaskPaused: taskEvent('TaskPaused', { reason: Text }),
  TaskResumed: taskEvent('TaskResumed', {}),
  TaskCancelled: taskEvent('TaskCancelled', { reason: Text }),
  TaskKilled: taskEvent('TaskKilled', { reason: Text }),
  TaskFailed: taskEvent('TaskFailed', { reason: Name, detail: Text }),
  /** Forget a finished task's state (one kernel lives as long as its ledger; see docs/event-log.md). */
  TaskCompacted: taskEvent('TaskCompacted', {}),
  UserMessage: taskEvent('UserMessage', { steer: t.boolean, textHash: Hash32C }),
  SubagentRequested: taskEvent('SubagentRequested', { subagentId: Name, role: Name }),
  JobQueued: taskEvent('JobQueued', { jobId: JobIdC, maxAttempts: NonNegativeInt }),
  JobLeased: taskEvent('JobLeased', {
    jobId: JobIdC,
    owner: Name,
    leaseExpiresAt: Timestamp,
    fencingToken: NonNegativeInt,
  }),
  JobHeartbeat: taskEvent('JobHeartbeat', {
    jobId: JobIdC,
    owner: Name,
    leaseExpiresAt: Timestamp,
    fencingToken: NonNegativeInt,
  }),
  JobFinished: taskEvent('JobFinished', {
    jobId: JobIdC,
    fencingToken: NonNegativeInt,
    outcome: t.keyof({ completed: null, failed: null, killed: null }),
    retryable: t.boolean,
  }),
  Tick: t.type({ kind: t.literal('Tick'), ...Header }),
} as const;

type Codecs = typeof EVENT_CODECS;
export type KernelEventKind = keyof Codecs;
export type KernelEventOf<K extends KernelEventKind> = t.TypeOf<Codecs[K]>;
export type KernelEvent = { [K in KernelEventKind]: KernelEventOf<K> }[KernelEventKind];
export type TaskEvent = Exclude<KernelEvent, { kind: 'Tick' }>;

export const KERNEL_EVENT_KINDS = Object.keys(EVENT_CODECS) as readonly KernelEventKind[];
const KIND_SET: ReadonlySet<string> = new Set(KERNEL_EVENT_KINDS);

export const isKernelEventKind = (kind: string): kind is KernelEventKind => KIND_SET.has(kind);

export interface KernelDecodeError {
  readonly _tag: 'KernelDecodeError';
  readonly kind: string | undefined;
  /** Paths and expectations of the first few failures, for people. */
  readonly problems: readonly string[];
}

function describeErrors(errors: t.Errors): string[] {
  return errors.slice(0, 5).map((e) => {
    const path = e.context
      .map((c) => c.key)
      .filter((k) => k !== '' && !/^\d+$/.test(k))
      .join('.');
    return `${path || '(root)'}: ${e.message ?? `expected ${e.context[e.context.length - 1]?.type.name ?? 'valid value'}`}`;
  });
}

/** Decodes untrusted input into a kernel event, or says why not. */
export function decodeKernelEvent(value: unknown): Result<KernelDecodeError, KernelEvent> {
  const kind = typeof value === 'object' && value !== null ? (value as { kind?: unknown }).kind : undefined;
  if (typeof kind !== 'string' || !isKernelEventKind(kind)) {
    return err({
      _tag: 'KernelDecodeError',
      kind: typeof kind === 'string' ? kind : undefined,
      problems: ['kind: unknown event kind'],
    });
  }
  const codec = EVENT_CODECS[kind] as t.Decoder<unknown, KernelEvent>;
  const decoded = codec.decode(value);
  return decoded._tag === 'Right'
    ? ok(decoded.right)
    : err({ _tag: 'KernelDecodeError', kind, problems: describeErrors(decoded.left) });
}
