/**
 * Kernel snapshot frames: the kernel state right after a `kernel.actions`
 * frame, so opening a long log can resume there instead of replaying from
 * seq 1. Payload (canonical JSON):
 *
 *   {"v": 1, "covers": {"seq": S, "hash": "<frame hash of S>"},
 *    "stateHash": "<Kernel.stateHash() after S>", "state": <Kernel.snapshot()>,
 *    "mac": "<HMAC-SHA256 with the receipt key>"}
 *
 * A snapshot is trusted only when everything it claims is checked against
 * what the log already proves (SnapshotWitness.check): it decodes; its MAC
 * verifies (so nobody without the installation's key can add one, e.g. as the
 * one commit past the head that `open` accepts as a crash window); it covers
 * the last `kernel.actions` frame before it, by seq AND frame hash, with no
 * kernel event since (the chain proves everything up to that frame); the
 * state hash that frame recorded is `stateHash`; and a kernel restored from
 * `state` hashes to it. The config is never taken from a snapshot: it comes
 * from the log's `kernel.open` frame (a state hash does not cover it).
 */
import { canonicalJson, type Json } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { FrameInput } from './frame.js';
import { ACTIONS_KIND, OPEN_KIND, SNAPSHOT_KIND } from './kinds.js';
import type { ReceiptKey } from './receipt-key.js';
import type { ReplayableKernel, ReplayFrame, ReplayKernel } from './replay-types.js';
import { toHex } from './sha256.js';

export const SNAPSHOT_MAC_DOMAIN = 'crustcore.ledger.snapshot.v1';

/**
 * The most frames the runtime lets pass between snapshots (measured in
 * benches/runtime-open.bench.ts, see docs/event-log.md "Snapshots"): opening
 * replays at most this many frames after the newest snapshot, and writing costs
 * one more frame (one fsync) per this many.
 */
export const DEFAULT_SNAPSHOT_EVERY_FRAMES = 2_048;

/**
 * The fewest: every `crustcore run` opens the log and checks what it appended from the newest
 * snapshot, so the frames after it are replayed twice per run (≈ 0.1–0.3 ms each); a run
 * writes about 25 frames, so this is a snapshot about every ten tasks.
 */
export const MIN_SNAPSHOT_EVERY_FRAMES = 256;

/**
 * Between the two bounds a snapshot is written only once the frames since the last one hold
 * this many times the state's bytes: a large state (many live tasks) adds at most a quarter
 * to the log, a small one is snapshotted at the lower bound.
 */
export const SNAPSHOT_BYTES_FACTOR = 4;

/**
 * Besides the bounds above, a task's compaction is followed by a snapshot when the state left
 * is this small (a CLI run's ledger holds no live task once its task ends) and at least
 * IDLE_SNAPSHOT_MIN_FRAMES frames came since the last one: every run then ends on a snapshot,
 * so the next open and its closing check replay only that run's frames, not up to
 * MIN_SNAPSHOT_EVERY_FRAMES. Costs one small frame (≈ 0.4 kB) per run.
 */
export const IDLE_SNAPSHOT_MAX_STATE_BYTES = 4_096;
export const IDLE_SNAPSHOT_MIN_FRAMES = 16;

const Hex64 = t.refinement(t.string, (s) => /^[0-9a-f]{64}$/.test(s), 'hex64');
const Seq = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 1, 'seq');
const SnapshotC = t.type({
  v: t.literal(1),
  covers: t.type({ seq: Seq, hash: Hex64 }),
  stateHash: Hex64,
  state: t.unknown,
  mac: Hex64,
});
const RecordedStateC = t.type({ state: t.string });

export interface SnapshotCovers {
  /** Seq of the `kernel.actions` frame the state follows. */
  readonly seq: number;
  /** Its frame hash (hex). */
  readonly hash: string;
}

export const snapshotMacMessage = (covers: SnapshotCovers, stateHash: string): string =>
  canonicalJson({ v: 1, covers: { seq: covers.seq, hash: covers.hash }, stateHash });

/** The snapshot frame of `kernel` right after the `kernel.actions` frame `covers`. */
export function snapshotFrame(
  key: ReceiptKey,
  covers: SnapshotCovers,
  kernel: { snapshot(): Json; stateHash(): string },
  timestampMs: number,
): FrameInput {
  const stateHash = kernel.stateHash();
  return {
    kind: SNAPSHOT_KIND,
    actor: 'runtime',
    visibility: 'internal',
    timestampMs,
    payload: {
      v: 1,
      covers: { seq: covers.seq, hash: covers.hash },
      stateHash,
      state: kernel.snapshot(),
      mac: key.mac(SNAPSHOT_MAC_DOMAIN, snapshotMacMessage(covers, stateHash)),
    },
  };
}

/** A snapshot that was checked and not trusted, and why. */
export interface UntrustedSnapshot {
  readonly seq: number;
  readonly reason: string;
}

export interface CheckedSnapshot<K> {
  readonly kernel: K;
  /** Seq of the `kernel.actions` frame the snapshot covers. */
  readonly coversSeq: number;
  /** The `kernel.open` payload the state was checked under (a replay resumed here needs it for the next snapshot). */
  readonly opening: Json;
  readonly state: Json;
  readonly stateHash: string;
  /** False when no key was given: the state was checked, its author was not. */
  readonly macChecked: boolean;
}

type Check<K> = { readonly _tag: 'Left'; readonly left: string } | { readonly _tag: 'Right'; readonly right: K };
const no = (left: string): { readonly _tag: 'Left'; readonly left: string } => ({ _tag: 'Left', left });

interface CoveredFrame {
  readonly seq: number;
  /** Raw; turned into hex only when a snapshot is checked (most actions frames never are). */
  readonly hash: Uint8Array;
  /** Decoded only when a snapshot needs it: most actions frames are never looked at. */
  readonly payload: () => Json | undefined;
}

/**
 * Remembers what the log proved before a snapshot frame (the kernel.open
 * payload, the last kernel.actions frame, whether a kernel event is still
 * unanswered) and checks a snapshot against it.
 */
export class SnapshotWitness<E, K extends ReplayableKernel<E>> {
  readonly #kernel: ReplayKernel<E, K>;
  #opening: (() => Json | undefined) | undefined;
  #covered: CoveredFrame | undefined;
  #answered = true;

  constructor(kernel: ReplayKernel<E, K>) {
    this.#kernel = kernel;
  }

  /** Feed every frame, in log order, before any snapshot that follows it. */
  observe(frame: ReplayFrame, payload: () => Json | undefined): void {
    if (frame.kind === OPEN_KIND) {
      this.#opening = payload;
      this.#covered = undefined;
      this.#answered = true;
    } else if (frame.kind === ACTIONS_KIND) {
      this.#covered = { seq: frame.seq, hash: frame.hash, payload };
      this.#answered = true;
    } else if (this.#kernel.isKernelEventKind(frame.kind)) this.#answered = false;
  }

  check(payload: Json, key: ReceiptKey | undefined): Check<CheckedSnapshot<K>> {
    const checked = this.checkDeferred(payload, key);
    return checked._tag === 'Left' ? checked : checked.right.restore();
  }

  /**
   * Every check but the costly one: the MAC, what the snapshot covers, and the state hash that
   * frame recorded. `restore` then rebuilds the kernel from the state and checks it hashes to that
   * (a state altered under a valid MAC fails there). A rebuild restores only the snapshot it
   * resumes from; a later one that passes these checks supersedes it unrestored.
   */
  checkDeferred(
    payload: Json,
    key: ReceiptKey | undefined,
  ): Check<{ readonly coversSeq: number; readonly opening: Json; readonly restore: () => Check<CheckedSnapshot<K>> }> {
    const decoded = SnapshotC.decode(payload);
    if (decoded._tag === 'Left') return no('the snapshot payload does not decode (truncated, or not a v1 snapshot)');
    const snapshot = decoded.right;
    if (
      key !== undefined &&
      !key.verify(SNAPSHOT_MAC_DOMAIN, snapshotMacMessage(snapshot.covers, snapshot.stateHash), snapshot.mac)
    ) {
      return no('the snapshot MAC does not verify: this installation did not write it');
    }
    const opening = this.#opening?.();
    if (opening === undefined) return no('the snapshot comes before the log opened a shared kernel');
    const covered = this.#covered;
    if (covered === undefined) return no(`there is no ${ACTIONS_KIND} frame since the kernel opened for it to cover`);
    if (!this.#answered) return no('a kernel event after the covered frame has no recorded answer yet');
    const coveredHash = toHex(covered.hash);
    if (snapshot.covers.seq !== covered.seq || snapshot.covers.hash !== coveredHash) {
      return no(
        `it claims to follow seq ${snapshot.covers.seq} (${snapshot.covers.hash.slice(0, 12)}…), ` +
          `but the last ${ACTIONS_KIND} frame before it is seq ${covered.seq} (${coveredHash.slice(0, 12)}…)`,
      );
    }
    const recorded = RecordedStateC.decode(covered.payload());
    if (recorded._tag === 'Left' || recorded.right.state !== snapshot.stateHash) {
      return no(`its state hash is not the one recorded at seq ${covered.seq}`);
    }
    const restore = (): Check<CheckedSnapshot<K>> => {
      const restored = this.#restore(opening, snapshot.state as Json, snapshot.stateHash, key !== undefined);
      return restored._tag === 'Left'
        ? restored
        : { _tag: 'Right', right: { ...restored.right, coversSeq: covered.seq, opening } };
    };
    return { _tag: 'Right', right: { coversSeq: covered.seq, opening, restore } };
  }

  /**
   * Starts as if the `kernel.open` frame carrying `payload` had just been observed: a check that
   * begins after it (checked-prefix.ts) takes it from the open that read it.
   */
  assumeOpened(payload: Json): void {
    this.#opening = () => payload;
    this.#covered = undefined;
    this.#answered = true;
  }

  #restore(
    opening: Json,
    state: Json,
    stateHash: string,
    macChecked: boolean,
  ): Check<Omit<CheckedSnapshot<K>, 'coversSeq' | 'opening'>> {
    const restore = this.#kernel.restore;
    if (restore === undefined) return no('this replay kernel cannot restore snapshots');
    const restored = restore(opening, state);
    if (restored._tag === 'Left') return no(restored.left);
    let actual: string;
    try {
      actual = restored.right.stateHash();
    } catch (error) {
      return no(`the restored kernel cannot hash its state: ${(error as Error).message}`);
    }
    if (actual !== stateHash) return no('the snapshot state does not hash to its state hash (altered state)');
    return { _tag: 'Right', right: { kernel: restored.right, state, stateHash, macChecked } };
  }
}
