/**
 * A Node Transform that redacts a byte or text stream (a process's stdout, a
 * worker transcript, an HTTP response). Bytes are decoded as UTF-8 with a
 * decoder that keeps a character split across chunks whole; the text then
 * goes through an IncrementalRedactor.
 */

import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { IncrementalOptions, IncrementalRedactor, Redactor } from './redactor.js';

export class RedactingStream extends Transform {
  readonly #decoder = new StringDecoder('utf8');
  readonly #incremental: IncrementalRedactor;

  constructor(redactor: Redactor, options: IncrementalOptions = {}) {
    super({ decodeStrings: true });
    this.#incremental = redactor.createIncremental(options);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const out = this.#incremental.push(this.#decoder.write(chunk));
    if (out.length > 0) this.push(out, 'utf8');
    callback();
  }

  override _flush(callback: TransformCallback): void {
    const out = this.#incremental.push(this.#decoder.end()) + this.#incremental.end();
    if (out.length > 0) this.push(out, 'utf8');
    callback();
  }
}
