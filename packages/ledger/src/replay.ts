/**
 * Replay: feed a log's kernel events to a fresh kernel and check it asks for
 * exactly the actions the log recorded, and reaches the same state.
 *
 * Runtime convention (docs/event-log.md): each kernel event is a frame whose
 * kind is the event's kind and whose payload is the event (payload.seq = the
 * frame's seq, payload.at = the frame's timestamp); right after stepping, the
 * runtime appends a `kernel.actions` frame
 * `{"for": seq, "actions": [...], "state": "<stateHash>"}`. Other frames are
 * informational and skipped. The kernel is a parameter so the ledger does
 * not fix one kernel version, and tests can use a small fake.
 */
import { canonicalJson, type Json } from '@crustcore/kernel';
import * as t from 'io-ts';
import { type IntegrityFailure, integrityFailure } from './chain-check.js';
import { ACTIONS_KIND, OPEN_KIND, RECOVERED_KIND, SNAPSHOT_KIND } from './kinds.js';
import type { ReceiptKey } from './receipt-key.js';
import type { ReplayableKernel, ReplayFrame, ReplayKernel } from './replay-types.js';
import { SnapshotWitness } from './snapshot.js';

export type { ReplayableKernel, ReplayFrame, ReplayKernel } from './replay-types.js';

const ActionsRecordC = t.type({
  for: t.number,
  actions: t.unknown,
  state: t.string,
});

export interface ReplaySummary {
  readonly events: number;
  readonly actions: number;
  /** Kernel events with no recorded actions because the runtime stopped right after them. */
  readonly unanswered: readonly number[];
  readonly finalStateHash: string;
  /** Snapshot frames checked against the replayed state (each equal, or replay failed). */
  readonly snapshotsChecked: number;
  /** Set when the replay started from a verified snapshot: the seq of that snapshot frame. */
  readonly resumedAtSnapshot: number | undefined;
}

interface PendingStep {
  readonly seq: number;
  readonly actions: string;
  readonly count: number;
  readonly state: string;
}

const describe = (value: unknown): string => {
  const text = typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

/** Checks that a kernel event's header agrees with its frame. */
export function checkEventHeader(frame: Omit<ReplayFrame, 'hash'>, payload: Json): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'payload is not an object';
  const event = payload as { readonly [k: string]: Json | undefined };
  if (event.kind !== frame.kind) return `payload kind ${describe(event.kind)} differs from frame kind ${frame.kind}`;
  if (event.seq !== frame.seq) return `event seq ${describe(event.seq)} differs from frame seq ${frame.seq}`;
  if (event.at !== frame.timestampMs)
    return `event at ${describe(event.at)} differs from frame timestamp ${frame.timestampMs}`;
  if (frame.taskId !== undefined && event.taskId !== frame.taskId) {
    return `event taskId ${describe(event.taskId)} differs from frame task ${frame.taskId}`;
  }
  return undefined;
}

/** Streaming replayer: feed frames in log order, then finish. */
export class Replayer<E, K extends ReplayableKernel<E> = ReplayableKernel<E>> {
  readonly #kernel: ReplayKernel<E, K>;
  readonly #key: ReceiptKey | undefined;
  readonly #witness: SnapshotWitness<E, K>;
  #instance: K;
  #snapshotsChecked = 0;
  #resumedAt: number | undefined;
  #opened = false;
  /** The `kernel.open` payload the kernel runs under (from the frame, or carried into a resume). */
  #opening: Json | undefined;
  #pending: PendingStep | undefined;
  #events = 0;
  #actions = 0;
  #unanswered: number[] = [];
  #failure: IntegrityFailure | undefined;

  /** `key` checks snapshot MACs (without it a snapshot's state is still compared with the replay). */
  constructor(kernel: ReplayKernel<E, K>, options: { readonly key?: ReceiptKey | undefined } = {}) {
    this.#kernel = kernel;
    this.#key = options.key;
    this.#witness = new SnapshotWitness(kernel);
    this.#instance = kernel.createKernel();
  }

  get failure(): IntegrityFailure | undefined {
    return this.#failure;
  }

  /** The kernel after the frames fed so far: what a runtime opening the log continues with. */
  get instance(): K {
    return this.#instance;
  }

  /** Seq of the kernel event fed last whose actions frame has not come (yet): a log that ends there. */
  get pendingEvent(): number | undefined {
    return this.#failure === undefined ? this.#pending?.seq : undefined;
  }

  /** Whether the log has opened a shared kernel (a `kernel.open` frame was seen). */
  get opened(): boolean {
    return this.#opened;
  }

  /** The `kernel.open` payload the current kernel runs under, or undefined before the log opened one. */
  get opening(): Json | undefined {
    return this.#opening;
  }

  #open(frame: ReplayFrame, payload: Json): IntegrityFailure | undefined {
    if (this.#pending !== undefined)
      return this.#fail(this.#pending.seq, `${OPEN_KIND} at seq ${frame.seq} before the last event's actions`);
    const opened = this.#kernel.open?.(payload);
    if (opened === undefined) return this.#fail(frame.seq, `this replay kernel cannot read ${OPEN_KIND} frames`);
    if (opened._tag === 'Left') return this.#fail(frame.seq, `${OPEN_KIND}: ${opened.left}`);
    this.#instance = opened.right;
    this.#opened = true;
    this.#opening = payload;
    return undefined;
  }

  #fail(seq: number, detail: string): IntegrityFailure {
    this.#failure = integrityFailure('replay-divergence', seq, detail);
    return this.#failure;
  }

  /**
   * Continues from a snapshot that was checked (SnapshotWitness.check) instead of from the
   * frames before it, which are then never fed. `snapshotSeq` is the snapshot frame's seq;
   * `opening` the `kernel.open` payload it was checked under: the next snapshot is checked
   * against it too (without it, a second snapshot after a resume was "before the log opened").
   */
  resume(kernel: K, snapshotSeq: number, opening: Json): undefined {
    this.#instance = kernel;
    this.#opened = true;
    this.#opening = opening;
    this.#pending = undefined;
    this.#resumedAt = snapshotSeq;
    this.#witness.assumeOpened(opening);
  }

  /** A snapshot met during a full replay must equal the replayed state at its place. */
  #checkSnapshot(frame: ReplayFrame, payload: Json): IntegrityFailure | undefined {
    const checked = this.#witness.check(payload, this.#key);
    if (checked._tag === 'Left') return this.#fail(frame.seq, `${SNAPSHOT_KIND} is not trustworthy: ${checked.left}`);
    const replayed = this.#instance.snapshot?.();
    if (
      this.#instance.stateHash() !== checked.right.stateHash ||
      (replayed !== undefined && canonicalJson(replayed) !== canonicalJson(checked.right.state))
    ) {
      return this.#fail(frame.seq, `${SNAPSHOT_KIND} differs from the replayed state at its place`);
    }
    this.#snapshotsChecked++;
    return undefined;
  }

  feed(frame: ReplayFrame, payload: Json): IntegrityFailure | undefined {
    if (this.#failure !== undefined) return this.#failure;
    if (frame.kind === SNAPSHOT_KIND) return this.#checkSnapshot(frame, payload);
    this.#witness.observe(frame, () => payload);
    if (frame.kind === ACTIONS_KIND) return this.#checkActions(frame, payload);
    if (frame.kind === RECOVERED_KIND && this.#pending !== undefined) {
      // The runtime died after logging the event, before logging its actions.
      this.#unanswered.push(this.#pending.seq);
      this.#pending = undefined;
      return undefined;
    }
    if (frame.kind === OPEN_KIND) return this.#open(frame, payload);
    if (!this.#kernel.isKernelEventKind(frame.kind)) return undefined;
    if (!this.#opened && frame.kind === this.#kernel.legacyFreshKernelOn && this.#events > 0) {
      this.#instance = this.#kernel.createKernel();
    }
    if (this.#pending !== undefined) {
      return this.#fail(
        this.#pending.seq,
        `no ${ACTIONS_KIND} frame for seq ${this.#pending.seq} before the next kernel event`,
      );
    }
    const header = checkEventHeader(frame, payload);
    if (header !== undefined) return this.#fail(frame.seq, header);
    const decoded = this.#kernel.decode(payload);
    if (decoded._tag === 'Left')
      return this.#fail(frame.seq, `kernel cannot decode the event: ${describe(decoded.left)}`);
    let actions: readonly unknown[];
    let state: string;
    let encoded: string;
    try {
      actions = this.#instance.step(decoded.right);
      state = this.#instance.stateHash();
      encoded = this.#kernel.encodeActions(actions);
    } catch (error) {
      return this.#fail(frame.seq, `kernel threw while replaying: ${(error as Error).message}`);
    }
    this.#events++;
    this.#pending = { seq: frame.seq, actions: encoded, count: actions.length, state };
    return undefined;
  }

  #checkActions(frame: ReplayFrame, payload: Json): IntegrityFailure | undefined {
    const record = ActionsRecordC.decode(payload);
    if (record._tag === 'Left') return this.#fail(frame.seq, `${ACTIONS_KIND} payload has the wrong shape`);
    const pending = this.#pending;
    if (pending === undefined || record.right.for !== pending.seq) {
      return this.#fail(frame.seq, `${ACTIONS_KIND} for seq ${record.right.for} does not answer the last kernel event`);
    }
    let recorded: string;
    try {
      recorded = canonicalJson(record.right.actions as Json);
    } catch {
      return this.#fail(frame.seq, 'recorded actions are not JSON');
    }
    if (recorded !== pending.actions) {
      return this.#fail(
        pending.seq,
        `replayed actions differ from the recorded ones (frame ${frame.seq}): replayed ${clip(pending.actions)}, recorded ${clip(recorded)}`,
      );
    }
    if (record.right.state !== pending.state) {
      return this.#fail(
        pending.seq,
        `replayed state ${pending.state} differs from the recorded ${clip(record.right.state)}`,
      );
    }
    this.#actions += pending.count;
    this.#pending = undefined;
    return undefined;
  }

  finish(): { readonly failure: IntegrityFailure | undefined; readonly summary: ReplaySummary } {
    const unanswered = [...this.#unanswered];
    // A log may end right after an event whose actions were never written: the runtime stopped.
    if (this.#failure === undefined && this.#pending !== undefined) unanswered.push(this.#pending.seq);
    let finalStateHash = '';
    try {
      finalStateHash = this.#instance.stateHash();
    } catch {
      finalStateHash = '';
    }
    return {
      failure: this.#failure,
      summary: {
        events: this.#events,
        actions: this.#actions,
        unanswered,
        finalStateHash,
        snapshotsChecked: this.#snapshotsChecked,
        resumedAtSnapshot: this.#resumedAt,
      },
    };
  }
}

const clip = (text: string): string => (text.length > 400 ? `${text.slice(0, 400)}…` : text);
