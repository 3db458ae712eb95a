/**
 * The chain rules, applied frame by frame while a log is scanned:
 * seqs run 1, 2, 3 … without gaps or repeats, each frame's prevHash is the
 * previous frame's hash, the head file names a frame that exists with that
 * hash, and at most one group commit (the one a crash interrupted) lies past
 * the head. A torn last frame past the head is a crash, not tampering.
 *
 * Each failure names the seq where the log stops being right (the seq that
 * should have been at that position) and a stable reason.
 */
import type { DecodedFrame } from './frame.js';
import { GENESIS_HASH, HASH_BYTES } from './frame.js';
import { checkHeadMac, EMPTY_HEAD, type Head, type HeadState } from './head.js';
import type { ReceiptKey } from './receipt-key.js';
import { type ScanEnd, scanBytes } from './scan.js';
import { equalBytes, nodeSha256, type Sha256, toHex } from './sha256.js';

/** Why a log failed inspection. Stable strings: scripts and docs use them. */
export type IntegrityReason =
  | 'bad-hash'
  | 'broken-link'
  | 'missing-frame'
  | 'reordered'
  | 'truncated'
  | 'head-mismatch'
  | 'bad-payload'
  | 'bad-receipt'
  | 'missing-artifact'
  | 'bad-artifact'
  | 'replay-divergence';

export const INTEGRITY_REASONS: readonly IntegrityReason[] = [
  'bad-hash',
  'broken-link',
  'missing-frame',
  'reordered',
  'truncated',
  'head-mismatch',
  'bad-payload',
  'bad-receipt',
  'missing-artifact',
  'bad-artifact',
  'replay-divergence',
];

export interface IntegrityFailure {
  readonly _tag: 'IntegrityFailure';
  readonly reason: IntegrityReason;
  /** The first bad seq (0 = the head file itself, before any frame). */
  readonly seq: number;
  /** Byte offset in the log, when the failure is at a place in it. */
  readonly offset: number | undefined;
  readonly detail: string;
}

export const integrityFailure = (
  reason: IntegrityReason,
  seq: number,
  detail: string,
  offset?: number,
): IntegrityFailure => ({ _tag: 'IntegrityFailure', reason, seq, offset, detail });

export interface TornTail {
  /** Offset where the torn frame starts (the log's good end). */
  readonly offset: number;
  readonly bytes: number;
  readonly afterSeq: number;
  readonly zeroFilled: boolean;
}

export interface ChainReport {
  readonly frames: number;
  /** Offset just past the last good frame. */
  readonly goodEnd: number;
  readonly lastSeq: number;
  readonly lastHash: string;
  readonly head: HeadState;
  readonly headChecked: 'mac' | 'no-key' | 'absent';
  /** Frames past the head: the one group commit a crash may leave unacknowledged. */
  readonly framesPastHead: number;
  readonly tornTail: TornTail | undefined;
  readonly failure: IntegrityFailure | undefined;
}

export class ChainCheck {
  readonly #head: Head;
  readonly #headState: HeadState;
  #expectedSeq = 1;
  #prevHash: Uint8Array = GENESIS_HASH;
  #frames = 0;
  #goodEnd = 0;
  #failure: IntegrityFailure | undefined;
  /** A seq gap whose kind (missing vs moved) depends on what comes later. */
  #gap: { readonly seq: number; readonly offset: number; readonly found: number } | undefined;
  #headSeen = false;
  #committedPastHead: number[] = [];

  /**
   * `start`: resume after a frame already known good (the writer checks the
   * head's frame itself, then scans only what follows it).
   */
  constructor(head: HeadState, start?: { readonly seq: number; readonly hash: Uint8Array; readonly offset: number }) {
    this.#headState = head;
    this.#head = head._tag === 'Present' ? head.head : EMPTY_HEAD;
    if (start !== undefined) {
      this.#expectedSeq = start.seq + 1;
      this.#prevHash = start.hash;
      this.#goodEnd = start.offset;
      this.#headSeen = start.seq >= this.#head.seq;
    }
  }

  /** Frames that passed every chain rule so far. */
  get acceptedFrames(): number {
    return this.#frames;
  }

  /** Feeds the next frame in file order; returns false once scanning can stop. */
  visit(frame: DecodedFrame): boolean {
    if (this.#gap !== undefined) {
      // Only one question is left: does the missing seq turn up later?
      if (frame.seq === this.#gap.seq) {
        this.#failure = integrityFailure(
          'reordered',
          this.#gap.seq,
          `seq ${this.#gap.found} stands where seq ${this.#gap.seq} belongs; seq ${this.#gap.seq} comes later (frames moved or swapped)`,
          this.#gap.offset,
        );
        this.#gap = undefined;
        return false;
      }
      return true;
    }
    if (this.#failure !== undefined) return false;
    const expected = this.#expectedSeq;
    if (frame.seq > expected) {
      this.#gap = { seq: expected, offset: frame.offset, found: frame.seq };
      return true;
    }
    if (frame.seq < expected) {
      this.#failure = integrityFailure(
        'reordered',
        expected,
        `seq ${frame.seq} appears again where seq ${expected} belongs (a frame was duplicated, inserted or moved)`,
        frame.offset,
      );
      return false;
    }
    if (!equalBytes(frame.prevHash, this.#prevHash)) {
      this.#failure = integrityFailure(
        'broken-link',
        expected,
        `frame ${expected} does not link to frame ${expected - 1} (spliced, replaced or re-hashed)`,
        frame.offset,
      );
      return false;
    }
    if (frame.seq === this.#head.seq) {
      this.#headSeen = true;
      const end = frame.offset + frame.length;
      if (toHex(frame.hash) !== this.#head.hash || end !== this.#head.end) {
        this.#failure = integrityFailure(
          'head-mismatch',
          expected,
          `the head file names frame ${expected} with another hash or end offset (log or head rewritten)`,
          frame.offset,
        );
        return false;
      }
    } else if (frame.seq > this.#head.seq && frame.commit) {
      this.#committedPastHead.push(frame.seq);
    }
    this.#prevHash = frame.hash;
    this.#expectedSeq = expected + 1;
    this.#frames++;
    this.#goodEnd = frame.offset + frame.length;
    return true;
  }

  /** How the scan's end reads: a torn tail a crash left, damage (a failure), or undefined for a clean end. */
  #tornTail(end: ScanEnd, lastSeq: number, fileSize: number): TornTail | IntegrityFailure | undefined {
    if (end._tag !== 'Incomplete' && end._tag !== 'Corrupt') return undefined;
    // Past the head nothing was acknowledged: a frame cut short, zeros to the end, or a page of
    // zeros inside (some pages of the last write reached the disk, others not) is a crash.
    const beyondHead = lastSeq >= this.#head.seq;
    if (beyondHead && (end._tag === 'Incomplete' || end.zeroFilled || end.zeroPage))
      return { offset: end.offset, bytes: fileSize - end.offset, afterSeq: lastSeq, zeroFilled: end.zeroFilled };
    const detail =
      end._tag === 'Incomplete'
        ? `the log ends inside frame ${lastSeq + 1}, but the head says frame ${this.#head.seq} was acknowledged`
        : `frame ${lastSeq + 1} is damaged (${end.problem}: ${end.detail})`;
    return integrityFailure(end._tag === 'Incomplete' ? 'truncated' : 'bad-hash', lastSeq + 1, detail, end.offset);
  }

  /** `fileSize`: the log's size in bytes, to measure a torn tail. */
  finish(end: ScanEnd, fileSize: number, key: ReceiptKey | undefined): ChainReport {
    const lastSeq = this.#expectedSeq - 1;
    const report = (failure: IntegrityFailure | undefined, tornTail?: TornTail): ChainReport => ({
      frames: this.#frames,
      goodEnd: this.#goodEnd,
      lastSeq,
      lastHash: toHex(this.#prevHash.length === HASH_BYTES ? this.#prevHash : GENESIS_HASH),
      head: this.#headState,
      headChecked: this.#headState._tag !== 'Present' ? 'absent' : key === undefined ? 'no-key' : 'mac',
      framesPastHead: Math.max(0, lastSeq - this.#head.seq),
      tornTail,
      failure,
    });
    if (this.#gap !== undefined) {
      return report(
        integrityFailure(
          'missing-frame',
          this.#gap.seq,
          `seq ${this.#gap.found} follows seq ${this.#gap.seq - 1}: seq ${this.#gap.seq} is missing`,
          this.#gap.offset,
        ),
      );
    }
    if (this.#failure !== undefined) return report(this.#failure);
    if (this.#headState._tag === 'Malformed') {
      return report(integrityFailure('head-mismatch', 0, `head file unreadable: ${this.#headState.reason}`));
    }
    if (key !== undefined && this.#headState._tag === 'Present' && !checkHeadMac(this.#head, key)) {
      return report(
        integrityFailure(
          'head-mismatch',
          this.#head.seq,
          'the head file has no valid MAC for this key (forged or rolled back)',
        ),
      );
    }
    const tail = this.#tornTail(end, lastSeq, fileSize);
    if (tail !== undefined && 'reason' in tail) return report(tail);
    const tornTail = tail;
    if (this.#head.seq > lastSeq) {
      return report(
        integrityFailure(
          'truncated',
          lastSeq + 1,
          `the log ends at frame ${lastSeq}, but the head says frame ${this.#head.seq} was acknowledged`,
          this.#goodEnd,
        ),
        tornTail,
      );
    }
    if (this.#head.seq > 0 && !this.#headSeen) {
      return report(
        integrityFailure('head-mismatch', this.#head.seq, 'the head names a frame the log lacks'),
        tornTail,
      );
    }
    const committed = this.#committedPastHead;
    const rolledBack = committed.length > 1 || (committed.length === 1 && committed[0] !== lastSeq);
    if (rolledBack) {
      return report(
        integrityFailure(
          'head-mismatch',
          committed[0]!,
          `frames up to ${committed[committed.length - 1]} were committed after the head's frame ${this.#head.seq}: the head file was rolled back or lost`,
        ),
        tornTail,
      );
    }
    return report(undefined, tornTail);
  }
}

/**
 * The chain rules over a log held in memory (no payload checks): what
 * `inspect` does first, for tools and tests that already have the bytes.
 */
export function checkChainBytes(
  bytes: Uint8Array,
  head: HeadState,
  options: { readonly key?: ReceiptKey; readonly sha256?: Sha256 } = {},
): ChainReport {
  const check = new ChainCheck(head);
  const end = scanBytes(bytes, 0, options.sha256 ?? nodeSha256, (frame) => check.visit(frame));
  return check.finish(end, bytes.length, options.key);
}
