/**
 * The event log frame, format version 1 (docs/event-log.md has the byte map).
 *
 * A frame is: length prefix, fixed header, kind, optional task/job ids,
 * payload (UTF-8 canonical JSON), frame hash, length trailer. The frame hash
 * is SHA-256 over the header bytes exactly as written (length prefix through
 * the last id byte), and the header holds SHA-256 of the payload bytes exactly
 * as written, so every byte on disk is covered without hashing the payload
 * twice, and a redacted export that drops payloads can still prove its chain.
 *
 * The decoder reads untrusted bytes: every read is bounds-checked against the
 * buffer and the frame's own length, and every failure is a typed value.
 */
import { canonicalJson, err, isId, type JobId, type Json, ok, type Result, type TaskId } from '@crustcore/kernel';
import { equalBytes, type Sha256 } from './sha256.js';

// ── model ────────────────────────────────────────────────────────────────────

export const FRAME_VERSION = 1;
/** "CCLF": CrustCore Ledger Frame. */
export const FRAME_MAGIC: readonly number[] = [0x43, 0x43, 0x4c, 0x46];
export const HASH_BYTES = 32;
/** Bytes from the length prefix through the prevHash field. */
export const FIXED_HEADER_BYTES = 98;
export const TRAILER_BYTES = HASH_BYTES + 4;
export const MAX_KIND_BYTES = 128;
export const MAX_ID_BYTES = 64;
/** Hard format bound; writers use a smaller default and put big outputs in artifacts. */
export const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
export const MIN_FRAME_BYTES = FIXED_HEADER_BYTES + 1 + TRAILER_BYTES;
export const MAX_FRAME_BYTES =
  FIXED_HEADER_BYTES + MAX_KIND_BYTES + 2 * (1 + MAX_ID_BYTES) + MAX_PAYLOAD_BYTES + TRAILER_BYTES;
/** prevHash of the first frame. */
export const GENESIS_HASH: Uint8Array = new Uint8Array(HASH_BYTES);

const FLAG_TASK = 1;
const FLAG_JOB = 2;
/** Set on the last frame of a group commit: the head file is written after it. */
const FLAG_COMMIT = 4;
const KNOWN_FLAGS = FLAG_TASK | FLAG_JOB | FLAG_COMMIT;

// Field offsets inside a frame (see docs/event-log.md).
const OFF_VERSION = 8;
const OFF_FLAGS = 9;
const OFF_ACTOR = 10;
const OFF_VISIBILITY = 11;
const OFF_REDACTION = 12;
const OFF_KIND_LENGTH = 13;
const OFF_SEQ = 14;
const OFF_TIMESTAMP = 22;
const OFF_PAYLOAD_LENGTH = 30;
const OFF_PAYLOAD_HASH = 34;
const OFF_PREV_HASH = 66;

/** Who produced a frame. The u8 code is the index + 1 (0 is never valid). */
export const ACTORS = ['runtime', 'kernel', 'tool', 'model', 'user', 'worker'] as const;
export type Actor = (typeof ACTORS)[number];
/** Who may see a frame's payload. Code = index + 1. */
export const VISIBILITIES = ['internal', 'model-visible', 'user'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
/** Whether a payload was touched by secret handling. Code = index (0 = none). */
export const REDACTIONS = ['none', 'redacted', 'contains-handles'] as const;
export type Redaction = (typeof REDACTIONS)[number];

/** What a caller appends; seq, prevHash and hashes are the ledger's business. */
export interface FrameInput {
  readonly kind: string;
  readonly actor: Actor;
  readonly visibility: Visibility;
  readonly redaction?: Redaction;
  /** Milliseconds since the epoch, stamped by the runtime. */
  readonly timestampMs: number;
  readonly taskId?: TaskId;
  readonly jobId?: JobId;
  readonly payload: Json;
}

export interface FrameInputError {
  readonly _tag: 'FrameInputError';
  readonly field:
    | 'kind'
    | 'timestampMs'
    | 'taskId'
    | 'jobId'
    | 'payload'
    | 'seq'
    | 'actor'
    | 'visibility'
    | 'redaction';
  readonly reason: string;
}

/** A frame read back from bytes. Hash fields are copies, `bytes` is a view. */
export interface DecodedFrame {
  readonly offset: number;
  readonly length: number;
  readonly version: number;
  readonly commit: boolean;
  readonly actor: Actor;
  readonly visibility: Visibility;
  readonly redaction: Redaction;
  readonly kind: string;
  readonly seq: number;
  readonly timestampMs: number;
  readonly taskId: string | undefined;
  readonly jobId: string | undefined;
  readonly payloadHash: Uint8Array;
  readonly prevHash: Uint8Array;
  readonly hash: Uint8Array;
  /** Length of the hashed header (prefix through the last id byte). */
  readonly headerLength: number;
  /** The whole frame, prefix through trailer, as stored. */
  readonly bytes: Uint8Array;
}

export type CorruptProblem =
  | 'length'
  | 'magic'
  | 'version'
  | 'flags'
  | 'actor'
  | 'visibility'
  | 'redaction'
  | 'kind'
  | 'seq'
  | 'timestamp'
  | 'id'
  | 'trailer'
  | 'payload-hash'
  | 'frame-hash';

export type FrameDecode =
  | { readonly _tag: 'Frame'; readonly frame: DecodedFrame; readonly end: number }
  /** The buffer ends inside a frame whose bytes so far are plausible: a torn write, or a cut. */
  | { readonly _tag: 'Incomplete'; readonly offset: number; readonly availableBytes: number }
  | { readonly _tag: 'Corrupt'; readonly offset: number; readonly problem: CorruptProblem; readonly detail: string };

// ── encoding ─────────────────────────────────────────────────────────────────

const KIND_PATTERN = /^[A-Za-z][A-Za-z0-9._-]*$/;
const encoder = new TextEncoder();

const inputError = (field: FrameInputError['field'], reason: string): FrameInputError => ({
  _tag: 'FrameInputError',
  field,
  reason,
});

export function isValidKind(kind: string): boolean {
  return kind.length >= 1 && kind.length <= MAX_KIND_BYTES && KIND_PATTERN.test(kind);
}

/** Canonical JSON bytes of a payload, or why it cannot be one. */
export function encodePayload(payload: Json, maxPayloadBytes: number): Result<FrameInputError, Uint8Array> {
  let text: string;
  try {
    text = canonicalJson(payload);
  } catch (error) {
    // Non-finite numbers and cycles are the caller's bug, but still a value here.
    return err(inputError('payload', `not canonical JSON: ${(error as Error).message}`));
  }
  const bytes = encoder.encode(text);
  if (bytes.length > maxPayloadBytes) {
    return err(inputError('payload', `payload is ${bytes.length} bytes, over the ${maxPayloadBytes}-byte bound`));
  }
  return ok(bytes);
}

export interface FrameChainFields {
  readonly seq: number;
  readonly prevHash: Uint8Array;
  /** Last frame of a group commit (the head file is written after it). */
  readonly commit: boolean;
}

/**
 * A checked frame input with its payload encoded and hashed: everything but
 * the chain fields. Appends prepare at call time (so bad input fails at once)
 * and seal when the group commit is cut (so the commit flag is known before
 * the frame is hashed and linked).
 */
export interface PreparedFrame {
  readonly input: FrameInput;
  readonly payloadBytes: Uint8Array;
  readonly payloadHash: Uint8Array;
}

export interface EncodedFrame {
  readonly seq: number;
  readonly bytes: Uint8Array;
  /** Frame hash (a view into `bytes`). */
  readonly hash: Uint8Array;
  readonly headerLength: number;
}

function checkInput(input: FrameInput): FrameInputError | undefined {
  if (typeof input.kind !== 'string' || !isValidKind(input.kind)) {
    return inputError('kind', 'expected 1-128 chars of [A-Za-z0-9._-], starting with a letter');
  }
  if (!Number.isSafeInteger(input.timestampMs) || input.timestampMs < 0) {
    return inputError('timestampMs', 'expected a safe integer >= 0');
  }
  if (input.taskId !== undefined && !isId('TaskId', input.taskId)) return inputError('taskId', 'not a TaskId');
  if (input.jobId !== undefined && !isId('JobId', input.jobId)) return inputError('jobId', 'not a JobId');
  if (!ACTORS.includes(input.actor)) return inputError('actor', 'unknown actor');
  if (!VISIBILITIES.includes(input.visibility)) return inputError('visibility', 'unknown visibility');
  if (input.redaction !== undefined && !REDACTIONS.includes(input.redaction)) {
    return inputError('redaction', 'unknown redaction state');
  }
  return undefined;
}

export function prepareFrame(
  input: FrameInput,
  maxPayloadBytes: number,
  sha256: Sha256,
): Result<FrameInputError, PreparedFrame> {
  const problem = checkInput(input);
  if (problem !== undefined) return err(problem);
  const payload = encodePayload(input.payload, Math.min(maxPayloadBytes, MAX_PAYLOAD_BYTES));
  if (payload._tag === 'Left') return payload;
  return ok({ input, payloadBytes: payload.right, payloadHash: sha256(payload.right) });
}

/** Lays out a prepared frame with its chain fields and hashes the header as written. */
export function sealFrame(prepared: PreparedFrame, chain: FrameChainFields, sha256: Sha256): EncodedFrame {
  const { input, payloadBytes } = prepared;
  if (!Number.isSafeInteger(chain.seq) || chain.seq < 1) throw new RangeError(`sealFrame: bad seq ${chain.seq}`);
  const kindLength = input.kind.length; // ASCII: checked by prepareFrame
  const headerLength =
    FIXED_HEADER_BYTES +
    kindLength +
    (input.taskId === undefined ? 0 : 1 + input.taskId.length) +
    (input.jobId === undefined ? 0 : 1 + input.jobId.length);
  const length = headerLength + payloadBytes.length + TRAILER_BYTES;
  const bytes = new Uint8Array(length);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, length, true);
  bytes.set(FRAME_MAGIC, 4);
  bytes[OFF_VERSION] = FRAME_VERSION;
  bytes[OFF_FLAGS] =
    (input.taskId === undefined ? 0 : FLAG_TASK) |
    (input.jobId === undefined ? 0 : FLAG_JOB) |
    (chain.commit ? FLAG_COMMIT : 0);
  bytes[OFF_ACTOR] = ACTORS.indexOf(input.actor) + 1;
  bytes[OFF_VISIBILITY] = VISIBILITIES.indexOf(input.visibility) + 1;
  bytes[OFF_REDACTION] = REDACTIONS.indexOf(input.redaction ?? 'none');
  bytes[OFF_KIND_LENGTH] = kindLength;
  view.setBigUint64(OFF_SEQ, BigInt(chain.seq), true);
  view.setBigUint64(OFF_TIMESTAMP, BigInt(input.timestampMs), true);
  view.setUint32(OFF_PAYLOAD_LENGTH, payloadBytes.length, true);
  bytes.set(prepared.payloadHash, OFF_PAYLOAD_HASH);
  bytes.set(chain.prevHash, OFF_PREV_HASH);
  let at = writeAscii(bytes, FIXED_HEADER_BYTES, input.kind);
  if (input.taskId !== undefined) {
    bytes[at++] = input.taskId.length;
    at = writeAscii(bytes, at, input.taskId);
  }
  if (input.jobId !== undefined) {
    bytes[at++] = input.jobId.length;
    at = writeAscii(bytes, at, input.jobId);
  }
  bytes.set(payloadBytes, headerLength);
  const hashAt = headerLength + payloadBytes.length;
  bytes.set(sha256(bytes.subarray(0, headerLength)), hashAt);
  view.setUint32(hashAt + HASH_BYTES, length, true);
  return { seq: chain.seq, bytes, hash: bytes.subarray(hashAt, hashAt + HASH_BYTES), headerLength };
}

/** prepareFrame + sealFrame in one step, for tools and tests that build logs directly. */
export function encodeFrame(
  chain: FrameChainFields,
  input: FrameInput,
  sha256: Sha256,
  maxPayloadBytes: number = MAX_PAYLOAD_BYTES,
): Result<FrameInputError, EncodedFrame> {
  const prepared = prepareFrame(input, maxPayloadBytes, sha256);
  return prepared._tag === 'Left' ? prepared : ok(sealFrame(prepared.right, chain, sha256));
}

function writeAscii(bytes: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) bytes[at + i] = text.charCodeAt(i);
  return at + text.length;
}

// ── decoding ─────────────────────────────────────────────────────────────────

const corrupt = (offset: number, problem: CorruptProblem, detail: string): FrameDecode => ({
  _tag: 'Corrupt',
  offset,
  problem,
  detail,
});

function readU64(view: DataView, at: number): number {
  const value = view.getBigUint64(at, true);
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(value);
}

function readAscii(bytes: Uint8Array, start: number, length: number): string | undefined {
  let out = '';
  for (let i = start; i < start + length; i++) {
    const c = bytes[i]!;
    if (c < 0x21 || c > 0x7e) return undefined;
    out += String.fromCharCode(c);
  }
  return out;
}

/**
 * Checks what can be checked from a prefix of a frame: so that bytes which
 * are merely cut off read as Incomplete while damaged bytes read as Corrupt.
 * Returns the header length once the variable part is available.
 */
function checkPrefix(
  buffer: Uint8Array,
  view: DataView,
  offset: number,
  available: number,
  length: number,
): FrameDecode | number | undefined {
  // byte(i) is only called for i < available, so nothing past the buffer is read.
  const byte = (i: number): number => buffer[offset + i]!;
  for (let i = 0; i < 4 && 4 + i < available; i++) {
    if (byte(4 + i) !== FRAME_MAGIC[i]) return corrupt(offset, 'magic', 'bad magic bytes');
  }
  if (available <= OFF_VERSION) return undefined;
  if (byte(OFF_VERSION) !== FRAME_VERSION)
    return corrupt(offset, 'version', `unknown frame version ${byte(OFF_VERSION)}`);
  if (available <= OFF_FLAGS) return undefined;
  const flags = byte(OFF_FLAGS);
  if ((flags & ~KNOWN_FLAGS) !== 0) return corrupt(offset, 'flags', `unknown flag bits ${flags}`);
  if (available <= OFF_ACTOR) return undefined;
  const actor = byte(OFF_ACTOR);
  if (actor < 1 || actor > ACTORS.length) return corrupt(offset, 'actor', `unknown actor code ${actor}`);
  if (available <= OFF_VISIBILITY) return undefined;
  const visibility = byte(OFF_VISIBILITY);
  if (visibility < 1 || visibility > VISIBILITIES.length) {
    return corrupt(offset, 'visibility', `unknown visibility code ${visibility}`);
  }
  if (available <= OFF_REDACTION) return undefined;
  const redaction = byte(OFF_REDACTION);
  if (redaction >= REDACTIONS.length) return corrupt(offset, 'redaction', `unknown redaction code ${redaction}`);
  if (available <= OFF_KIND_LENGTH) return undefined;
  const kindLength = byte(OFF_KIND_LENGTH);
  if (kindLength < 1 || kindLength > MAX_KIND_BYTES)
    return corrupt(offset, 'kind', `kind length ${kindLength} out of range`);
  if (available < FIXED_HEADER_BYTES) return undefined;
  const payloadLength = view.getUint32(offset + OFF_PAYLOAD_LENGTH, true);
  if (payloadLength > MAX_PAYLOAD_BYTES) return corrupt(offset, 'length', `payload length ${payloadLength} over bound`);
  // Walk the variable header as far as the bytes go.
  let at = FIXED_HEADER_BYTES + kindLength;
  for (const flag of [FLAG_TASK, FLAG_JOB]) {
    if ((flags & flag) === 0) continue;
    if (at >= available) return undefined;
    const idLength = byte(at);
    if (idLength < 1 || idLength > MAX_ID_BYTES) return corrupt(offset, 'id', `id length ${idLength} out of range`);
    at += 1 + idLength;
  }
  if (at + payloadLength + TRAILER_BYTES !== length) {
    return corrupt(
      offset,
      'length',
      `length prefix ${length} disagrees with the header (${at + payloadLength + TRAILER_BYTES})`,
    );
  }
  return at;
}

/**
 * Decodes the frame starting at `offset`. Never throws for any input bytes;
 * reads only inside `buffer`. `baseOffset`: where `buffer` starts in the
 * file, so reported offsets are file offsets.
 */
export function decodeFrame(buffer: Uint8Array, offset: number, sha256: Sha256, baseOffset = 0): FrameDecode {
  const decoded = decodeAt(buffer, offset, sha256);
  if (baseOffset === 0) return decoded;
  if (decoded._tag !== 'Frame') return { ...decoded, offset: decoded.offset + baseOffset };
  return { _tag: 'Frame', end: decoded.end, frame: { ...decoded.frame, offset: decoded.frame.offset + baseOffset } };
}

function decodeAt(buffer: Uint8Array, offset: number, sha256: Sha256): FrameDecode {
  const available = buffer.length - offset;
  if (available <= 0 || !Number.isSafeInteger(offset) || offset < 0)
    return { _tag: 'Incomplete', offset, availableBytes: 0 };
  if (available < 4) return { _tag: 'Incomplete', offset, availableBytes: available };
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const length = view.getUint32(offset, true);
  if (length < MIN_FRAME_BYTES || length > MAX_FRAME_BYTES)
    return corrupt(offset, 'length', `frame length ${length} out of range`);
  const prefix = checkPrefix(buffer, view, offset, available, length);
  if (typeof prefix === 'object') return prefix;
  if (prefix === undefined || available < length) return { _tag: 'Incomplete', offset, availableBytes: available };
  const headerLength = prefix;
  if (view.getUint32(offset + length - 4, true) !== length)
    return corrupt(offset, 'trailer', 'length trailer mismatch');
  const seq = readU64(view, offset + OFF_SEQ);
  if (seq < 1) return corrupt(offset, 'seq', 'seq out of range');
  const timestampMs = readU64(view, offset + OFF_TIMESTAMP);
  if (timestampMs < 0) return corrupt(offset, 'timestamp', 'timestamp out of range');
  const kindLength = buffer[offset + OFF_KIND_LENGTH]!;
  const kind = readAscii(buffer, offset + FIXED_HEADER_BYTES, kindLength);
  if (kind === undefined || !KIND_PATTERN.test(kind)) return corrupt(offset, 'kind', 'kind is not [A-Za-z0-9._-]');
  const flags = buffer[offset + OFF_FLAGS]!;
  let at = offset + FIXED_HEADER_BYTES + kindLength;
  let taskId: string | undefined;
  let jobId: string | undefined;
  if ((flags & FLAG_TASK) !== 0) {
    taskId = readAscii(buffer, at + 1, buffer[at]!);
    if (taskId === undefined) return corrupt(offset, 'id', 'task id is not printable ASCII');
    at += 1 + taskId.length;
  }
  if ((flags & FLAG_JOB) !== 0) {
    jobId = readAscii(buffer, at + 1, buffer[at]!);
    if (jobId === undefined) return corrupt(offset, 'id', 'job id is not printable ASCII');
  }
  const payloadStart = offset + headerLength;
  const hashAt = offset + length - TRAILER_BYTES;
  const payloadHash = buffer.slice(offset + OFF_PAYLOAD_HASH, offset + OFF_PAYLOAD_HASH + HASH_BYTES);
  if (!equalBytes(sha256(buffer.subarray(payloadStart, hashAt)), payloadHash)) {
    return corrupt(offset, 'payload-hash', 'payload bytes do not match the payload hash');
  }
  const hash = buffer.slice(hashAt, hashAt + HASH_BYTES);
  if (!equalBytes(sha256(buffer.subarray(offset, payloadStart)), hash)) {
    return corrupt(offset, 'frame-hash', 'header bytes do not match the frame hash');
  }
  return {
    _tag: 'Frame',
    end: offset + length,
    frame: {
      offset,
      length,
      version: FRAME_VERSION,
      commit: (flags & FLAG_COMMIT) !== 0,
      actor: ACTORS[buffer[offset + OFF_ACTOR]! - 1]!,
      visibility: VISIBILITIES[buffer[offset + OFF_VISIBILITY]! - 1]!,
      redaction: REDACTIONS[buffer[offset + OFF_REDACTION]!]!,
      kind,
      seq,
      timestampMs,
      taskId,
      jobId,
      payloadHash,
      prevHash: buffer.slice(offset + OFF_PREV_HASH, offset + OFF_PREV_HASH + HASH_BYTES),
      hash,
      headerLength,
      bytes: buffer.subarray(offset, offset + length),
    },
  };
}

/** The payload bytes of a decoded frame (a view). */
export const framePayloadBytes = (frame: DecodedFrame): Uint8Array =>
  frame.bytes.subarray(frame.headerLength, frame.length - TRAILER_BYTES);

export interface PayloadError {
  readonly _tag: 'PayloadError';
  readonly seq: number;
  readonly reason: string;
}

const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses a frame's payload and checks it is canonical JSON (what every
 * writer produces), so that exports can re-create the bytes exactly.
 */
export function decodePayload(frame: DecodedFrame): Result<PayloadError, Json> {
  let text: string;
  try {
    text = strictDecoder.decode(framePayloadBytes(frame));
  } catch {
    return err({ _tag: 'PayloadError', seq: frame.seq, reason: 'payload is not valid UTF-8' });
  }
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch {
    // Also catches stack overflow on absurd nesting.
    return err({ _tag: 'PayloadError', seq: frame.seq, reason: 'payload is not JSON' });
  }
  let canonical: string;
  try {
    canonical = canonicalJson(value);
  } catch {
    // 1e999 parses to Infinity; very deep nesting overflows the stack.
    return err({ _tag: 'PayloadError', seq: frame.seq, reason: 'payload is not representable as canonical JSON' });
  }
  if (canonical !== text) return err({ _tag: 'PayloadError', seq: frame.seq, reason: 'payload is not canonical JSON' });
  return ok(value);
}
