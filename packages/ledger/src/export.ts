/**
 * JSONL export: one frame per line, lossless. Each line is canonical JSON
 * with these fields (docs/event-log.md):
 *
 *   seq, offset, length, version, commit, timestampMs, actor, kind,
 *   visibility, redaction, taskId (or null), jobId (or null),
 *   payloadLength, payloadHash, prevHash, hash, header, and one of
 *   payload (the JSON value) | payloadDropped: true | payloadBase64.
 *
 * `header` is the hex of the hashed header bytes, so anyone can check
 * `sha256(header) == hash` and `sha256(canonical payload) == payloadHash`
 * and rebuild the file byte for byte: header ‖ payload ‖ hash ‖ length (u32 LE).
 * Payloads are canonical JSON (UTF-8) by construction; a payload that is not
 * (never written by CrustCore) is exported as base64 rather than altered.
 *
 * `--redacted` drops the payload of frames whose visibility is `internal` or
 * whose redaction state is `redacted` or `contains-handles` (secret-adjacent),
 * keeping every hash and header so the chain can still be checked.
 */
import { canonicalJson, type Json } from '@crustcore/kernel';
import { type DecodedFrame, decodePayload, framePayloadBytes, TRAILER_BYTES } from './frame.js';
import { scanFile } from './scan.js';
import { nodeSha256, type Sha256, toHex } from './sha256.js';

export interface ExportOptions {
  readonly logPath: string;
  readonly redacted?: boolean;
  readonly sha256?: Sha256;
}

export type ExportResult =
  | { readonly _tag: 'Complete'; readonly frames: number }
  /** The file ends inside a frame (a crash's torn tail, or a cut: `inspect` tells which). */
  | { readonly _tag: 'IncompleteTail'; readonly frames: number; readonly offset: number }
  | { readonly _tag: 'Damaged'; readonly frames: number; readonly offset: number; readonly detail: string };

/** Whether `--redacted` drops this frame's payload. */
export const isPayloadDropped = (frame: Pick<DecodedFrame, 'visibility' | 'redaction'>): boolean =>
  frame.visibility === 'internal' || frame.redaction !== 'none';

/** One export line (without the newline). */
export function frameToJsonl(frame: DecodedFrame, redacted: boolean): string {
  const line: { [key: string]: Json } = {
    seq: frame.seq,
    offset: frame.offset,
    length: frame.length,
    version: frame.version,
    commit: frame.commit,
    timestampMs: frame.timestampMs,
    actor: frame.actor,
    kind: frame.kind,
    visibility: frame.visibility,
    redaction: frame.redaction,
    taskId: frame.taskId ?? null,
    jobId: frame.jobId ?? null,
    payloadLength: frame.length - frame.headerLength - TRAILER_BYTES,
    payloadHash: toHex(frame.payloadHash),
    prevHash: toHex(frame.prevHash),
    hash: toHex(frame.hash),
    header: toHex(frame.bytes.subarray(0, frame.headerLength)),
  };
  if (redacted && isPayloadDropped(frame)) {
    line.payloadDropped = true;
  } else {
    const payload = decodePayload(frame);
    if (payload._tag === 'Right') line.payload = payload.right;
    else line.payloadBase64 = Buffer.from(framePayloadBytes(frame)).toString('base64');
  }
  return canonicalJson(line);
}

/** Writes every frame of the log as a line; stops at a damaged frame. */
export function exportJsonl(options: ExportOptions, writeLine: (line: string) => void): ExportResult {
  const redacted = options.redacted === true;
  let frames = 0;
  const end = scanFile(options.logPath, 0, options.sha256 ?? nodeSha256, (frame) => {
    writeLine(frameToJsonl(frame, redacted));
    frames++;
    return true;
  });
  switch (end._tag) {
    case 'End':
    case 'Stopped':
      return { _tag: 'Complete', frames };
    case 'Incomplete':
      return { _tag: 'IncompleteTail', frames, offset: end.offset };
    case 'Corrupt':
      return end.zeroFilled
        ? { _tag: 'IncompleteTail', frames, offset: end.offset }
        : { _tag: 'Damaged', frames, offset: end.offset, detail: `${end.problem}: ${end.detail}` };
  }
}
