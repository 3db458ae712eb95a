/**
 * An incremental server-sent-events parser (WHATWG HTML §9.2.6), fed raw
 * bytes in whatever chunks the network delivers. Chunk boundaries may fall
 * anywhere — inside a UTF-8 sequence, between CR and LF — and the events
 * produced are the same for every chunking (a property test checks this).
 */

// ─── model ────────────────────────────────────────────────────────────────

export interface SseMessage {
  /** The `event:` field, or "message" when absent. */
  readonly event: string;
  readonly data: string;
}

export interface SseParserOptions {
  /** Bound on one event (its data plus the line being read), in UTF-16 code units. */
  readonly maxEventLength?: number;
}

export const DEFAULT_MAX_EVENT_LENGTH = 16 * 1024 * 1024;

const LF = 10;

export class SseParser {
  readonly #decoder = new TextDecoder('utf-8');
  readonly #maxEventLength: number;
  /** The unterminated tail of the input: a partial line, never containing CR or LF. */
  #line = '';
  /** A chunk ended in CR: if the next one starts with LF, that LF belongs to the same terminator. */
  #pendingCarriageReturn = false;
  #eventType = '';
  #data = '';
  #hasData = false;
  #overflow = false;

  constructor(options: SseParserOptions = {}) {
    this.#maxEventLength = options.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH;
  }

  /** True once an event exceeded `maxEventLength`; the parser then ignores further input. */
  get overflowed(): boolean {
    return this.#overflow;
  }

  push(chunk: Uint8Array | string): SseMessage[] {
    if (this.#overflow) return [];
    const text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    return this.#consume(text);
  }

  /**
   * End of input. Per the spec an event not closed by a blank line is
   * discarded — which is exactly how a cut-off stream loses its last event.
   */
  end(): SseMessage[] {
    const rest = this.#decoder.decode();
    const out = rest.length > 0 ? this.#consume(rest) : [];
    this.#line = '';
    this.#eventType = '';
    this.#data = '';
    this.#hasData = false;
    return out;
  }

  #consume(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    if (text.length === 0) return out;
    let input = text;
    if (this.#pendingCarriageReturn) {
      this.#pendingCarriageReturn = false;
      if (input.charCodeAt(0) === LF) input = input.slice(1);
    }
    const buffer = this.#line.length === 0 ? input : this.#line + input;
    const length = buffer.length;
    let start = 0;
    // The unterminated tail held no CR or LF, so scanning can begin where new input begins.
    let lineFeed = buffer.indexOf('\n', this.#line.length);
    let carriageReturn = buffer.indexOf('\r', this.#line.length);
    this.#line = '';
    while (lineFeed !== -1 || carriageReturn !== -1) {
      const isCarriageReturn = carriageReturn !== -1 && (lineFeed === -1 || carriageReturn < lineFeed);
      const end = isCarriageReturn ? carriageReturn : lineFeed;
      const message = this.#processLine(buffer.slice(start, end));
      if (message !== undefined) out.push(message);
      if (this.#overflow) return out;
      start = end + 1;
      if (isCarriageReturn) {
        if (start < length) {
          if (buffer.charCodeAt(start) === LF) start += 1;
        } else {
          this.#pendingCarriageReturn = true;
        }
        carriageReturn = buffer.indexOf('\r', start);
        if (lineFeed !== -1 && lineFeed < start) lineFeed = buffer.indexOf('\n', start);
      } else {
        lineFeed = buffer.indexOf('\n', start);
      }
    }
    this.#line = start === 0 ? buffer : buffer.slice(start);
    if (this.#line.length + this.#data.length > this.#maxEventLength) this.#overflow = true;
    return out;
  }

  #processLine(line: string): SseMessage | undefined {
    if (line.length === 0) return this.#dispatch();
    if (line.charCodeAt(0) === 58 /* ':' comment, e.g. keep-alive */) return undefined;
    const colon = line.indexOf(':');
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      value = line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    if (field === 'data') {
      this.#data = this.#hasData ? `${this.#data}\n${value}` : value;
      this.#hasData = true;
      if (this.#data.length > this.#maxEventLength) this.#overflow = true;
    } else if (field === 'event') {
      this.#eventType = value;
    }
    // `id` and `retry` steer browser reconnection, which a one-shot model request never does.
    return undefined;
  }

  #dispatch(): SseMessage | undefined {
    if (!this.#hasData) {
      this.#eventType = '';
      return undefined;
    }
    const message: SseMessage = { event: this.#eventType === '' ? 'message' : this.#eventType, data: this.#data };
    this.#eventType = '';
    this.#data = '';
    this.#hasData = false;
    return message;
  }
}
