/**
 * Test helpers: temp directories, a small realistic log, and byte surgery
 * on log files for the tamper tests.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Hash32, type JobId, makeId, type TaskId } from '@crustcore/kernel';
import {
  type DecodedFrame,
  decodePayload,
  encodeFrame,
  encodeHead,
  type FrameInput,
  GENESIS_HASH,
  LedgerWriter,
  type LedgerWriterOptions,
  nodeSha256,
  ReceiptKey,
  scanBytes,
  stateDirLayout,
  toHex,
} from '../src/index.js';

export function tempDir(prefix = 'ledger-'): { readonly path: string; readonly remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const TASK: TaskId = makeId('TaskId', 'story1');

export function testKey(byte = 7): ReceiptKey {
  const key = ReceiptKey.fromBytes(new Uint8Array(32).fill(byte));
  if (key._tag === 'Left') throw new Error('key');
  return key.right;
}

export function note(seq: number, extra: Record<string, unknown> = {}): FrameInput {
  return {
    kind: 'test.note',
    actor: 'runtime',
    visibility: 'internal',
    timestampMs: 1_700_000_000_000 + seq,
    taskId: TASK,
    payload: { n: seq, text: `note ${seq}`, ...extra } as FrameInput['payload'],
  };
}

export async function openWriter(dir: string, options: Partial<LedgerWriterOptions> = {}): Promise<LedgerWriter> {
  const layout = stateDirLayout(dir);
  const opened = await LedgerWriter.open({ logPath: layout.logPath, headPath: layout.headPath, ...options });
  if (opened._tag === 'Left') throw new Error(`open failed: ${JSON.stringify(opened.left)}`);
  return opened.right;
}

export async function mustAppend(writer: LedgerWriter, input: FrameInput): Promise<number> {
  const ack = await writer.append(input);
  if (ack._tag === 'Left') throw new Error(`append failed: ${JSON.stringify(ack.left)}`);
  return ack.right.seq;
}

/** Writes `count` notes through a writer and closes it. */
export async function writeNotes(
  dir: string,
  count: number,
  options: Partial<LedgerWriterOptions> = {},
): Promise<void> {
  const writer = await openWriter(dir, options);
  for (let i = 1; i <= count; i++) await mustAppend(writer, note(writer.nextSeq));
  await writer.close();
}

export function framesOf(bytes: Uint8Array): DecodedFrame[] {
  const frames: DecodedFrame[] = [];
  scanBytes(bytes, 0, nodeSha256, (frame) => {
    frames.push(frame);
    return true;
  });
  return frames;
}

export const readLog = (dir: string): Uint8Array => new Uint8Array(readFileSync(stateDirLayout(dir).logPath));
export const writeLog = (dir: string, bytes: Uint8Array): void => writeFileSync(stateDirLayout(dir).logPath, bytes);

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export const ZERO_HASH = '0'.repeat(64) as Hash32;

// ── byte surgery for tamper tests ────────────────────────────────────────────

export interface FrameParts {
  readonly seq: number;
  readonly commit: boolean;
  readonly input: FrameInput;
}

/** The inputs a frame was written from (to re-encode it, changed or not). */
export function partsOf(frame: DecodedFrame): FrameParts {
  const payload = decodePayload(frame);
  if (payload._tag === 'Left') throw new Error(payload.left.reason);
  return {
    seq: frame.seq,
    commit: frame.commit,
    input: {
      kind: frame.kind,
      actor: frame.actor,
      visibility: frame.visibility,
      redaction: frame.redaction,
      timestampMs: frame.timestampMs,
      ...(frame.taskId === undefined ? {} : { taskId: frame.taskId as TaskId }),
      ...(frame.jobId === undefined ? {} : { jobId: frame.jobId as JobId }),
      payload: payload.right,
    },
  };
}

/** Re-encodes frames as a forger would: valid hashes, each linked to the one before. */
export function rechain(parts: readonly FrameParts[], prevHash: Uint8Array = GENESIS_HASH): Uint8Array[] {
  let prev = prevHash;
  return parts.map((part) => {
    const encoded = encodeFrame({ seq: part.seq, prevHash: prev, commit: part.commit }, part.input, nodeSha256);
    if (encoded._tag === 'Left') throw new Error(encoded.left.reason);
    prev = encoded.right.hash;
    return encoded.right.bytes;
  });
}

/** Frame byte copies, in file order. */
export const splitFrames = (bytes: Uint8Array): Uint8Array[] => framesOf(bytes).map((f) => Uint8Array.from(f.bytes));

/** A head file naming the last frame of `bytes`, MACed with `key` when given. */
export function headFor(bytes: Uint8Array, key: ReceiptKey | undefined): string {
  const last = framesOf(bytes).at(-1);
  if (last === undefined) return encodeHead({ seq: 0, hash: '0'.repeat(64), end: 0 }, key);
  return encodeHead({ seq: last.seq, hash: toHex(last.hash), end: last.offset + last.length }, key);
}
