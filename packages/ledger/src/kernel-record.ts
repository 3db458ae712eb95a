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
  createKernel,
  decodeKernelEvent,
  encodeActions,
  err,
  isKernelEventKind,
  type Json,
  type Kernel,
  type KernelConfig,
  type KernelEvent,
  ok,
  type Result,
} from '@crustcore/kernel';
import type { Actor, Visibility } from './frame.js';
import { ACTIONS_KIND } from './kinds.js';
import type { AppendAck, AppendError, LedgerWriter } from './log-writer.js';
import type { ReplayKernel } from './replay.js';

/** The real kernel, for replay. `config` must be the one the runtime used. */
export function kernelReplay(config: Partial<KernelConfig> = {}): ReplayKernel<KernelEvent> {
  return {
    isKernelEventKind,
    decode: decodeKernelEvent,
    createKernel: () => createKernel(config),
    encodeActions: (actions) => encodeActions(actions as Parameters<typeof encodeActions>[0]),
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
