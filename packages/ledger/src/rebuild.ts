/**
 * Opening a ledger rebuilds its kernel. Every frame is read once and
 * chain-checked as `inspect` does (its hashes, seqs and link, the head and its
 * MAC: chain-check.ts); a log that breaks the chain is not opened. Kernel
 * frames are not replayed as they are read: they are held (payload bytes,
 * undecoded) until the next snapshot frame. A snapshot that
 * verifies (snapshot.ts) replaces everything held with the state it carries;
 * one that does not is reported and skipped, and the held frames are replayed
 * as if it were not there. Restoring a snapshot (rebuilding the kernel from its
 * state and hashing it) is the costly check, so it waits until the rebuild
 * needs the state: only the snapshot it resumes from is restored. Should that
 * one not restore, the rebuild is done again restoring each snapshot as it is
 * met. What is held at the end is replayed, each recorded
 * answer checked, as `inspect --replay` does. The same scan finds the last
 * receipt (so the receipt chain continues) and the tasks the log created (so
 * the runtime can compact the finished ones).
 *
 * At most MAX_HELD_FRAMES are held: past that they are replayed, so a log
 * without snapshots (every log written before them) replays as it always did,
 * in bounded memory.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import type { Json } from '@crustcore/kernel';
import { ChainCheck, type ChainReport, type IntegrityFailure, integrityFailure } from './chain-check.js';
import { type CheckedPrefix, PrefixTracker } from './checked-prefix.js';
import { type DecodedFrame, decodePayload } from './frame.js';
import { readHeadState } from './head.js';
import { ACTIONS_KIND, OPEN_KIND, RECEIPT_KIND, RECOVERED_KIND, SNAPSHOT_KIND } from './kinds.js';
import { defaultHeadPath } from './log-writer.js';
import { decodeToolReceipt, GENESIS_RECEIPT_HASH, receiptHash } from './receipt.js';
import type { ReceiptKey } from './receipt-key.js';
import { type ReplayableKernel, Replayer, type ReplayKernel, type ReplaySummary } from './replay.js';
import { type ScanEnd, scanFile, scanFileYielding } from './scan.js';
import { nodeSha256, type Sha256 } from './sha256.js';
import { SnapshotWitness, type UntrustedSnapshot } from './snapshot.js';

export const MAX_HELD_FRAMES = 16_384;

export interface RebuiltKernel<E, K extends ReplayableKernel<E> = ReplayableKernel<E>> {
  readonly failure: IntegrityFailure | undefined;
  readonly kernel: K;
  /** Whether the log already opened a shared kernel (else the runtime writes `kernel.open`). */
  readonly opened: boolean;
  /** The `kernel.open` payload the kernel runs under (undefined when the log opened none). */
  readonly opening: Json | undefined;
  readonly summary: ReplaySummary;
  readonly lastReceiptHash: string;
  /** Every task a TaskCreated frame named, in log order (duplicates removed). */
  readonly taskIds: readonly string[];
  readonly frames: number;
  /** Seq of the newest snapshot frame the rebuild started from (undefined: it replayed from seq 1). */
  readonly resumedAtSnapshot: number | undefined;
  /** Snapshot frames that did not verify, and why: never trusted, replayed past instead. */
  readonly untrustedSnapshots: readonly UntrustedSnapshot[];
  /** Seq of the newest frame of any kind, 0 for an empty log. */
  readonly lastSeq: number;
  /**
   * What this open proved up to the newest trusted snapshot, for a later check to start there
   * (InspectOptions.resume); undefined without one.
   */
  readonly checkedPrefix: CheckedPrefix | undefined;
  /**
   * Seq of a kernel event the log ends with, whose actions were never written (the runtime
   * stopped in between): the opener records `ledger.recovered` after it before stepping the
   * kernel again, or the next event would follow an unanswered one and the log stop replaying.
   */
  readonly pendingEvent: number | undefined;
}

export interface RebuildOptions {
  readonly sha256?: Sha256;
  /** Default: next to the log (log-writer.ts defaultHeadPath). */
  readonly headPath?: string;
  /** Checks snapshot MACs; without it no snapshot is trusted (the log is replayed from seq 1). */
  readonly key?: ReceiptKey;
  /**
   * Restore every snapshot as it is met (what the rebuild falls back to when the one it resumes
   * from does not restore), instead of only that one. The same result, at a restore per snapshot.
   */
  readonly restoreEverySnapshot?: boolean;
}

const payloadOf = (frame: DecodedFrame): Json | undefined => {
  const decoded = decodePayload(frame);
  return decoded._tag === 'Right' ? decoded.right : undefined;
};

/** A snapshot that passed every check but the restore, held until the rebuild needs its state. */
interface PendingSnapshot<E, K extends ReplayableKernel<E>> {
  readonly seq: number;
  readonly restore: () => ReturnType<SnapshotWitness<E, K>['check']>;
}

class Rebuild<E, K extends ReplayableKernel<E>> {
  readonly replayer: Replayer<E, K>;
  readonly witness: SnapshotWitness<E, K>;
  readonly untrusted: UntrustedSnapshot[] = [];
  readonly prefix = new PrefixTracker();
  readonly #kernel: ReplayKernel<E, K>;
  readonly #key: ReceiptKey | undefined;
  /** Restore only the snapshot the rebuild resumes from (see rebuildRun); false: each one as it is met. */
  readonly #deferRestore: boolean;
  #held: DecodedFrame[] = [];
  #pending: PendingSnapshot<E, K> | undefined;
  /** The deferred snapshot did not restore: this rebuild's result is void; rebuild restoring each one. */
  restoreFailed = false;

  constructor(kernel: ReplayKernel<E, K>, key: ReceiptKey | undefined, deferRestore: boolean) {
    this.#kernel = kernel;
    this.#key = key;
    this.#deferRestore = deferRestore;
    this.replayer = new Replayer(kernel, { key });
    this.witness = new SnapshotWitness(kernel);
  }

  /** Returns false once replay has failed (the scan can stop). */
  visit(frame: DecodedFrame): boolean {
    if (frame.kind === SNAPSHOT_KIND) {
      this.#snapshot(frame);
      return true;
    }
    if (!this.#replays(frame.kind)) return true;
    // Held as is: scanFile never overwrites a window it has handed out (scan.ts), so the
    // views stay valid; a copy per frame cost more than the rest of holding it.
    this.witness.observe(frame, () => payloadOf(frame));
    this.#held.push(frame);
    if (this.#held.length >= MAX_HELD_FRAMES) this.flush();
    return this.replayer.failure === undefined && !this.restoreFailed;
  }

  #replays(kind: string): boolean {
    return (
      kind === ACTIONS_KIND || kind === OPEN_KIND || kind === RECOVERED_KIND || this.#kernel.isKernelEventKind(kind)
    );
  }

  #snapshot(frame: DecodedFrame): void {
    const payload = payloadOf(frame);
    if (payload === undefined) {
      this.untrusted.push({ seq: frame.seq, reason: 'the snapshot payload is not canonical JSON' });
      return;
    }
    if (this.#key === undefined) {
      this.untrusted.push({ seq: frame.seq, reason: 'no receipt key to check the snapshot MAC' });
      return;
    }
    const checked = this.witness.checkDeferred(payload, this.#key);
    if (checked._tag === 'Left') {
      this.untrusted.push({ seq: frame.seq, reason: checked.left });
      return;
    }
    const pending = { seq: frame.seq, restore: checked.right.restore };
    if (!this.#deferRestore) {
      // Restored now: one that does not restore is skipped, and what is held is replayed past it.
      const restored = pending.restore();
      if (restored._tag === 'Left') {
        this.untrusted.push({ seq: frame.seq, reason: restored.left });
        return;
      }
      this.#held = [];
      this.replayer.resume(restored.right.kernel, frame.seq, restored.right.opening);
    } else {
      // Everything held is covered by this state once it restores; a later snapshot supersedes it.
      this.#held = [];
      this.#pending = pending;
    }
    this.prefix.trusted(frame.seq, checked.right.coversSeq, checked.right.opening);
  }

  /**
   * Restores the pending snapshot and resumes the replay there. One that does not restore voids
   * this rebuild (the frames before it were let go): false, and the caller rebuilds restoring each.
   */
  #resumeFromPending(): boolean {
    const pending = this.#pending;
    if (pending === undefined) return true;
    this.#pending = undefined;
    const restored = pending.restore();
    if (restored._tag === 'Left') {
      this.restoreFailed = true;
      return false;
    }
    this.replayer.resume(restored.right.kernel, pending.seq, restored.right.opening);
    return true;
  }

  /** Replays what is held, in log order (from the pending snapshot's state, restored first). */
  flush(): void {
    if (this.restoreFailed || !this.#resumeFromPending()) return;
    const held = this.#held;
    this.#held = [];
    for (const frame of held) {
      const payload = decodePayload(frame);
      if (payload._tag === 'Left') continue;
      if (this.replayer.feed(frame, payload.right) !== undefined) return;
    }
  }
}

export function rebuildKernel<E, K extends ReplayableKernel<E>>(
  logPath: string,
  kernel: ReplayKernel<E, K>,
  options: RebuildOptions = {},
): RebuiltKernel<E, K> {
  if (options.restoreEverySnapshot !== true) {
    const deferred = rebuildRun(logPath, kernel, options, true);
    const result = deferred.finish(scanFile(logPath, 0, deferred.sha256, deferred.visit));
    if (result !== undefined) return result;
  }
  const eager = rebuildRun(logPath, kernel, options, false);
  return eager.finish(scanFile(logPath, 0, eager.sha256, eager.visit)) as RebuiltKernel<E, K>;
}

/**
 * rebuildKernel, giving the event loop a turn now and then (scanFileYielding): what the process
 * started beside the open (git calls that warm the task's worktree) goes on while a long log is
 * read. The same frames, checks and result.
 */
export async function rebuildKernelYielding<E, K extends ReplayableKernel<E>>(
  logPath: string,
  kernel: ReplayKernel<E, K>,
  options: RebuildOptions = {},
): Promise<RebuiltKernel<E, K>> {
  if (options.restoreEverySnapshot !== true) {
    const deferred = rebuildRun(logPath, kernel, options, true);
    const result = deferred.finish(await scanFileYielding(logPath, 0, deferred.sha256, deferred.visit));
    if (result !== undefined) return result;
  }
  const eager = rebuildRun(logPath, kernel, options, false);
  return eager.finish(await scanFileYielding(logPath, 0, eager.sha256, eager.visit)) as RebuiltKernel<E, K>;
}

/** The earlier of the chain's failure and the replay's, if any. */
function firstFailure(report: ChainReport, replayed: IntegrityFailure | undefined): IntegrityFailure | undefined {
  // The writer's open cuts back whatever lies past the head (never acknowledged): a frame still
  // there was added after it, by something that does not hold the key to sign a head.
  const chained =
    report.failure ??
    (report.framesPastHead > 0
      ? integrityFailure(
          'head-mismatch',
          report.head._tag === 'Present' ? report.head.head.seq + 1 : 1,
          'frames past the head after the writer opened the log (nothing that holds the key wrote them)',
        )
      : undefined);
  return [chained, replayed].reduce<IntegrityFailure | undefined>(
    (first, f) => (f !== undefined && (first === undefined || f.seq < first.seq) ? f : first),
    undefined,
  );
}

/**
 * One rebuild: the visitor a scan feeds, and what it ends with. With `deferRestore` only the
 * snapshot the rebuild resumes from is restored (each restore re-hashes a whole kernel state, and a
 * log holds one snapshot per run); if that one does not restore, `finish` gives undefined and the
 * caller rebuilds restoring each snapshot as it is met, skipping those that fail.
 */
function rebuildRun<E, K extends ReplayableKernel<E>>(
  logPath: string,
  kernel: ReplayKernel<E, K>,
  options: RebuildOptions,
  deferRestore: boolean,
): {
  sha256: Sha256;
  visit: (frame: DecodedFrame) => boolean;
  finish: (end: ScanEnd) => RebuiltKernel<E, K> | undefined;
} {
  const sha256 = options.sha256 ?? nodeSha256;
  const rebuild = new Rebuild(kernel, options.key, deferRestore);
  const chain = new ChainCheck(readHeadState(options.headPath ?? defaultHeadPath(logPath)));
  let lastReceiptHash: string = GENESIS_RECEIPT_HASH;
  const taskIds = new Set<string>();
  let frames = 0;
  let lastSeq = 0;
  const size = fileSize(logPath);
  const visit = (frame: DecodedFrame): boolean => {
    const accepted = chain.acceptedFrames;
    if (!chain.visit(frame)) return false;
    // A frame out of place (a gap the rest of the scan classifies) is not replayed.
    if (chain.acceptedFrames === accepted) return true;
    frames++;
    lastSeq = frame.seq;
    rebuild.prefix.frame(frame);
    if (frame.kind === RECEIPT_KIND) {
      const payload = payloadOf(frame);
      const receipt = decodeToolReceipt(payload);
      if (payload !== undefined && receipt._tag === 'Right') {
        lastReceiptHash = receiptHash(receipt.right, sha256);
        rebuild.prefix.receipt(frame.seq, lastReceiptHash, receipt.right);
      }
    } else if (frame.kind === 'TaskCreated' && frame.taskId !== undefined) taskIds.add(frame.taskId);
    return rebuild.visit(frame);
  };
  const finish = (end: ScanEnd): RebuiltKernel<E, K> | undefined => {
    rebuild.flush();
    if (rebuild.restoreFailed) return undefined;
    const finished = rebuild.replayer.finish();
    const failure = firstFailure(chain.finish(end, size, options.key), finished.failure);
    return {
      failure,
      kernel: rebuild.replayer.instance,
      opened: rebuild.replayer.opened,
      opening: rebuild.replayer.opening,
      summary: finished.summary,
      lastReceiptHash,
      taskIds: [...taskIds],
      frames,
      resumedAtSnapshot: finished.summary.resumedAtSnapshot,
      untrustedSnapshots: rebuild.untrusted,
      lastSeq,
      checkedPrefix: failure === undefined ? rebuild.prefix.result() : undefined,
      pendingEvent: rebuild.replayer.pendingEvent,
    };
  };
  return { sha256, visit, finish };
}

function fileSize(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}
