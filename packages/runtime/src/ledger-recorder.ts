/**
 * The task loop's recorder over `@crustcore/ledger`: kernel events become
 * frames (decoded through the kernel's io-ts codecs first, so a malformed
 * event is caught before it is written), followed by a `kernel.actions`
 * frame; notes become informational frames; bytes go to the artifact store.
 * Every text that leaves through here passes the redactor.
 */
import {
  type Action,
  decodeKernelEvent,
  type EventSeq,
  encodeActions,
  type Hash32,
  type Json,
  type Kernel,
  type KernelEvent,
  type TaskId,
} from '@crustcore/kernel';
import {
  ACTIONS_KIND,
  type AppendAck,
  type ArtifactStore,
  type FrameInput,
  type LedgerWriter,
  type ReceiptedToolOutput,
  type ReceiptIssuer,
  type ReceiptKey,
  type ReceiptRequest,
  type SnapshotCovers,
  snapshotFrame,
} from '@crustcore/ledger';
import type { PendingEvent, Recorder } from './ports.js';

export type Redact = (text: string) => string;

/**
 * The ledger refused a frame for what it holds (over the payload bound, a bad field): nothing was
 * written, the writer is fine, and the kernel did not keep the step. What asked can be told no.
 */
export class LedgerRefusedFrame extends Error {
  override readonly name = 'LedgerRefusedFrame';
}

const appendFailure = (left: unknown): Error =>
  (left as { _tag?: unknown })._tag === 'FrameInputError'
    ? new LedgerRefusedFrame(`the ledger refused the frame: ${JSON.stringify(left)}`)
    : new Error(`ledger append failed: ${JSON.stringify(left)}`);

export class LedgerRecorder implements Recorder {
  readonly #writer: LedgerWriter;
  readonly #artifacts: ArtifactStore;
  readonly #clockMs: () => number;
  readonly #redact: Redact;
  readonly #receipts: ReceiptIssuer;

  constructor(
    writer: LedgerWriter,
    artifacts: ArtifactStore,
    receipts: ReceiptIssuer,
    clockMs: () => number,
    redact: Redact = (t) => t,
  ) {
    this.#writer = writer;
    this.#artifacts = artifacts;
    this.#receipts = receipts;
    this.#clockMs = clockMs;
    this.#redact = redact;
  }

  async recordReceipt(request: ReceiptRequest): Promise<ReceiptedToolOutput> {
    // What the model sees is redacted before it is hashed and MAC'd.
    const safe = { ...request, modelText: this.#redact(request.modelText) };
    const recorded = await this.#receipts.record(this.#writer, safe, { timestampMs: this.#clockMs() });
    if (recorded._tag === 'Left') throw new Error(`ledger append failed: ${JSON.stringify(recorded.left)}`);
    return recorded.right;
  }

  async appendEvent(pending: PendingEvent): Promise<KernelEvent> {
    const { event, frame } = this.#eventFrame(pending);
    const ack = await this.#writer.append(frame);
    if (ack._tag === 'Left') throw new Error(`ledger append failed: ${JSON.stringify(ack.left)}`);
    if (ack.right.seq !== event.seq) throw new Error(`ledger seq ${ack.right.seq} != event seq ${event.seq}`);
    return event;
  }

  /**
   * A kernel event and the kernel's answer to it, in one commit: `step` runs (synchronously, on the
   * decoded event) before anything is written, and the two frames are durable together or not at
   * all. Nothing may act on the answer before this resolves. Resolves with the answer frame's ack.
   */
  async appendStep(
    pending: PendingEvent,
    step: (event: KernelEvent) => { readonly actions: readonly Action[]; readonly stateHash: Hash32 },
  ): Promise<{ readonly event: KernelEvent; readonly actions: readonly Action[]; readonly answer: AppendAck }> {
    const { event, frame } = this.#eventFrame(pending);
    // A writer that would refuse the two frames refuses before the kernel steps: nothing to undo.
    const refused = this.#writer.refusal(2);
    if (refused !== undefined) throw new Error(`ledger append failed: ${JSON.stringify(refused)}`);
    const { actions, stateHash } = step(event);
    // Nothing can append between taking the seq and here (all of it is synchronous): asserted, since
    // an event frame whose seq is not its payload's would leave a log that never replays.
    if (this.#writer.nextSeq !== event.seq)
      throw new Error(`ledger seq moved to ${this.#writer.nextSeq} under event ${event.seq}`);
    const acks = await this.#writer.appendGroup([frame, this.#answerFrame(event.seq, actions, stateHash)]);
    if (acks._tag === 'Left') throw appendFailure(acks.left);
    const [eventAck, answer] = acks.right as [AppendAck, AppendAck];
    if (eventAck.seq !== event.seq) throw new Error(`ledger seq ${eventAck.seq} != event seq ${event.seq}`);
    return { event, actions, answer };
  }

  /** The event as the next frame will carry it (its seq is the writer's next), decoded through the kernel's codec. */
  #eventFrame(pending: PendingEvent): { readonly event: KernelEvent; readonly frame: FrameInput } {
    const candidate = JSON.parse(
      this.#redact(JSON.stringify({ ...pending, seq: this.#writer.nextSeq, at: this.#clockMs() })),
    );
    const decoded = decodeKernelEvent(candidate);
    if (decoded._tag === 'Left') {
      throw new Error(`runtime built an invalid ${pending.kind} event: ${decoded.left.problems.join('; ')}`);
    }
    const event = decoded.right;
    const frame: FrameInput = {
      kind: event.kind,
      actor: 'runtime',
      visibility: 'internal',
      timestampMs: event.at,
      ...('taskId' in event ? { taskId: event.taskId } : {}),
      payload: candidate as Json,
    };
    return { event, frame };
  }

  async appendActions(forSeq: EventSeq, actions: readonly Action[], stateHash: Hash32): Promise<void> {
    await this.appendAnswer(forSeq, actions, stateHash);
  }

  /** appendActions, resolving with the frame's ack: a snapshot that follows it names its seq and hash. */
  async appendAnswer(forSeq: EventSeq, actions: readonly Action[], stateHash: Hash32): Promise<AppendAck> {
    const ack = await this.#writer.append(this.#answerFrame(forSeq, actions, stateHash));
    if (ack._tag === 'Left') throw new Error(`ledger append failed: ${JSON.stringify(ack.left)}`);
    return ack.right;
  }

  #answerFrame(forSeq: EventSeq, actions: readonly Action[], stateHash: Hash32): FrameInput {
    const first = actions.find((a) => 'taskId' in a && a.taskId !== null) as { taskId?: TaskId } | undefined;
    return {
      kind: ACTIONS_KIND,
      actor: 'kernel',
      visibility: 'internal',
      timestampMs: this.#clockMs(),
      ...(first?.taskId ? { taskId: first.taskId } : {}),
      payload: { for: forSeq, actions: JSON.parse(encodeActions(actions)) as Json, state: stateHash },
    };
  }

  /**
   * Appends a snapshot of `kernel` right after the actions frame `covers` (snapshot.ts in the
   * ledger). A state too big for one frame is not snapshotted: false, and opening replays instead.
   */
  async appendSnapshot(key: ReceiptKey, covers: SnapshotCovers, kernel: Kernel): Promise<boolean> {
    const ack = await this.#writer.append(snapshotFrame(key, covers, kernel, this.#clockMs()));
    if (ack._tag === 'Right') return true;
    if (ack.left._tag === 'FrameInputError' && ack.left.field === 'payload') return false;
    throw new Error(`ledger append failed: ${JSON.stringify(ack.left)}`);
  }

  async appendNote(kind: string, taskId: TaskId, payload: Json): Promise<void> {
    const ack = await this.#writer.append({
      kind: `note.${kind}`,
      actor: 'runtime',
      visibility: 'user',
      redaction: 'redacted',
      timestampMs: this.#clockMs(),
      taskId,
      payload: JSON.parse(this.#redact(JSON.stringify(payload))) as Json,
    });
    if (ack._tag === 'Left') throw new Error(`ledger append failed: ${JSON.stringify(ack.left)}`);
  }

  async storeArtifact(bytes: Uint8Array | string): Promise<Hash32> {
    // Text artifacts (logs, transcripts) are redacted; patches are stored as bytes, exactly.
    const data = typeof bytes === 'string' ? new TextEncoder().encode(this.#redact(bytes)) : bytes;
    const put = await this.#artifacts.put(data);
    if (put._tag === 'Left') throw new Error(`artifact store failed: ${put.left._tag}`);
    return put.right.hash;
  }
}
