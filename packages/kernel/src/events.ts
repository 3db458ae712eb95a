/**
 * Kernel events: everything the kernel can be told. Adapters stamp `seq`
 * (the ledger position) and `at` (milliseconds, from the runtime's clock),
 * then decode through `decodeKernelEvent`; the kernel itself never reads a
 * clock or invents an id. Field names here are the ledger's payload format:
 * renaming one changes old logs' meaning, so don't.
 */
import * as t from 'io-ts';
import { BUDGET_NAMES } from './budget.js';
import { ApprovalIdC, boundedString, EventSeqC, Hash32C, NonNegativeInt, TaskIdC, ToolCallIdC } from './codecs.js';
import { err, ok, type Result } from './result.js';
import {
  ActorC,
  ApprovalModeC,
  ApprovedByC,
  boundedArray,
  MAX_ARGV,
  MAX_LIST,
  Name,
  OperationC,
  PathText,
  PolicyRuleC,
  RiskProfileC,
} from './schema.js';

const MAX_GOAL = 16_000;
const MAX_TEXT = 4_000;

const Text = boundedString(MAX_TEXT);
const Timestamp = NonNegativeInt;

const Header = { seq: EventSeqC, at: Timestamp };

const BudgetPartial = t.partial(
  Object.fromEntries(BUDGET_NAMES.map((n) => [n, NonNegativeInt])) as Record<
    (typeof BUDGET_NAMES)[number],
    typeof NonNegativeInt
  >,
);

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
  TaskCancelled: taskEvent('TaskCancelled', { reason: Text }),
  TaskKilled: taskEvent('TaskKilled', { reason: Text }),
  TaskFailed: taskEvent('TaskFailed', { reason: Name, detail: Text }),
  /** Forget a finished task's state (one kernel lives as long as its ledger; see docs/event-log.md). */
  TaskCompacted: taskEvent('TaskCompacted', {}),
  SubagentRequested: taskEvent('SubagentRequested', { subagentId: Name, role: Name }),
  /** A person steered a working task; the text is an artifact (its hash here), for the agent, not for policy. */
  UserSteered: taskEvent('UserSteered', { textHash: Hash32C, bytes: NonNegativeInt }),
} as const;

type Codecs = typeof EVENT_CODECS;
export type KernelEventKind = keyof Codecs;
export type KernelEventOf<K extends KernelEventKind> = t.TypeOf<Codecs[K]>;
export type KernelEvent = { [K in KernelEventKind]: KernelEventOf<K> }[KernelEventKind];
/** Every event names its task: the kernel has no clock events (time arrives with each event's `at`). */
export type TaskEvent = KernelEvent;

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
