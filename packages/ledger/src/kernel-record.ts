/**
 * The runtime convention for kernel events, in one place: append the event
 * as a frame (kind = event.kind, payload = the event, seq/at = the frame's),
 * wait until it is durable, step the kernel, then append `kernel.actions`
 * `{for, actions, state}`. `inspect --replay` checks logs written this way,
 * with `kernelReplay` (the real kernel) or any ReplayKernel.
 *
 * Steps must be serialized: no other kernel event may be appended between an
 * event and its actions (other frames may).
 */
import {
  BUDGET_NAMES,
  createKernel,
  DEFAULT_KERNEL_CONFIG,
  decodeKernelEvent,
  encodeActions,
  err,
  isKernelEventKind,
  isKernelFlag,
  type Json,
  type Kernel,
  type KernelConfig,
  type KernelEvent,
  LATEST_KERNEL_FLAGS,
  ok,
  type Result,
} from '@crustcore/kernel';
import * as t from 'io-ts';
import type { Actor, Visibility } from './frame.js';
import { restoreKernel } from './kernel-state-codec.js';
import { ACTIONS_KIND } from './kinds.js';
import type { AppendAck, AppendError, LedgerWriter } from './log-writer.js';
import type { ReplayKernel } from './replay.js';

/**
 * Behaviour flags a `kernel.open` frame may list, by number. A number is never
 * reused or renumbered: an old log means what its flags said when it was written.
 * Replay refuses a flag it does not know (a newer CrustCore wrote the log).
 */
export const KERNEL_BEHAVIOUR_FLAGS: Readonly<Record<number, string>> = {
  1: 'shared-kernel: one kernel steps every task of the ledger, in every process',
  2: 'task-compaction: finished tasks are dropped from the kernel state by TaskCompacted',
};

/** The flags this version writes when it opens a new kernel. */
export const CURRENT_BEHAVIOUR_FLAGS: readonly number[] = [1, 2];

const Count = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 0, 'count');

const KernelConfigC = t.type({
  defaultLimits: t.type(
    Object.fromEntries(BUDGET_NAMES.map((name) => [name, Count])) as Record<
      (typeof BUDGET_NAMES)[number],
      typeof Count
    >,
  ),
  defaultMaxRevisits: Count,
  approvalTtlMs: Count,
  maxTasks: Count,
  maxToolCallsPerTask: Count,
  humanReviewRisks: t.readonlyArray(t.string),
});

// Written later than the first kernel.open frames: absent means the behaviour those frames had
// (no kernel flags; the cap a kernel without flag 3 never consults). Extra fields of older frames
// (a retry policy the kernel no longer has) are ignored.
const KernelConfigLaterC = t.partial({ maxPendingApprovals: Count, flags: t.readonlyArray(Count) });

const OpeningC = t.type({
  v: t.literal(1),
  config: t.intersection([KernelConfigC, KernelConfigLaterC]),
  flags: t.readonlyArray(Count),
});

export interface KernelOpening {
  readonly v: 1;
  readonly config: KernelConfig;
  readonly flags: readonly number[];
}

/**
 * The payload of the `kernel.open` frame for a kernel with `config` (defaults filled in). Two
 * numbered lists live in it: `flags` (the ledger's behaviour, above) and `config.flags` (the
 * kernel's own, @crustcore/kernel flags.ts); a new ledger gets the latest of both.
 */
export function kernelOpening(config: Partial<KernelConfig> = {}): KernelOpening {
  return {
    v: 1,
    config: { ...DEFAULT_KERNEL_CONFIG, flags: LATEST_KERNEL_FLAGS, ...config },
    flags: [...CURRENT_BEHAVIOUR_FLAGS],
  };
}

/** Decodes a `kernel.open` payload (untrusted: it comes from a file). */
export function decodeKernelOpening(payload: unknown): Result<string, KernelOpening> {
  const decoded = OpeningC.decode(payload);
  if (decoded._tag === 'Left') return err('the opening frame does not hold a kernel config this version can read');
  const unknown = decoded.right.flags.filter((flag) => KERNEL_BEHAVIOUR_FLAGS[flag] === undefined);
  if (unknown.length > 0) {
    return err(`unknown behaviour flag(s) ${unknown.join(', ')}: a newer CrustCore wrote this log; upgrade to read it`);
  }
  const { maxPendingApprovals, flags: kernelFlags = [], ...rest } = decoded.right.config;
  const unknownKernel = kernelFlags.filter((flag) => !isKernelFlag(flag));
  if (unknownKernel.length > 0) {
    return err(
      `unknown kernel flag(s) ${unknownKernel.join(', ')}: a newer CrustCore wrote this log; upgrade to read it`,
    );
  }
  const config: KernelConfig = {
    ...rest,
    maxPendingApprovals: maxPendingApprovals ?? DEFAULT_KERNEL_CONFIG.maxPendingApprovals,
    flags: kernelFlags.filter(isKernelFlag),
  };
  return ok({ v: 1, config, flags: decoded.right.flags });
}

/**
 * The real kernel, for replay. Before a `kernel.open` frame, `config` is used,
 * with a fresh kernel per task (how logs were written before one kernel per
 * ledger); from the open frame on, the config the log recorded.
 */
export function kernelReplay(config: Partial<KernelConfig> = {}): ReplayKernel<KernelEvent, Kernel> {
  return {
    isKernelEventKind,
    decode: decodeKernelEvent,
    createKernel: () => createKernel(config),
    encodeActions: (actions) => encodeActions(actions as Parameters<typeof encodeActions>[0]),
    open: (payload) => {
      const opening = decodeKernelOpening(payload);
      return opening._tag === 'Left' ? opening : ok(createKernel(opening.right.config));
    },
    // The config comes from the log's kernel.open frame, never from the snapshot.
    restore: (openingPayload, state) => {
      const opening = decodeKernelOpening(openingPayload);
      return opening._tag === 'Left' ? opening : restoreKernel(opening.right.config, state);
    },
    legacyFreshKernelOn: 'TaskCreated',
  };
}

export type RecordStepError =
  | AppendError
  | { readonly _tag: 'SeqMismatch'; readonly expected: number; readonly got: number };

export interface RecordedStep {
  readonly event: AppendAck;
  readonly actions: readonly ReturnType<Kernel['step']>[number][];
  readonly actionsFrame: AppendAck;
}

/**
 * Records one kernel step. `build` receives the seq the event will have and
 * must put it in the event; the frame's timestamp is the event's `at`.
 */
export async function recordKernelStep(
  writer: LedgerWriter,
  kernel: Kernel,
  build: (seq: number) => KernelEvent,
  meta: { readonly actor?: Actor; readonly visibility?: Visibility } = {},
): Promise<Result<RecordStepError, RecordedStep>> {
  const seq = writer.nextSeq;
  const event = build(seq);
  if (event.seq !== seq) return err({ _tag: 'SeqMismatch', expected: seq, got: event.seq });
  const taskId = 'taskId' in event ? event.taskId : undefined;
  const eventAck = await writer.append({
    kind: event.kind,
    actor: meta.actor ?? 'runtime',
    visibility: meta.visibility ?? 'internal',
    timestampMs: event.at,
    ...(taskId === undefined ? {} : { taskId }),
    payload: JSON.parse(JSON.stringify(event)) as Json,
  });
  if (eventAck._tag === 'Left') return eventAck;
  // The event is durable before the kernel acts on it.
  const actions = kernel.step(event);
  const actionsAck = await writer.append({
    kind: ACTIONS_KIND,
    actor: 'kernel',
    visibility: 'internal',
    timestampMs: event.at,
    ...(taskId === undefined ? {} : { taskId }),
    payload: { for: seq, actions: JSON.parse(encodeActions(actions)) as Json, state: kernel.stateHash() },
  });
  if (actionsAck._tag === 'Left') return actionsAck;
  return ok({ event: eventAck.right, actions, actionsFrame: actionsAck.right });
}
