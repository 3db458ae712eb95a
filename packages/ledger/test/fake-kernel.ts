/**
 * A tiny deterministic kernel for replay tests: `Add` events add to a
 * running total per task; every step answers with one `Added` action.
 */
import { canonicalJson, err, type Json, ok, sha256Hex, type TaskId } from '@crustcore/kernel';
import type { LedgerWriter, ReplayKernel } from '../src/index.js';

export interface AddEvent {
  readonly kind: 'Add';
  readonly seq: number;
  readonly at: number;
  readonly taskId: TaskId;
  readonly amount: number;
}

export const fakeKernel: ReplayKernel<AddEvent> = {
  isKernelEventKind: (kind) => kind === 'Add',
  decode: (value) => {
    const v = value as Partial<AddEvent> | null;
    return v !== null && typeof v === 'object' && v.kind === 'Add' && typeof v.amount === 'number'
      ? ok(v as AddEvent)
      : err({ problem: 'not an Add event' });
  },
  createKernel: () => {
    const totals = new Map<string, number>();
    return {
      step: (event) => {
        const total = (totals.get(event.taskId) ?? 0) + event.amount;
        totals.set(event.taskId, total);
        return [{ kind: 'Added', taskId: event.taskId, total }];
      },
      stateHash: () => sha256Hex(canonicalJson(Object.fromEntries([...totals].sort()))),
    };
  },
  encodeActions: (actions) => canonicalJson(actions as Json),
};

/** Records an Add event the way the runtime records kernel events. */
export async function recordAdd(
  writer: LedgerWriter,
  kernel: ReturnType<typeof fakeKernel.createKernel>,
  taskId: TaskId,
  amount: number,
  tamper?: { readonly actions?: Json; readonly state?: string },
): Promise<void> {
  const seq = writer.nextSeq;
  const event: AddEvent = { kind: 'Add', seq, at: 1_000 + seq, taskId, amount };
  await writer.append({
    kind: 'Add',
    actor: 'runtime',
    visibility: 'internal',
    timestampMs: event.at,
    taskId,
    payload: { ...event },
  });
  const actions = kernel.step(event);
  await writer.append({
    kind: 'kernel.actions',
    actor: 'kernel',
    visibility: 'internal',
    timestampMs: event.at,
    taskId,
    payload: {
      for: seq,
      actions: tamper?.actions ?? (JSON.parse(fakeKernel.encodeActions(actions)) as Json),
      state: tamper?.state ?? kernel.stateHash(),
    },
  });
}
