/**
 * Inspecting a log: the chain and head (chain-check.ts), then, frame by
 * frame, what the payloads promise: canonical JSON, receipts (MAC, chain,
 * place in the log), referenced artifacts (present and intact), kernel event
 * headers, and optionally a full replay. Read-only: a torn tail is reported
 * (the writer truncates it when it next opens the log), never "fixed" here.
 *
 * Artifact references: any payload field, at any depth, named `artifact`,
 * ending in `Artifact` (e.g. `stdoutArtifact`) or named `artifacts` (a list),
 * whose value is a 64-hex SHA-256, plus a receipt's `artifactHashes`.
 * Receipt references: a top-level `receiptHash` in any frame but a receipt
 * must name a receipt recorded earlier in the log (for the same tool call).
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isHash32, type Json } from '@crustcore/kernel';
import { type ArtifactError, ArtifactStore, describeArtifactError } from './artifacts.js';
import { ChainCheck, type ChainReport, type IntegrityFailure, integrityFailure } from './chain-check.js';
import type { CheckedPrefix, ReceiptRef } from './checked-prefix.js';
import { type DecodedFrame, decodePayload } from './frame.js';
import { readHeadState } from './head.js';
import { RECEIPT_KIND, SNAPSHOT_KIND } from './kinds.js';
import { defaultHeadPath, type WrittenFrame } from './log-writer.js';
import { decodeToolReceipt, GENESIS_RECEIPT_HASH, receiptHash, verifyReceipt } from './receipt.js';
import type { ReceiptKey } from './receipt-key.js';
import { checkEventHeader, type ReplayableKernel, Replayer, type ReplayKernel, type ReplaySummary } from './replay.js';
import { scanFile } from './scan.js';
import { nodeSha256, type Sha256, toHex } from './sha256.js';
import { SnapshotWitness, type UntrustedSnapshot } from './snapshot.js';
import { StoryBuilder, type TaskStory } from './story.js';

export interface InspectOptions<E = unknown> {
  readonly logPath: string;
  readonly headPath?: string;
  /** Default: `artifacts/` next to the log. */
  readonly artifactsDir?: string;
  /** Needed to check receipts and the head MAC; without it a log holding receipts fails. */
  readonly key?: ReceiptKey;
  /** The kernel: its event kinds get header checks; with `replay`, a full replay. */
  readonly kernel?: ReplayKernel<E>;
  readonly replay?: boolean;
  /** Tell only this task's story. */
  readonly taskId?: string;
  /**
   * Check only what came after this trusted snapshot frame (a run's own check of what it
   * appended, whatever the log's length): every frame's bytes are still chain-checked (the
   * head MAC covers them, so earlier payloads cannot have changed), but receipts MACs,
   * artifacts, event headers, stories and the replay start at the snapshot, which must be a
   * snapshot that verifies; the replay resumes from its state. Undefined: the whole log.
   */
  readonly fromSnapshot?: number;
  /**
   * What this process's open of the log proved (`RebuiltKernel.checkedPrefix`): the check starts
   * right after `resume.after` (its chain anchored on that frame's hash, its receipts and
   * `kernel.open` payload carried over) and checks from `resume.snapshotSeq` on as
   * `fromSnapshot` does, so a run's own check does not read the log's history again. The frames
   * before it are chain-checked by every open, and by a full `inspect`.
   */
  readonly resume?: CheckedPrefix;
  /**
   * The last frame the caller's own writer acknowledged (`LedgerWriter.lastFrame` at close): the
   * log must still hold it, byte for byte where it was, and the head must name it or a later
   * frame. Otherwise the frames the caller wrote were cut back or rewritten — with a genuine
   * older head put back, what follows it would pass as the one commit a crash may leave.
   */
  readonly until?: WrittenFrame;
  readonly sha256?: Sha256;
}

export interface InspectReport {
  readonly ok: boolean;
  /** The first bad seq and why; undefined when intact. */
  readonly failure: IntegrityFailure | undefined;
  readonly chain: ChainReport;
  readonly receiptsChecked: number;
  readonly artifactsChecked: number;
  readonly kernelEventsChecked: number;
  readonly replay: ReplaySummary | undefined;
  /**
   * Snapshot frames and those that do not verify (never trusted by `open`, which replays past
   * them). Without --replay a bad snapshot is reported here, not as a failure: the log itself
   * is intact. With --replay each snapshot must equal the replayed state (else replay-divergence).
   */
  readonly snapshots: { readonly total: number; readonly untrusted: readonly UntrustedSnapshot[] };
  readonly tasks: readonly TaskStory[];
}

/** Field names that hold artifact hashes (see the module comment). */
export function isArtifactField(name: string): boolean {
  return name === 'artifact' || name === 'artifacts' || name.endsWith('Artifact');
}

/** Every artifact hash a payload references, by the naming convention. */
export function artifactReferences(payload: Json, found: Set<string> = new Set(), depth = 0): Set<string> {
  if (depth > 64 || typeof payload !== 'object' || payload === null) return found;
  if (Array.isArray(payload)) {
    for (const item of payload) artifactReferences(item, found, depth + 1);
    return found;
  }
  for (const [name, value] of Object.entries(payload as { readonly [k: string]: Json | undefined })) {
    if (value === undefined) continue;
    if (isArtifactField(name)) {
      if (isHash32(value)) found.add(value);
      else if (Array.isArray(value)) for (const item of value) if (isHash32(item)) found.add(item);
    }
    artifactReferences(value, found, depth + 1);
  }
  return found;
}

type ReceiptRecord = ReceiptRef;

/** The per-frame checks on decoded payloads. Collects the first failure only. */
class PayloadChecks<E> {
  readonly #options: InspectOptions<E>;
  readonly #store: ArtifactStore;
  readonly #sha256: Sha256;
  readonly #artifactResults = new Map<string, ArtifactError | undefined>();
  readonly #receipts = new Map<string, ReceiptRecord>();
  readonly #replayer: Replayer<E> | undefined;
  readonly #witness: SnapshotWitness<E, ReplayableKernel<E>> | undefined;
  readonly stories: StoryBuilder;
  readonly untrustedSnapshots: UntrustedSnapshot[] = [];
  snapshots = 0;
  /** Whether the scope's snapshot was met (options.fromSnapshot). */
  resumed = false;
  #lastReceiptHash: string = GENESIS_RECEIPT_HASH;
  failure: IntegrityFailure | undefined;
  receiptsChecked = 0;
  kernelEventsChecked = 0;

  constructor(options: InspectOptions<E>, sha256: Sha256) {
    this.#options = options;
    this.#sha256 = sha256;
    this.#store = new ArtifactStore(options.artifactsDir ?? join(dirname(options.logPath), 'artifacts'), { sha256 });
    const kernel = options.kernel;
    this.#replayer =
      options.replay === true && kernel !== undefined ? new Replayer(kernel, { key: options.key }) : undefined;
    this.#witness = kernel !== undefined ? new SnapshotWitness(kernel) : undefined;
    this.stories = new StoryBuilder(options.taskId);
    const resume = options.resume;
    if (resume !== undefined) {
      this.#lastReceiptHash = resume.lastReceiptHash;
      for (const [hash, receipt] of resume.receipts) this.#receipts.set(hash, receipt);
      this.#witness?.assumeOpened(resume.opening);
    }
  }

  get artifactsChecked(): number {
    return this.#artifactResults.size;
  }

  visit(frame: DecodedFrame): void {
    if (this.failure !== undefined) return;
    const from = this.#options.resume?.snapshotSeq ?? this.#options.fromSnapshot;
    if (from !== undefined && frame.seq < from) {
      this.#skim(frame);
      return;
    }
    const payload = decodePayload(frame);
    if (payload._tag === 'Left') {
      this.failure = integrityFailure('bad-payload', frame.seq, payload.left.reason, frame.offset);
      return;
    }
    if (frame.seq === from) {
      this.failure = this.#resumeAt(frame, payload.right);
      return;
    }
    this.failure = this.#check(frame, payload.right);
    if (this.failure !== undefined) return;
    this.stories.feed(frame, payload.right);
    this.#checkSnapshot(frame, payload.right);
    if (this.#replayer !== undefined) this.failure = this.#replayer.feed(frame, payload.right);
  }

  /**
   * A frame before the scope: its bytes are chain-checked; only what later frames depend on is
   * kept (the receipt chain and the receipts later frames may name, what a snapshot covers).
   */
  #skim(frame: DecodedFrame): void {
    const payload = (): Json | undefined => {
      const decoded = decodePayload(frame);
      return decoded._tag === 'Right' ? decoded.right : undefined;
    };
    this.#witness?.observe(frame, payload);
    if (frame.kind !== RECEIPT_KIND) return;
    const receipt = decodeToolReceipt(payload());
    if (receipt._tag === 'Left') return;
    this.#lastReceiptHash = receiptHash(receipt.right, this.#sha256);
    this.#receipts.set(this.#lastReceiptHash, { toolCallId: receipt.right.toolCallId, taskId: receipt.right.taskId });
  }

  /** The scope's first frame: a snapshot that verifies, which the replay continues from. */
  #resumeAt(frame: DecodedFrame, payload: Json): IntegrityFailure | undefined {
    const bad = (detail: string) => integrityFailure('replay-divergence', frame.seq, detail, frame.offset);
    if (frame.kind !== SNAPSHOT_KIND || this.#witness === undefined) {
      return bad(`the check was to start at a ${SNAPSHOT_KIND} frame, but seq ${frame.seq} is ${frame.kind}`);
    }
    this.snapshots++;
    const checked = this.#witness.check(payload, this.#options.key);
    if (checked._tag === 'Left') return bad(`${SNAPSHOT_KIND} is not trustworthy: ${checked.left}`);
    if (!checked.right.macChecked) return bad('no receipt key to check the snapshot MAC');
    this.#replayer?.resume(checked.right.kernel, frame.seq, checked.right.opening);
    this.resumed = true;
    return undefined;
  }

  /** What `open` would decide about a snapshot (the replay, if any, compares it as well). */
  #checkSnapshot(frame: DecodedFrame, payload: Json): void {
    if (frame.kind !== SNAPSHOT_KIND) {
      this.#witness?.observe(frame, () => payload);
      return;
    }
    this.snapshots++;
    if (this.#witness === undefined) return;
    const checked = this.#witness.check(payload, this.#options.key);
    if (checked._tag === 'Left') this.untrustedSnapshots.push({ seq: frame.seq, reason: checked.left });
    else if (!checked.right.macChecked) {
      this.untrustedSnapshots.push({ seq: frame.seq, reason: 'no receipt key to check the snapshot MAC' });
    }
  }

  #check(frame: DecodedFrame, payload: Json): IntegrityFailure | undefined {
    const kernel = this.#options.kernel;
    if (kernel?.isKernelEventKind(frame.kind) === true) {
      this.kernelEventsChecked++;
      const problem = checkEventHeader(frame, payload);
      if (problem !== undefined) return integrityFailure('bad-payload', frame.seq, problem, frame.offset);
    }
    if (frame.kind === RECEIPT_KIND) {
      const failure = this.#checkReceipt(frame, payload);
      if (failure !== undefined) return failure;
    } else {
      const failure = this.#checkReceiptReference(frame, payload);
      if (failure !== undefined) return failure;
    }
    return this.#checkArtifacts(frame, artifactReferences(payload));
  }

  #checkReceipt(frame: DecodedFrame, payload: Json): IntegrityFailure | undefined {
    const bad = (detail: string) => integrityFailure('bad-receipt', frame.seq, detail, frame.offset);
    const decoded = decodeToolReceipt(payload);
    if (decoded._tag === 'Left') {
      return bad(`malformed receipt: ${decoded.left._tag === 'ReceiptMalformed' ? decoded.left.reason : 'bad MAC'}`);
    }
    const receipt = decoded.right;
    const key = this.#options.key;
    if (key === undefined) return bad('no receipt key: receipts cannot be checked (pass --key or set CRUSTCORE_HOME)');
    const verified = verifyReceipt(key, receipt, this.#sha256);
    if (verified._tag === 'Left') return bad('receipt MAC does not verify: forged or altered');
    if (receipt.eventSeq !== frame.seq) {
      return bad(`receipt claims seq ${receipt.eventSeq} but is recorded at seq ${frame.seq} (moved or replayed)`);
    }
    if (receipt.prevReceiptHash !== this.#lastReceiptHash) {
      return bad('receipt does not link to the previous receipt (one was removed, reordered or replayed)');
    }
    if (frame.taskId !== undefined && frame.taskId !== receipt.taskId)
      return bad('receipt task differs from its frame');
    if (frame.jobId !== undefined && frame.jobId !== receipt.jobId) return bad('receipt job differs from its frame');
    this.#lastReceiptHash = verified.right;
    this.#receipts.set(verified.right, { toolCallId: receipt.toolCallId, taskId: receipt.taskId });
    this.receiptsChecked++;
    const artifacts = this.#checkArtifacts(frame, new Set(receipt.artifactHashes));
    return artifacts;
  }

  #checkReceiptReference(frame: DecodedFrame, payload: Json): IntegrityFailure | undefined {
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
    const fields = payload as { readonly [k: string]: Json | undefined };
    const hash = fields.receiptHash;
    if (hash === undefined) return undefined;
    const record = typeof hash === 'string' ? this.#receipts.get(hash) : undefined;
    if (record === undefined) {
      return integrityFailure(
        'bad-receipt',
        frame.seq,
        `names receipt ${String(hash).slice(0, 64)}, which the log does not hold`,
        frame.offset,
      );
    }
    if (typeof fields.toolCallId === 'string' && fields.toolCallId !== record.toolCallId) {
      return integrityFailure(
        'bad-receipt',
        frame.seq,
        `receipt is for ${record.toolCallId}, not ${fields.toolCallId}`,
        frame.offset,
      );
    }
    return undefined;
  }

  #checkArtifacts(frame: DecodedFrame, hashes: ReadonlySet<string>): IntegrityFailure | undefined {
    for (const hash of hashes) {
      let result = this.#artifactResults.get(hash);
      if (!this.#artifactResults.has(hash)) {
        const checked = this.#store.check(hash);
        result = checked._tag === 'Left' ? checked.left : undefined;
        this.#artifactResults.set(hash, result);
      }
      if (result !== undefined) {
        const reason = result._tag === 'ArtifactMissing' ? 'missing-artifact' : 'bad-artifact';
        return integrityFailure(reason, frame.seq, describeArtifactError(result), frame.offset);
      }
    }
    return undefined;
  }

  finishReplay(): { failure: IntegrityFailure | undefined; summary: ReplaySummary } | undefined {
    return this.#replayer?.finish();
  }
}

/** InspectOptions.until: the caller's last acknowledged frame is still in the log, and the head at or past it. */
class UntilCheck {
  readonly #until: WrittenFrame | undefined;
  #found = false;

  constructor(until: WrittenFrame | undefined) {
    this.#until = until;
  }

  visit(frame: DecodedFrame): void {
    const until = this.#until;
    if (until === undefined || frame.seq !== until.seq) return;
    this.#found = toHex(frame.hash) === until.hash && frame.offset + frame.length === until.end;
  }

  finish(chain: ChainReport): IntegrityFailure | undefined {
    const until = this.#until;
    if (until === undefined || until.seq === 0) return undefined;
    if (!this.#found) {
      return integrityFailure(
        'head-mismatch',
        until.seq,
        `the log no longer holds frame ${until.seq} as it was written and acknowledged (cut back or rewritten)`,
      );
    }
    const headSeq = chain.head._tag === 'Present' ? chain.head.head.seq : 0;
    if (headSeq < until.seq) {
      return integrityFailure(
        'head-mismatch',
        until.seq,
        `the head names frame ${headSeq}, before frame ${until.seq} that was acknowledged (the head was rolled back)`,
      );
    }
    return undefined;
  }
}

/** Checks a whole log. Never throws for bad log content; I/O errors (no such file) do throw. */
export function inspectLog<E>(options: InspectOptions<E>): InspectReport {
  const sha256 = options.sha256 ?? nodeSha256;
  const headState = readHeadState(options.headPath ?? defaultHeadPath(options.logPath));
  const resume = options.resume;
  const chain = new ChainCheck(headState, resume?.after);
  const checks = new PayloadChecks(options, sha256);
  const fd = openSync(options.logPath, 'r');
  let size: number;
  try {
    size = fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
  const until = new UntilCheck(options.until);
  const end = scanFile(options.logPath, resume?.after.offset ?? 0, sha256, (frame) => {
    const accepted = chain.acceptedFrames;
    const more = chain.visit(frame);
    if (chain.acceptedFrames > accepted) {
      checks.visit(frame);
      until.visit(frame);
    }
    return more;
  });
  const chainReport = chain.finish(end, size, options.key);
  const replay = chainReport.failure === undefined ? checks.finishReplay() : undefined;
  const from = resume?.snapshotSeq ?? options.fromSnapshot;
  // A scope whose snapshot is not in the log would check nothing: that is a failure, not a pass.
  const unmet =
    from !== undefined && !checks.resumed && checks.failure === undefined
      ? integrityFailure('replay-divergence', from, `the log holds no ${SNAPSHOT_KIND} frame at seq ${from}`)
      : undefined;
  const failures = [checks.failure, replay?.failure, chainReport.failure, unmet, until.finish(chainReport)].filter(
    (f): f is IntegrityFailure => f !== undefined,
  );
  // The first bad seq wins; at equal seqs, the order above (payload, replay, chain).
  const failure = failures.reduce<IntegrityFailure | undefined>(
    (first, f) => (first === undefined || f.seq < first.seq ? f : first),
    undefined,
  );
  return {
    ok: failure === undefined,
    failure,
    chain: chainReport,
    receiptsChecked: checks.receiptsChecked,
    artifactsChecked: checks.artifactsChecked,
    kernelEventsChecked: checks.kernelEventsChecked,
    replay: replay?.summary,
    snapshots: { total: checks.snapshots, untrusted: checks.untrustedSnapshots },
    tasks: checks.stories.stories(),
  };
}

/**
 * The hash of the last receipt in a log (genesis when none), so a restarted
 * runtime's ReceiptIssuer continues the chain. Reads the log up to its
 * first bad frame.
 */
export function findLastReceiptHash(logPath: string, sha256: Sha256 = nodeSha256): string {
  let last: string = GENESIS_RECEIPT_HASH;
  scanFile(logPath, 0, sha256, (frame) => {
    if (frame.kind !== RECEIPT_KIND) return true;
    const payload = decodePayload(frame);
    if (payload._tag === 'Left') return true;
    const receipt = decodeToolReceipt(payload.right);
    if (receipt._tag === 'Right') last = receiptHash(receipt.right, sha256);
    return true;
  });
  return last;
}
