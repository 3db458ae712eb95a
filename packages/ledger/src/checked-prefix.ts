/**
 * What opening a log proved about its frames, kept so a later check of the same log can start
 * near its end instead of at seq 1 (`InspectOptions.resume`).
 *
 * The open chain-checks every frame (hashes, seqs, links, the head and its MAC) and trusts the
 * newest snapshot that verifies. A run's own closing check (`runTask`) needs only what came after
 * that snapshot: it starts at the snapshot's covered `kernel.actions` frame, linked to the frame
 * before it by the hash the open checked, and carries what the frames before it left behind for
 * later ones: the receipt chain's last hash, the receipts a later frame may name, and the
 * `kernel.open` payload a snapshot is checked against. So each run hashes the log's history once
 * (at open), not twice.
 */
import type { Json } from '@crustcore/kernel';
import type { DecodedFrame } from './frame.js';
import { GENESIS_RECEIPT_HASH } from './receipt.js';

/** A receipt as later frames may name it (inspect.ts checks the names). */
export interface ReceiptRef {
  readonly toolCallId: string;
  readonly taskId: string;
}

export interface CheckedPrefix {
  /** Seq of the trusted snapshot the check starts its payload checks and replay at. */
  readonly snapshotSeq: number;
  /** The last frame the open checked that the check need not read: its seq, hash and end offset. */
  readonly after: { readonly seq: number; readonly hash: Uint8Array; readonly offset: number };
  /** The receipt chain's last hash at `after`. */
  readonly lastReceiptHash: string;
  /** Every receipt at or before `after`, by receipt hash. */
  readonly receipts: ReadonlyMap<string, ReceiptRef>;
  /** The `kernel.open` payload in force at `after`. */
  readonly opening: Json;
}

/** How many recent frames are remembered to find the frame before a snapshot's covered frame. */
const RECENT_FRAMES = 64;

interface FrameMark {
  readonly seq: number;
  readonly hash: Uint8Array;
  readonly end: number;
}

interface SeqReceipt extends ReceiptRef {
  readonly seq: number;
  readonly hash: string;
}

/** Fed every chain-checked frame of an open, in log order. */
export class PrefixTracker {
  readonly #recent: FrameMark[] = [];
  readonly #receipts: SeqReceipt[] = [];
  #candidate: { snapshotSeq: number; after: FrameMark; opening: Json } | undefined;

  frame(frame: DecodedFrame): void {
    if (this.#recent.length === RECENT_FRAMES) this.#recent.shift();
    this.#recent.push({ seq: frame.seq, hash: frame.hash, end: frame.offset + frame.length });
  }

  receipt(seq: number, hash: string, ref: ReceiptRef): void {
    this.#receipts.push({ seq, hash, toolCallId: ref.toolCallId, taskId: ref.taskId });
  }

  /**
   * A snapshot at `snapshotSeq` covering the actions frame `coversSeq` was trusted. The check
   * would start at the covered frame; without the frame before it in memory (more than
   * RECENT_FRAMES frames between them) there is no place to start, and the check reads it all.
   */
  trusted(snapshotSeq: number, coversSeq: number, opening: Json): void {
    const after = this.#recent.find((mark) => mark.seq === coversSeq - 1);
    this.#candidate = after === undefined ? undefined : { snapshotSeq, after, opening };
  }

  /** The prefix of the newest trusted snapshot, if any. */
  result(): CheckedPrefix | undefined {
    const candidate = this.#candidate;
    if (candidate === undefined) return undefined;
    const receipts = new Map<string, ReceiptRef>();
    let lastReceiptHash: string | undefined;
    for (const receipt of this.#receipts) {
      if (receipt.seq > candidate.after.seq) break;
      receipts.set(receipt.hash, { toolCallId: receipt.toolCallId, taskId: receipt.taskId });
      lastReceiptHash = receipt.hash;
    }
    return {
      snapshotSeq: candidate.snapshotSeq,
      after: { seq: candidate.after.seq, hash: candidate.after.hash, offset: candidate.after.end },
      lastReceiptHash: lastReceiptHash ?? GENESIS_RECEIPT_HASH,
      receipts,
      opening: candidate.opening,
    };
  }
}
