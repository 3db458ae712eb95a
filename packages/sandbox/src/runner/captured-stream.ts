/**
 * Bounded capture of one output stream. The child must never block on a full
 * pipe, so every chunk is read and hashed; only the first and last halves of
 * the byte budget are kept, and the dropped middle is marked in the text.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Hash32 } from '@crustcore/kernel';

/** What one output stream produced. */
export interface CapturedStream {
  /**
   * UTF-8 text of the kept bytes. When truncated: the head, then one marker
   * line `…[crustcore: N bytes dropped]…`, then the tail.
   */
  readonly text: string;
  /** Every byte the process wrote to the stream, kept or not. */
  readonly totalBytes: number;
  /** True when bytes were dropped from the middle. */
  readonly truncated: boolean;
  /** SHA-256 (lowercase hex) of all `totalBytes` bytes, including dropped ones. */
  readonly sha256: Hash32;
}

/** Accumulates one stream within a byte budget; `finish()` once at the end. */
export class StreamCapture {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  // Tail chunks are kept whole and trimmed lazily so a flood of small chunks
  // costs one array shift per dropped chunk, not a copy per chunk.
  readonly #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;
  readonly #hash: Hash = createHash('sha256');

  constructor(maxOutputBytes: number) {
    const budget = Math.max(0, Math.floor(maxOutputBytes));
    this.#headLimit = Math.ceil(budget / 2);
    this.#tailLimit = budget - this.#headLimit;
  }

  push(chunk: Buffer): void {
    this.#hash.update(chunk);
    this.#total += chunk.length;
    let rest = chunk;
    const headRoom = this.#headLimit - this.#headBytes;
    if (headRoom > 0) {
      const taken = rest.subarray(0, headRoom);
      this.#head.push(Buffer.from(taken));
      this.#headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0 || this.#tailLimit === 0) return;
    const kept = rest.length > this.#tailLimit ? rest.subarray(rest.length - this.#tailLimit) : rest;
    this.#tail.push(Buffer.from(kept));
    this.#tailBytes += kept.length;
    while (this.#tail.length > 0) {
      const first = this.#tail[0] as Buffer;
      if (this.#tailBytes - first.length < this.#tailLimit) break;
      this.#tail.shift();
      this.#tailBytes -= first.length;
    }
  }

  finish(): CapturedStream {
    const head = Buffer.concat(this.#head);
    let tail = Buffer.concat(this.#tail);
    if (tail.length > this.#tailLimit) tail = tail.subarray(tail.length - this.#tailLimit);
    const keptBytes = head.length + tail.length;
    const dropped = this.#total - keptBytes;
    const sha256 = this.#hash.digest('hex') as Hash32;
    if (dropped <= 0) {
      return { text: Buffer.concat([head, tail]).toString('utf8'), totalBytes: this.#total, truncated: false, sha256 };
    }
    const marker = `\n…[crustcore: ${dropped} bytes dropped]…\n`;
    return {
      text: head.toString('utf8') + marker + tail.toString('utf8'),
      totalBytes: this.#total,
      truncated: true,
      sha256,
    };
  }
}
