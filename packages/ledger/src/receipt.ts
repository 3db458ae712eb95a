/**
 * Tool receipts. A receipt says "CrustCore ran this tool call with these
 * arguments and got this result", bound to its place in the log (eventSeq:
 * the seq of the `tool.receipt` frame that records it), chained to the
 * previous receipt, and MACed with the installation key (HMAC-SHA256 over the
 * canonical encoding). Only the ReceiptIssuer holds the key, and only it can
 * build a ReceiptedToolOutput, the one type that carries tool output to a
 * model: no receipt, no model-visible claim that a tool ran.
 *
 * Receipts carry hashes, never argument or result text, so they hold no
 * secret values.
 */
import {
  canonicalJson,
  err,
  type Hash32,
  isHash32,
  isId,
  type JobId,
  type Json,
  ok,
  type Result,
  type TaskId,
  type ToolCallId,
} from '@crustcore/kernel';
import * as t from 'io-ts';
import { RECEIPT_KIND } from './kinds.js';
import type { AppendError, LedgerWriter } from './log-writer.js';
import type { ReceiptKey } from './receipt-key.js';
import { nodeSha256, type Sha256, toHex } from './sha256.js';

export const RECEIPT_VERSION = 1;
const RECEIPT_MAC_DOMAIN = 'crustcore.receipt.v1';
export const MAX_RECEIPT_ARTIFACTS = 64;
export const GENESIS_RECEIPT_HASH = '0'.repeat(64) as Hash32;

// ── model ────────────────────────────────────────────────────────────────────

export interface ToolReceipt {
  readonly v: typeof RECEIPT_VERSION;
  readonly taskId: TaskId;
  readonly jobId: JobId | null;
  readonly toolCallId: ToolCallId;
  readonly toolNameHash: Hash32;
  readonly argsHash: Hash32;
  readonly resultHash: Hash32;
  readonly artifactHashes: readonly Hash32[];
  readonly eventSeq: number;
  readonly prevReceiptHash: Hash32;
  /** Hex HMAC-SHA256 of the canonical encoding of every other field. */
  readonly mac: string;
}

export type ReceiptError =
  | { readonly _tag: 'ReceiptMalformed'; readonly reason: string }
  | { readonly _tag: 'ReceiptBadMac' };

const refine = <A>(name: string, is: (u: unknown) => u is A) =>
  new t.Type<A, A, unknown>(
    name,
    is,
    (u, c) => (is(u) ? t.success(u) : t.failure(u, c, `expected ${name}`)),
    (a) => a,
  );
const Hash32C = refine<Hash32>('Hash32', isHash32);
const TaskIdC = refine<TaskId>('TaskId', (u): u is TaskId => isId('TaskId', u));
const JobIdC = refine<JobId>('JobId', (u): u is JobId => isId('JobId', u));
const ToolCallIdC = refine<ToolCallId>('ToolCallId', (u): u is ToolCallId => isId('ToolCallId', u));
const SeqC = refine<number>('EventSeq', (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= 1);
const ToolReceiptC = t.strict({
  v: t.literal(RECEIPT_VERSION),
  taskId: TaskIdC,
  jobId: t.union([JobIdC, t.null]),
  toolCallId: ToolCallIdC,
  toolNameHash: Hash32C,
  argsHash: Hash32C,
  resultHash: Hash32C,
  artifactHashes: t.refinement(t.readonlyArray(Hash32C), (a) => a.length <= MAX_RECEIPT_ARTIFACTS, 'bounded list'),
  eventSeq: SeqC,
  prevReceiptHash: Hash32C,
  mac: Hash32C,
});

// ── encoding ─────────────────────────────────────────────────────────────────

/** The exact text the MAC covers: canonical JSON of every field but `mac`. */
export function receiptMacMessage(receipt: Omit<ToolReceipt, 'mac'>): string {
  return canonicalJson({
    v: receipt.v,
    taskId: receipt.taskId,
    jobId: receipt.jobId,
    toolCallId: receipt.toolCallId,
    toolNameHash: receipt.toolNameHash,
    argsHash: receipt.argsHash,
    resultHash: receipt.resultHash,
    artifactHashes: [...receipt.artifactHashes],
    eventSeq: receipt.eventSeq,
    prevReceiptHash: receipt.prevReceiptHash,
  });
}

export const receiptToJson = (receipt: ToolReceipt): Json => JSON.parse(canonicalJson(receiptJson(receipt))) as Json;

function receiptJson(receipt: ToolReceipt): Json {
  return { ...JSON.parse(receiptMacMessage(receipt)), mac: receipt.mac } as Json;
}

/** What the next receipt's prevReceiptHash (and ToolCallCompleted.receiptHash) names. */
export function receiptHash(receipt: ToolReceipt, sha256: Sha256 = nodeSha256): Hash32 {
  return toHex(sha256(new TextEncoder().encode(canonicalJson(receiptJson(receipt))))) as Hash32;
}

/** Decodes an untrusted receipt (a log payload). Does not check the MAC. */
export function decodeToolReceipt(value: unknown): Result<ReceiptError, ToolReceipt> {
  const decoded = ToolReceiptC.decode(value);
  if (decoded._tag === 'Left') {
    const first = decoded.left[0];
    const path =
      first?.context
        .map((c) => c.key)
        .filter((k) => k !== '')
        .join('.') ?? '';
    return err({ _tag: 'ReceiptMalformed', reason: `${path || '(root)'}: ${first?.message ?? 'invalid'}` });
  }
  return ok(decoded.right as ToolReceipt);
}

/** Checks a receipt's MAC with the installation key; returns its hash. */
export function verifyReceipt(
  key: ReceiptKey,
  receipt: ToolReceipt,
  sha256: Sha256 = nodeSha256,
): Result<ReceiptError, Hash32> {
  if (!key.verify(RECEIPT_MAC_DOMAIN, receiptMacMessage(receipt), receipt.mac)) return err({ _tag: 'ReceiptBadMac' });
  return ok(receiptHash(receipt, sha256));
}

// ── the issuer and the output it vouches for ─────────────────────────────────

/** Module-private: only code in this file can name it, so only the issuer builds outputs. */
const issuedByReceiptIssuer: unique symbol = Symbol('issued by ReceiptIssuer');

/**
 * Tool output a model may see, with the receipt that vouches for it. A class
 * with ES private fields: a plain object cannot stand in for one, and the
 * constructor refuses any caller but the ReceiptIssuer.
 */
export class ReceiptedToolOutput {
  readonly #receipt: ToolReceipt;
  readonly #receiptHash: Hash32;
  readonly #text: string;

  constructor(token: typeof issuedByReceiptIssuer, receipt: ToolReceipt, hash: Hash32, text: string) {
    if (token !== issuedByReceiptIssuer) throw new TypeError('only a ReceiptIssuer can build a ReceiptedToolOutput');
    this.#receipt = receipt;
    this.#receiptHash = hash;
    this.#text = text;
  }

  /** What the model is shown. */
  get text(): string {
    return this.#text;
  }

  get receipt(): ToolReceipt {
    return this.#receipt;
  }

  get receiptHash(): Hash32 {
    return this.#receiptHash;
  }

  static isReceipted(value: unknown): value is ReceiptedToolOutput {
    return typeof value === 'object' && value !== null && #receipt in value;
  }

  toJSON(): { readonly text: string; readonly receiptHash: Hash32 } {
    return { text: this.#text, receiptHash: this.#receiptHash };
  }
}

export interface ReceiptRequest {
  readonly taskId: TaskId;
  readonly jobId?: JobId;
  readonly toolCallId: ToolCallId;
  readonly toolName: string;
  readonly args: Json;
  /** The tool's full result bytes (hashed, never stored in the receipt). */
  readonly result: Uint8Array | string;
  /** What the model is shown: the result itself, or an output handle's rendering. */
  readonly modelText: string;
  readonly artifactHashes?: readonly Hash32[];
}

const utf8 = new TextEncoder();

/** Holds the key; the only maker of receipts and of ReceiptedToolOutput. */
export class ReceiptIssuer {
  readonly #key: ReceiptKey;
  readonly #sha256: Sha256;
  #prevReceiptHash: Hash32;

  /** `prevReceiptHash`: the last receipt in the log (see lastReceiptHash), or genesis. */
  constructor(key: ReceiptKey, options: { readonly prevReceiptHash?: Hash32; readonly sha256?: Sha256 } = {}) {
    this.#key = key;
    this.#sha256 = options.sha256 ?? nodeSha256;
    this.#prevReceiptHash = options.prevReceiptHash ?? GENESIS_RECEIPT_HASH;
  }

  get prevReceiptHash(): Hash32 {
    return this.#prevReceiptHash;
  }

  #hashText(text: string | Uint8Array): Hash32 {
    return toHex(this.#sha256(typeof text === 'string' ? utf8.encode(text) : text)) as Hash32;
  }

  /**
   * Issues the receipt for a tool call recorded at `eventSeq` and advances the
   * receipt chain. Prefer `record`, which appends the receipt frame too.
   */
  issue(request: ReceiptRequest & { readonly eventSeq: number }): ReceiptedToolOutput {
    if (!Number.isSafeInteger(request.eventSeq) || request.eventSeq < 1) throw new RangeError('eventSeq must be >= 1');
    const artifacts = request.artifactHashes ?? [];
    if (artifacts.length > MAX_RECEIPT_ARTIFACTS) throw new RangeError(`at most ${MAX_RECEIPT_ARTIFACTS} artifacts`);
    const unsigned: Omit<ToolReceipt, 'mac'> = {
      v: RECEIPT_VERSION,
      taskId: request.taskId,
      jobId: request.jobId ?? null,
      toolCallId: request.toolCallId,
      toolNameHash: this.#hashText(request.toolName),
      argsHash: this.#hashText(canonicalJson(request.args)),
      resultHash: this.#hashText(request.result),
      artifactHashes: [...artifacts],
      eventSeq: request.eventSeq,
      prevReceiptHash: this.#prevReceiptHash,
    };
    const receipt: ToolReceipt = { ...unsigned, mac: this.#key.mac(RECEIPT_MAC_DOMAIN, receiptMacMessage(unsigned)) };
    const hash = receiptHash(receipt, this.#sha256);
    this.#prevReceiptHash = hash;
    return new ReceiptedToolOutput(issuedByReceiptIssuer, receipt, hash, request.modelText);
  }

  /**
   * Issues a receipt and appends it as a `tool.receipt` frame whose seq is
   * the receipt's eventSeq. Resolves once the frame is durable.
   */
  async record(
    writer: LedgerWriter,
    request: ReceiptRequest,
    frame: { readonly timestampMs: number },
  ): Promise<Result<AppendError, ReceiptedToolOutput>> {
    const before = this.#prevReceiptHash;
    const seq = writer.nextSeq;
    const output = this.issue({ ...request, eventSeq: seq });
    const appended = writer.append({
      kind: RECEIPT_KIND,
      actor: 'runtime',
      visibility: 'internal',
      timestampMs: frame.timestampMs,
      taskId: request.taskId,
      ...(request.jobId === undefined ? {} : { jobId: request.jobId }),
      payload: receiptToJson(output.receipt),
    });
    // Rejected before taking a seq (bad input, full queue): the receipt never existed.
    if (writer.nextSeq === seq) this.#prevReceiptHash = before;
    const ack = await appended;
    if (ack._tag === 'Left') return ack;
    if (ack.right.seq !== seq) throw new Error(`receipt frame got seq ${ack.right.seq}, expected ${seq}`);
    return ok(output);
  }
}
