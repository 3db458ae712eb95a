/**
 * One kernel per ledger. A repository has one event log; opening it takes the
 * ledger lock, rebuilds the kernel by replaying the log (checking every
 * recorded answer on the way), and from then on every task of that ledger —
 * `run`, `chat`, the daemon, MCP — steps this one kernel through `submit`.
 *
 *   open ─► lock ─► rebuild (newest verified snapshot + replay of the rest) ─► [kernel.open frame if new]
 *        ─► compact finished tasks
 *   submit(event) ─► kernel.step ─► append event + kernel.actions, one commit     (serialized)
 *                 ─► every `snapshotEveryFrames` frames: append kernel.snapshot (under the same lock)
 *
 * The kernel config and behaviour flags live in the log's `kernel.open` frame;
 * a log opened before keeps the config it recorded, whatever today's defaults
 * are. A second process on the same ledger gets `LedgerBusyError` (exit 75)
 * instead of a second kernel writing interleaved frames.
 */
import {
  type Action,
  canonicalJson,
  createKernel,
  type Json,
  type Kernel,
  type KernelConfig,
  type KernelEvent,
  type TaskId,
  TERMINAL_STATUSES,
} from '@crustcore/kernel';
import {
  type AppendAck,
  type ArtifactStore,
  type CheckedPrefix,
  DEFAULT_SNAPSHOT_EVERY_FRAMES,
  IDLE_SNAPSHOT_MAX_STATE_BYTES,
  IDLE_SNAPSHOT_MIN_FRAMES,
  type IntegrityFailure,
  kernelOpening,
  kernelReplay,
  LedgerWriter,
  MIN_SNAPSHOT_EVERY_FRAMES,
  OPEN_KIND,
  RECOVERED_KIND,
  ReceiptIssuer,
  type ReceiptKey,
  rebuildKernelYielding,
  SNAPSHOT_BYTES_FACTOR,
  type UntrustedSnapshot,
  type WrittenFrame,
} from '@crustcore/ledger';
import { LedgerRecorder, type Redact } from './ledger-recorder.js';
import type { PendingEvent } from './ports.js';

const describeIntegrity = (f: IntegrityFailure): string => `${f.reason} at seq ${f.seq}: ${f.detail}`;

/**
 * The log ends with a kernel event whose actions were never written (the process stopped after
 * the event was acknowledged): `ledger.recovered` closes it, as after a torn answer, so the
 * events this open steps follow an answered log (replay.ts treats it as unanswered).
 */
async function recordUnanswered(writer: LedgerWriter, eventSeq: number, options: OpenSpineOptions): Promise<void> {
  const ack = await writer.append({
    kind: RECOVERED_KIND,
    actor: 'runtime',
    visibility: 'internal',
    timestampMs: options.clockMs(),
    payload: { reason: 'unanswered event', eventSeq, truncatedBytes: 0 },
  });
  if (ack._tag === 'Left') throw new LedgerOpenFailed(`cannot write to ${options.logPath}: ${ack.left._tag}`);
}

/** Another process holds this ledger: try again when it is done. */
export class LedgerBusyError extends Error {
  override readonly name = 'LedgerBusyError';
  readonly pid: number | undefined;
  constructor(logPath: string, pid: number | undefined) {
    super(
      `the event log ${logPath} is in use by ${pid === undefined ? 'another process' : `process ${pid}`} ` +
        '(a run, chat, daemon or MCP call on this repository). Wait for it to finish, then try again.',
    );
    this.pid = pid;
  }
}

/** The log cannot be opened (damaged, or it does not replay); the message says what to run. */
export class LedgerOpenFailed extends Error {
  override readonly name = 'LedgerOpenFailed';
}

export interface OpenSpineOptions {
  readonly logPath: string;
  readonly artifacts: ArtifactStore;
  readonly key: ReceiptKey;
  readonly clockMs: () => number;
  readonly redact?: Redact;
  /** Used only when the log has no kernel yet; an opened log keeps the config it recorded. */
  readonly kernelConfig?: Partial<KernelConfig>;
  /**
   * A fixed number of frames between kernel snapshots; 0 writes none. Default: at least
   * MIN_SNAPSHOT_EVERY_FRAMES, at most DEFAULT_SNAPSHOT_EVERY_FRAMES, in between once the frames
   * since the last one outweigh the state SNAPSHOT_BYTES_FACTOR times (ledger/snapshot.ts).
   */
  readonly snapshotEveryFrames?: number;
}

/** How the open went: where the kernel came from, and any snapshot that was not trusted. */
export interface SpineOpenReport {
  /** Seq of the snapshot the kernel was restored from; undefined: replayed from seq 1. */
  readonly resumedAtSnapshot: number | undefined;
  /** Frames replayed (kernel events) after the snapshot, or from the start. */
  readonly replayedEvents: number;
  readonly untrustedSnapshots: readonly UntrustedSnapshot[];
  /** What the open chain-checked up to that snapshot: a later check of this log starts there. */
  readonly checkedPrefix: CheckedPrefix | undefined;
}

export interface SubmittedStep {
  readonly event: KernelEvent;
  readonly actions: readonly Action[];
}

export class LedgerSpine {
  readonly recorder: LedgerRecorder;
  readonly logPath: string;
  readonly openReport: SpineOpenReport;
  readonly #writer: LedgerWriter;
  #kernel: Kernel;
  /** A kernel with this ledger's config, in a state the kernel once had (a step rolled back). */
  readonly #restore: (state: Json) => Kernel | null;
  readonly #key: ReceiptKey;
  readonly #snapshotEvery: number;
  readonly #snapshotMin: number;
  /** Whether compactions may snapshot a small state (the default policy; a fixed interval does not). */
  readonly #idleSnapshots: boolean;
  /** Seq of the newest trusted snapshot (or of the actions frame a skipped one would have covered). */
  #snapshotAt: number;
  #chain: Promise<unknown> = Promise.resolve();
  /** Why the kernel stopped taking events (a failed step could not be rolled back); null while it takes them. */
  #broken: string | null = null;
  #closed = false;

  private constructor(
    options: OpenSpineOptions,
    parts: {
      writer: LedgerWriter;
      kernel: Kernel;
      restore: (state: Json) => Kernel | null;
      recorder: LedgerRecorder;
      report: SpineOpenReport;
    },
  ) {
    this.logPath = options.logPath;
    this.#writer = parts.writer;
    this.#kernel = parts.kernel;
    this.#restore = parts.restore;
    this.recorder = parts.recorder;
    this.openReport = parts.report;
    this.#key = options.key;
    this.#snapshotEvery = options.snapshotEveryFrames ?? DEFAULT_SNAPSHOT_EVERY_FRAMES;
    this.#snapshotMin = options.snapshotEveryFrames ?? MIN_SNAPSHOT_EVERY_FRAMES;
    this.#idleSnapshots = options.snapshotEveryFrames === undefined;
    this.#snapshotAt = parts.report.resumedAtSnapshot ?? 0;
  }

  /** Opens the ledger: lock, rebuild, open a kernel if the log has none, compact finished tasks. */
  static async open(options: OpenSpineOptions): Promise<LedgerSpine> {
    const { logPath, clockMs } = options;
    const writer = await LedgerWriter.open({ logPath, mode: 'durable', key: options.key, clockMs });
    if (writer._tag === 'Left') {
      if (writer.left._tag === 'LedgerLocked') throw new LedgerBusyError(logPath, writer.left.pid);
      throw new LedgerOpenFailed(
        `cannot open the event log ${logPath}: ${JSON.stringify(writer.left)}. Run "crustcore inspect --dir <its directory>".`,
      );
    }
    try {
      return await LedgerSpine.#rebuild(options, writer.right);
    } catch (error) {
      await writer.right.close();
      throw error;
    }
  }

  static async #rebuild(options: OpenSpineOptions, writer: LedgerWriter): Promise<LedgerSpine> {
    const config = options.kernelConfig ?? {};
    // Yielding: the warm workspace's git calls, started beside the open, go on while the log is read.
    const rebuilt = await rebuildKernelYielding(options.logPath, kernelReplay(config), { key: options.key });
    if (rebuilt.failure !== undefined) {
      throw new LedgerOpenFailed(
        `the event log ${options.logPath} does not replay (${describeIntegrity(rebuilt.failure)}); nothing was run. ` +
          'Run "crustcore inspect --dir <its directory> --replay" for the details.',
      );
    }
    if (rebuilt.pendingEvent !== undefined) await recordUnanswered(writer, rebuilt.pendingEvent, options);
    const receipts = new ReceiptIssuer(options.key, { prevReceiptHash: rebuilt.lastReceiptHash as never });
    const recorder = new LedgerRecorder(writer, options.artifacts, receipts, options.clockMs, options.redact);
    let kernel = rebuilt.kernel;
    let openingPayload = rebuilt.opening;
    if (!rebuilt.opened) {
      // From this frame on, replay steps one kernel with this config (see OPEN_KIND).
      const opening = kernelOpening(config);
      openingPayload = JSON.parse(JSON.stringify(opening)) as Json;
      const ack = await writer.append({
        kind: OPEN_KIND,
        actor: 'runtime',
        visibility: 'internal',
        timestampMs: options.clockMs(),
        payload: openingPayload,
      });
      if (ack._tag === 'Left') throw new LedgerOpenFailed(`cannot write to ${options.logPath}: ${ack.left._tag}`);
      kernel = createKernel(opening.config);
    }
    const replay = kernelReplay(config);
    const restore = (state: Json): Kernel | null => {
      const restored = openingPayload === undefined ? undefined : replay.restore?.(openingPayload, state);
      return restored?._tag === 'Right' ? restored.right : null;
    };
    const report: SpineOpenReport = {
      resumedAtSnapshot: rebuilt.resumedAtSnapshot,
      replayedEvents: rebuilt.summary.events,
      untrustedSnapshots: rebuilt.untrustedSnapshots,
      checkedPrefix: rebuilt.checkedPrefix,
    };
    const spine = new LedgerSpine(options, { writer, kernel, restore, recorder, report });
    for (const taskId of rebuilt.taskIds) await spine.compact(taskId as TaskId);
    return spine;
  }

  /** Read-only view of the shared kernel, for status lines. */
  get kernel(): Pick<Kernel, 'taskStatus' | 'taskUsage' | 'stateHash'> {
    return this.#kernel;
  }

  /**
   * Records an event, steps the one kernel, records its answer. Serialized
   * across every task of this ledger: no other kernel event can come between
   * an event and its actions.
   */
  submit(pending: PendingEvent): Promise<SubmittedStep> {
    const next = this.#chain.then(async () => {
      if (this.#closed) throw new Error('the ledger is closed');
      if (this.#broken !== null) throw new Error(`the ledger stopped taking events: ${this.#broken}`);
      // The event and the kernel's answer commit together: one fsync and head update, not two, and
      // a crash leaves both or neither. Nothing acts on the answer before the commit.
      const { event, actions, answer } = await this.#stepAndCommit(pending);
      if (this.#snapshotDue(answer) || (pending.kind === 'TaskCompacted' && this.#idleSnapshotDue(answer))) {
        // Taken right after the actions frame, before any other kernel event: the state it covers.
        await this.recorder.appendSnapshot(this.#key, answer, this.#kernel);
        this.#snapshotAt = answer.seq;
      }
      return { event, actions };
    });
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Steps the kernel on the event and commits the event with its answer. Should the step throw or
   * the commit fail once the kernel started stepping (a frame too large, a write error), the kernel
   * goes back to the state it had before: the log holds none of the step, and nothing was acted on.
   */
  async #stepAndCommit(pending: PendingEvent) {
    let before: Json | undefined;
    try {
      return await this.recorder.appendStep(pending, (decoded) => {
        // A copy that shares nothing with the kernel's own records, whatever the step changes in place.
        before = structuredClone(this.#kernel.snapshot());
        return { actions: this.#kernel.step(decoded), stateHash: this.#kernel.stateHash() };
      });
    } catch (error) {
      if (before !== undefined) {
        const restored = this.#restore(before);
        if (restored === null) this.#broken = `a failed step could not be rolled back: ${(error as Error).message}`;
        else this.#kernel = restored;
      }
      throw error;
    }
  }

  /** Whether a snapshot goes right after this actions frame (see OpenSpineOptions.snapshotEveryFrames). */
  #snapshotDue(answer: AppendAck): boolean {
    const frames = answer.seq - this.#snapshotAt;
    if (this.#snapshotEvery <= 0 || frames < this.#snapshotMin) return false;
    if (frames >= this.#snapshotEvery) return true;
    // The log's mean frame size stands in for the bytes since the last snapshot.
    const bytesSince = frames * (answer.offset / Math.max(1, answer.seq));
    return bytesSince >= SNAPSHOT_BYTES_FACTOR * canonicalJson(this.#kernel.snapshot()).length;
  }

  /** After a compaction: a small state is snapshotted (see IDLE_SNAPSHOT_MAX_STATE_BYTES). */
  #idleSnapshotDue(answer: AppendAck): boolean {
    if (!this.#idleSnapshots || answer.seq - this.#snapshotAt < IDLE_SNAPSHOT_MIN_FRAMES) return false;
    return canonicalJson(this.#kernel.snapshot()).length <= IDLE_SNAPSHOT_MAX_STATE_BYTES;
  }

  /** Drops a finished task from the kernel state; a task still running is left alone. */
  async compact(taskId: TaskId): Promise<void> {
    const status = this.#kernel.taskStatus(taskId);
    if (status === undefined || !TERMINAL_STATUSES.has(status)) return;
    await this.submit({ kind: 'TaskCompacted', taskId });
  }

  async close(): Promise<void> {
    await this.#chain;
    this.#closed = true;
    await this.#writer.close();
  }

  /** The last frame this spine's writer acknowledged (after close: all it wrote); `inspectLog`'s `until`. */
  get lastWritten(): WrittenFrame {
    return this.#writer.lastFrame;
  }
}
