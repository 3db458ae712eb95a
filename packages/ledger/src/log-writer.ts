/**
 * Appending to the log. Appends queue; the writer cuts a group commit,
 * seals its frames (links and hashes), writes them at the log's end, fsyncs,
 * replaces the head file, and only then resolves each append. In `durable`
 * mode a group commit is one frame; in `batched` mode it is everything queued
 * (up to `maxBatchFrames`) while the previous commit was being synced.
 *
 * Opening a log checks the head's frame, scans what follows it, cuts the log
 * back to the head's frame when a crash left anything past it (a torn frame,
 * or the one commit whose head update it cut off: never acknowledged, so
 * nothing acted on it), recording a `ledger.recovered` frame with the byte
 * count, and refuses a log whose head or tail does not check out: the runtime
 * must not build on a log that was tampered with.
 */
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
} from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { ChainCheck, type IntegrityFailure, integrityFailure } from './chain-check.js';
import { syncDirectory, writeFileAtomic } from './durable-file.js';
import {
  decodeFrame,
  type FrameInput,
  type FrameInputError,
  GENESIS_HASH,
  MAX_FRAME_BYTES,
  type PreparedFrame,
  prepareFrame,
  sealFrame,
} from './frame.js';
import { checkHeadMac, encodeHead, type HeadState, readHeadState } from './head.js';
import { RECOVERED_KIND } from './kinds.js';
import { acquireLock, type FileLock, type LockError } from './lock.js';
import type { ReceiptKey } from './receipt-key.js';
import { scanFile } from './scan.js';
import { fromHex32, nodeSha256, type Sha256, toHex } from './sha256.js';

export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
export const DEFAULT_MAX_BATCH_FRAMES = 256;
export const DEFAULT_MAX_QUEUED_FRAMES = 10_000;

export type SyncMode = 'durable' | 'batched';

export interface LedgerWriterOptions {
  readonly logPath: string;
  /** Default: the log path with `.log` replaced by `.head` (or `.head` appended). */
  readonly headPath?: string;
  /** `durable`: one fsync per append. `batched`: group commit. Default `durable`. */
  readonly mode?: SyncMode;
  readonly maxBatchFrames?: number;
  /** Appends beyond this many waiting frames fail with QueueFull instead of growing memory. */
  readonly maxQueuedFrames?: number;
  readonly maxPayloadBytes?: number;
  readonly sha256?: Sha256;
  /** MACs the head file (the installation's receipt key). */
  readonly key?: ReceiptKey;
  /** Timestamp for frames the ledger writes itself (`ledger.recovered`). */
  readonly clockMs?: () => number;
}

export type LedgerOpenError =
  | LockError
  | { readonly _tag: 'LedgerDamaged'; readonly failure: IntegrityFailure }
  | { readonly _tag: 'LedgerIoError'; readonly path: string; readonly reason: string };

export type AppendError =
  | FrameInputError
  | { readonly _tag: 'QueueFull'; readonly maxQueuedFrames: number }
  | { readonly _tag: 'LedgerClosed' }
  /** An earlier write or fsync failed; after a failed fsync nothing can be trusted, so the writer stops. */
  | { readonly _tag: 'LedgerFailed'; readonly reason: string };

export interface AppendAck {
  readonly seq: number;
  /** Hex frame hash. */
  readonly hash: string;
  /** Byte offset of the frame in the log. */
  readonly offset: number;
}

/** A frame this writer wrote and acknowledged: its seq, hash (hex) and end offset. */
export interface WrittenFrame {
  readonly seq: number;
  readonly hash: string;
  readonly end: number;
}

/** What open() found and repaired. */
export interface RecoveryReport {
  readonly truncatedBytes: number;
  /** Whole frames among them (a commit whose head update a crash cut off); 0 for a torn frame alone. */
  readonly droppedFrames: number;
  /** The head's frame: the last one kept. */
  readonly afterSeq: number;
  readonly zeroFilled: boolean;
  /** Seq of the `ledger.recovered` frame written for it. */
  readonly recoveredSeq: number;
}

/** One append call: its frames (one, or a group that commits together) and who waits for them. */
interface Pending {
  readonly frames: readonly { readonly prepared: PreparedFrame; readonly seq: number }[];
  readonly resolve: (result: Result<AppendError, readonly AppendAck[]>) => void;
}

/** A writer killed mid head-update leaves its temp file; we hold the lock, so any left is stale. */
function removeStaleHeadTemps(headPath: string): void {
  const prefix = `.${basename(headPath)}.`;
  for (const name of readdirSync(dirname(headPath))) {
    if (name.startsWith(prefix) && name.endsWith('.tmp')) rmSync(join(dirname(headPath), name), { force: true });
  }
}

export const defaultHeadPath = (logPath: string): string =>
  logPath.endsWith('.log') ? `${logPath.slice(0, -4)}.head` : `${logPath}.head`;

const ioError = (path: string, error: unknown): LedgerOpenError => ({
  _tag: 'LedgerIoError',
  path,
  reason: (error as NodeJS.ErrnoException).code ?? String(error),
});

/** Reads and checks the frame that ends at `end` (the head's frame). */
function readFrameEndingAt(fd: number, end: number, seq: number, hashHex: string, sha256: Sha256): boolean {
  if (end < 4) return false;
  const trailer = new Uint8Array(4);
  if (readSync(fd, trailer, 0, 4, end - 4) !== 4) return false;
  const length = new DataView(trailer.buffer).getUint32(0, true);
  if (length > MAX_FRAME_BYTES || length > end) return false;
  const bytes = new Uint8Array(length);
  if (readSync(fd, bytes, 0, length, end - length) !== length) return false;
  const decoded = decodeFrame(bytes, 0, sha256);
  return decoded._tag === 'Frame' && decoded.frame.seq === seq && toHex(decoded.frame.hash) === hashHex;
}

interface TailState {
  readonly lastSeq: number;
  readonly lastHash: Uint8Array;
  readonly end: number;
  readonly headSeq: number;
  /**
   * What lies past the head's frame: a torn frame, or whole frames of the one commit a crash can
   * leave between the log's fsync and the head update. None of it was acknowledged (an append
   * resolves only once the head names it), so nothing acted on it: open cuts the log back to
   * the head. (It caught the head up to whole frames before, which let anyone who can write the
   * log, without the key, add one commit of frames the next open signed as its own.)
   */
  readonly dropped:
    | { readonly offset: number; readonly bytes: number; readonly frames: number; readonly zeroFilled: boolean }
    | undefined;
}

/** Checks the head's frame and everything after it; decides what a crash left. */
function checkTail(
  fd: number,
  logPath: string,
  headState: HeadState,
  key: ReceiptKey | undefined,
  sha256: Sha256,
): Result<IntegrityFailure, TailState> {
  if (headState._tag === 'Malformed')
    return err(integrityFailure('head-mismatch', 0, `head file: ${headState.reason}`));
  const size = fstatSync(fd).size;
  let start: { seq: number; hash: Uint8Array; offset: number } | undefined;
  if (headState._tag === 'Present' && headState.head.seq > 0) {
    const head = headState.head;
    if (key !== undefined && !checkHeadMac(head, key)) {
      return err(integrityFailure('head-mismatch', head.seq, 'the head file has no valid MAC for this key'));
    }
    if (head.end > size) {
      return err(integrityFailure('truncated', head.seq, `the log is ${size} bytes; the head says ${head.end}`));
    }
    if (!readFrameEndingAt(fd, head.end, head.seq, head.hash, sha256)) {
      return err(
        integrityFailure('head-mismatch', head.seq, 'the frame at the head position is not the one the head names'),
      );
    }
    start = { seq: head.seq, hash: fromHex32(head.hash) ?? GENESIS_HASH, offset: head.end };
  }
  const check = new ChainCheck(headState, start);
  const end = scanFile(logPath, start?.offset ?? 0, sha256, (frame) => check.visit(frame));
  const report = check.finish(end, size, undefined);
  if (report.failure !== undefined) return err(report.failure);
  const headSeq = start?.seq ?? 0;
  const headEnd = start?.offset ?? 0;
  return ok({
    lastSeq: headSeq,
    lastHash: start?.hash ?? GENESIS_HASH,
    end: headEnd,
    headSeq,
    dropped:
      size > headEnd
        ? {
            offset: headEnd,
            bytes: size - headEnd,
            frames: report.lastSeq - headSeq,
            zeroFilled: report.framesPastHead === 0 && report.tornTail?.zeroFilled === true,
          }
        : undefined,
  });
}

export class LedgerWriter {
  readonly logPath: string;
  readonly headPath: string;
  readonly #file: FileHandle;
  readonly #directory: FileHandle;
  readonly #lock: FileLock;
  readonly #sha256: Sha256;
  readonly #key: ReceiptKey | undefined;
  readonly #maxBatchFrames: number;
  readonly #maxQueuedFrames: number;
  readonly #maxPayloadBytes: number;
  #nextSeq: number;
  #lastHash: Uint8Array;
  /** Seq of the last sealed frame (its hash is #lastHash). */
  #sealedSeq: number;
  #end: number;
  #queue: Pending[] = [];
  /** Frames waiting in #queue (maxQueuedFrames counts frames, not appends). */
  #queuedFrames = 0;
  #draining: Promise<void> | undefined;
  #failed: string | undefined;
  #closed = false;
  #recovery: RecoveryReport | undefined;

  private constructor(
    paths: { logPath: string; headPath: string },
    handles: { file: FileHandle; directory: FileHandle; lock: FileLock },
    tail: TailState,
    options: LedgerWriterOptions,
  ) {
    this.logPath = paths.logPath;
    this.headPath = paths.headPath;
    this.#file = handles.file;
    this.#directory = handles.directory;
    this.#lock = handles.lock;
    this.#sha256 = options.sha256 ?? nodeSha256;
    this.#key = options.key;
    const mode = options.mode ?? 'durable';
    this.#maxBatchFrames = mode === 'durable' ? 1 : Math.max(1, options.maxBatchFrames ?? DEFAULT_MAX_BATCH_FRAMES);
    this.#maxQueuedFrames = options.maxQueuedFrames ?? DEFAULT_MAX_QUEUED_FRAMES;
    this.#maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.#nextSeq = tail.lastSeq + 1;
    this.#lastHash = tail.lastHash;
    this.#sealedSeq = tail.lastSeq;
    this.#end = tail.end;
  }

  /**
   * Opens (creating if needed) a log for appending. Fails with a value when
   * the log is locked by a live writer or does not check out.
   */
  static async open(options: LedgerWriterOptions): Promise<Result<LedgerOpenError, LedgerWriter>> {
    const logPath = options.logPath;
    const headPath = options.headPath ?? defaultHeadPath(logPath);
    const sha256 = options.sha256 ?? nodeSha256;
    const directoryPath = dirname(logPath);
    try {
      mkdirSync(directoryPath, { recursive: true });
    } catch (error) {
      return err(ioError(directoryPath, error));
    }
    const lock = acquireLock(`${logPath}.lock`);
    if (lock._tag === 'Left') return lock;
    let fd: number | undefined;
    try {
      let created = false;
      try {
        fd = openSync(logPath, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o644);
        created = true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        fd = openSync(logPath, constants.O_RDWR);
      }
      // A new file's name is only durable once its directory is.
      if (created) syncDirectory(directoryPath);
      removeStaleHeadTemps(headPath);
      const tail = checkTail(fd, logPath, readHeadState(headPath), options.key, sha256);
      if (tail._tag === 'Left') {
        lock.right.release();
        return err({ _tag: 'LedgerDamaged', failure: tail.left });
      }
      if (tail.right.dropped !== undefined) {
        ftruncateSync(fd, tail.right.dropped.offset);
        fsyncSync(fd);
      }
      closeSync(fd);
      fd = undefined;
      const file = await open(logPath, constants.O_RDWR);
      const directory = await open(directoryPath, constants.O_RDONLY | constants.O_DIRECTORY);
      const writer = new LedgerWriter(
        { logPath, headPath },
        { file, directory, lock: lock.right },
        tail.right,
        options,
      );
      await writer.#afterOpen(tail.right, options.clockMs ?? Date.now);
      return ok(writer);
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      lock.right.release();
      return err(ioError(logPath, error));
    }
  }

  async #afterOpen(tail: TailState, clockMs: () => number): Promise<void> {
    const dropped = tail.dropped;
    if (dropped === undefined) return;
    const ack = await this.append({
      kind: RECOVERED_KIND,
      actor: 'runtime',
      visibility: 'internal',
      timestampMs: clockMs(),
      payload: {
        reason: dropped.frames > 0 ? 'unacknowledged commit' : 'torn tail',
        truncatedBytes: dropped.bytes,
        droppedFrames: dropped.frames,
        afterSeq: tail.lastSeq,
        zeroFilled: dropped.zeroFilled,
      },
    });
    if (ack._tag === 'Left') throw new Error(`could not record recovery: ${ack.left._tag}`);
    this.#recovery = {
      truncatedBytes: dropped.bytes,
      droppedFrames: dropped.frames,
      afterSeq: tail.lastSeq,
      zeroFilled: dropped.zeroFilled,
      recoveredSeq: ack.right.seq,
    };
  }

  /** The last frame sealed: once appends have resolved (after close), the last one acknowledged. */
  get lastFrame(): WrittenFrame {
    return { seq: this.#sealedSeq, hash: toHex(this.#lastHash), end: this.#end };
  }

  /** The seq the next append will get (appends are numbered in call order). */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** What open() recovered, if anything. */
  get recovery(): RecoveryReport | undefined {
    return this.#recovery;
  }

  /**
   * Appends one frame. Resolves after the frame (and its whole group commit)
   * is fsynced and the head file updated. Bad input fails at once, before a
   * seq is taken.
   */
  async append(input: FrameInput): Promise<Result<AppendError, AppendAck>> {
    const acks = await this.appendGroup([input]);
    return acks._tag === 'Left' ? acks : ok(acks.right[0] as AppendAck);
  }

  /**
   * Appends frames that must stand or fall together (a kernel event and its answer): consecutive
   * seqs, always in one commit, so a crash leaves all of them or none (the open cuts back to the
   * head, which names the last). Resolves with one ack per frame, in order. Bad input in any frame
   * fails the whole group at once, before a seq is taken.
   */
  appendGroup(inputs: readonly FrameInput[]): Promise<Result<AppendError, readonly AppendAck[]>> {
    const refused = this.refusal(inputs.length);
    if (refused !== undefined) return Promise.resolve(err(refused));
    if (inputs.length === 0) return Promise.resolve(ok([]));
    const prepared: PreparedFrame[] = [];
    for (const input of inputs) {
      const one = prepareFrame(input, this.#maxPayloadBytes, this.#sha256);
      if (one._tag === 'Left') return Promise.resolve(one);
      prepared.push(one.right);
    }
    const frames = prepared.map((frame) => ({ prepared: frame, seq: this.#nextSeq++ }));
    return new Promise((resolve) => {
      this.#queue.push({ frames, resolve });
      this.#queuedFrames += frames.length;
      this.#kick();
    });
  }

  /**
   * Why an append of `frames` frames made now would be refused whatever they hold (closed, failed,
   * queue full), or undefined. A caller that must not act before knowing (the spine, before it
   * steps the kernel) asks first; nothing can change the answer before its next await.
   */
  refusal(frames: number): AppendError | undefined {
    if (this.#closed) return { _tag: 'LedgerClosed' };
    if (this.#failed !== undefined) return { _tag: 'LedgerFailed', reason: this.#failed };
    if (this.#queuedFrames + frames > this.#maxQueuedFrames)
      return { _tag: 'QueueFull', maxQueuedFrames: this.#maxQueuedFrames };
    return undefined;
  }

  #kick(): void {
    if (this.#draining !== undefined) return;
    // A microtask, not a direct call: appends made in the same tick join the first commit.
    this.#draining = Promise.resolve().then(() => this.#drain());
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0 && this.#failed === undefined) await this.#commit(this.#nextBatch());
    } finally {
      this.#draining = undefined;
      if (this.#queue.length > 0) {
        if (this.#failed !== undefined) this.#failQueued();
        else this.#kick();
      }
    }
  }

  /** The next commit: whole appends, up to maxBatchFrames frames (a group larger than that alone). */
  #nextBatch(): Pending[] {
    let count = 0;
    let appends = 0;
    for (const pending of this.#queue) {
      if (appends > 0 && count + pending.frames.length > this.#maxBatchFrames) break;
      count += pending.frames.length;
      appends += 1;
    }
    this.#queuedFrames -= count;
    return this.#queue.splice(0, appends);
  }

  async #commit(batch: readonly Pending[]): Promise<void> {
    const inputs = batch.flatMap((pending) => pending.frames);
    const frames = inputs.map((input, index) => {
      const sealed = sealFrame(
        input.prepared,
        { seq: input.seq, prevHash: this.#lastHash, commit: index === inputs.length - 1 },
        this.#sha256,
      );
      this.#lastHash = sealed.hash;
      this.#sealedSeq = sealed.seq;
      return sealed;
    });
    const total = frames.reduce((sum, frame) => sum + frame.bytes.length, 0);
    const bytes = new Uint8Array(total);
    const offsets: number[] = [];
    let at = 0;
    for (const frame of frames) {
      offsets.push(this.#end + at);
      bytes.set(frame.bytes, at);
      at += frame.bytes.length;
    }
    try {
      let written = 0;
      while (written < total) {
        const { bytesWritten } = await this.#file.write(bytes, written, total - written, this.#end + written);
        written += bytesWritten;
      }
      // fdatasync: persists the data and the new size (what reading it back needs).
      await this.#file.datasync();
      this.#end += total;
      await this.#writeHead();
    } catch (error) {
      this.#failed = (error as NodeJS.ErrnoException).code ?? String(error);
      for (const pending of batch) pending.resolve(err({ _tag: 'LedgerFailed', reason: this.#failed }));
      this.#failQueued();
      return;
    }
    let index = 0;
    for (const pending of batch) {
      const acks = pending.frames.map(() => {
        const frame = frames[index]!;
        const ack = { seq: frame.seq, hash: toHex(frame.hash), offset: offsets[index]! };
        index += 1;
        return ack;
      });
      pending.resolve(ok(acks));
    }
  }

  #failQueued(): void {
    const reason = this.#failed ?? 'closed';
    this.#queuedFrames = 0;
    for (const pending of this.#queue.splice(0)) pending.resolve(err({ _tag: 'LedgerFailed', reason }));
  }

  /** Runs right after a commit (or at open), when every sealed frame is on disk. */
  async #writeHead(): Promise<void> {
    const head = { seq: this.#sealedSeq, hash: toHex(this.#lastHash), end: this.#end };
    await writeFileAtomic(this.headPath, encodeHead(head, this.#key), this.#directory);
  }

  /** Waits for queued appends, then releases the file, the directory and the lock. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#draining !== undefined) await this.#draining;
    await this.#file.close();
    await this.#directory.close();
    this.#lock.release();
  }
}
