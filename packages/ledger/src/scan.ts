/**
 * Reading frames out of a log, from memory or from a file in bounded chunks.
 * Scanning only decodes and checks each frame's own bytes; the chain rules
 * (seq order, links, head) live in chain-check.ts.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { type CorruptProblem, type DecodedFrame, decodeFrame, MAX_FRAME_BYTES } from './frame.js';
import type { Sha256 } from './sha256.js';

/** How a scan ended. `zeroFilled`: every byte from `offset` to the end is zero. */
export type ScanEnd =
  | { readonly _tag: 'End'; readonly offset: number }
  | {
      readonly _tag: 'Incomplete';
      readonly offset: number;
      readonly availableBytes: number;
      readonly zeroFilled: boolean;
    }
  | {
      readonly _tag: 'Corrupt';
      readonly offset: number;
      readonly problem: CorruptProblem;
      readonly detail: string;
      readonly zeroFilled: boolean;
      /**
       * A whole page (PAGE_BYTES, aligned in the file; the last one may be short) from `offset` on
       * is zero: what a crash leaves when some pages of a write reached the disk and others not.
       */
      readonly zeroPage: boolean;
    }
  /** The visitor asked to stop at `offset`. */
  | { readonly _tag: 'Stopped'; readonly offset: number };

/**
 * Return false to stop the scan. Frames' `bytes` are views into the scanned buffer; `scanFile`
 * reads each chunk into a new buffer and never writes into one it has handed out, so a kept
 * frame stays valid (and keeps its chunk alive: keep few, or copy).
 */
export type FrameVisitor = (frame: DecodedFrame) => boolean;

function allZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** The page a filesystem writes back as a unit (the smallest common one). */
export const PAGE_BYTES = 4096;

/** Whether some page-aligned block of `bytes` (file offsets `base`…) at or after `offset` is all zero. */
function hasZeroPage(bytes: Uint8Array, base: number, offset: number): boolean {
  const end = base + bytes.length;
  for (let page = Math.ceil(offset / PAGE_BYTES) * PAGE_BYTES; page < end; page += PAGE_BYTES) {
    if (allZero(bytes.subarray(page - base, Math.min(page + PAGE_BYTES, end) - base))) return true;
  }
  return false;
}

/** hasZeroPage over a file's bytes from `offset` to its end, read a page at a time. */
function fileHasZeroPage(fd: number, offset: number, size: number): boolean {
  const page = new Uint8Array(PAGE_BYTES);
  for (let at = Math.ceil(offset / PAGE_BYTES) * PAGE_BYTES; at < size; at += PAGE_BYTES) {
    const read = readFully(fd, page, 0, Math.min(PAGE_BYTES, size - at), at);
    if (allZero(page.subarray(0, read))) return true;
  }
  return false;
}

export function scanBytes(bytes: Uint8Array, startOffset: number, sha256: Sha256, visit: FrameVisitor): ScanEnd {
  let offset = startOffset;
  while (offset < bytes.length) {
    const decoded = decodeFrame(bytes, offset, sha256);
    if (decoded._tag === 'Frame') {
      offset = decoded.end;
      if (!visit(decoded.frame)) return { _tag: 'Stopped', offset };
      continue;
    }
    const zeroFilled = allZero(bytes.subarray(offset));
    if (decoded._tag === 'Incomplete') {
      return { _tag: 'Incomplete', offset, availableBytes: decoded.availableBytes, zeroFilled };
    }
    const zeroPage = hasZeroPage(bytes, 0, offset);
    return { _tag: 'Corrupt', offset, problem: decoded.problem, detail: decoded.detail, zeroFilled, zeroPage };
  }
  return { _tag: 'End', offset };
}

export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * The frames of a log file from `startOffset`, in order, without loading it whole: a chunk at
 * a time, growing the window only as far as one frame needs (at most MAX_FRAME_BYTES). Returns
 * how the file ended (End, Incomplete or Corrupt); a consumer that stops early calls `return`.
 */
function* fileFrames(
  path: string,
  startOffset: number,
  sha256: Sha256,
  chunkBytes: number,
): Generator<DecodedFrame, ScanEnd, undefined> {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    let windowStart = startOffset;
    let window: Uint8Array = new Uint8Array(0);
    let fileAt = startOffset;
    for (;;) {
      const want = Math.min(size - fileAt, Math.max(chunkBytes, Math.min(MAX_FRAME_BYTES, 2 * window.length)));
      if (want > 0) {
        const next = new Uint8Array(window.length + want);
        next.set(window, 0);
        const read = readFully(fd, next, window.length, want, fileAt);
        fileAt += read;
        window = next.subarray(0, window.length + read);
      }
      const atEof = fileAt >= size;
      let local = 0;
      while (local < window.length) {
        const decoded = decodeFrame(window, local, sha256, windowStart);
        if (decoded._tag === 'Frame') {
          local = decoded.end;
          yield decoded.frame;
          continue;
        }
        if (decoded._tag === 'Incomplete' && !atEof) break; // need more bytes
        const offset = windowStart + local;
        const zeroFilled = allZero(window.subarray(local)) && restIsZero(fd, fileAt, size);
        if (decoded._tag === 'Incomplete')
          return { _tag: 'Incomplete', offset, availableBytes: window.length - local, zeroFilled };
        const zeroPage = fileHasZeroPage(fd, offset, size);
        return { _tag: 'Corrupt', offset, problem: decoded.problem, detail: decoded.detail, zeroFilled, zeroPage };
      }
      window = window.subarray(local);
      windowStart += local;
      if (atEof && window.length === 0) return { _tag: 'End', offset: windowStart };
    }
  } finally {
    closeSync(fd);
  }
}

const stoppedAfter = (frame: DecodedFrame): ScanEnd => ({ _tag: 'Stopped', offset: frame.offset + frame.length });

/** Scans a log file from `startOffset` (fileFrames), handing each frame to `visit`. */
export function scanFile(
  path: string,
  startOffset: number,
  sha256: Sha256,
  visit: FrameVisitor,
  chunkBytes: number = DEFAULT_CHUNK_BYTES,
): ScanEnd {
  const frames = fileFrames(path, startOffset, sha256, chunkBytes);
  try {
    for (let step = frames.next(); ; step = frames.next()) {
      if (step.done === true) return step.value;
      if (!visit(step.value)) return stoppedAfter(step.value);
    }
  } finally {
    frames.return({ _tag: 'End', offset: 0 });
  }
}

/**
 * scanFile that gives the event loop a turn every `sliceMs` of scanning: a long log's scan (a
 * ledger open) then runs beside the process's children (git) instead of holding up every
 * reply they send. Frames reach `visit` in the same order; only the pauses differ.
 */
export async function scanFileYielding(
  path: string,
  startOffset: number,
  sha256: Sha256,
  visit: FrameVisitor,
  sliceMs = 2,
): Promise<ScanEnd> {
  const frames = fileFrames(path, startOffset, sha256, DEFAULT_CHUNK_BYTES);
  try {
    let sliceStart = performance.now();
    for (let step = frames.next(); ; step = frames.next()) {
      if (step.done === true) return step.value;
      if (!visit(step.value)) return stoppedAfter(step.value);
      if (performance.now() - sliceStart >= sliceMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
  } finally {
    frames.return({ _tag: 'End', offset: 0 });
  }
}

function readFully(fd: number, into: Uint8Array, at: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const read = readSync(fd, into, at + done, length - done, position + done);
    if (read === 0) break;
    done += read;
  }
  return done;
}

function restIsZero(fd: number, from: number, size: number): boolean {
  const buffer = new Uint8Array(Math.min(1024 * 1024, Math.max(0, size - from)));
  for (let at = from; at < size; ) {
    const read = readSync(fd, buffer, 0, Math.min(buffer.length, size - at), at);
    if (read === 0) break;
    if (!allZero(buffer.subarray(0, read))) return false;
    at += read;
  }
  return true;
}
