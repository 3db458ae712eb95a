/**
 * A dialect is one wire protocol: how a neutral request becomes an HTTP
 * exchange, and how that protocol's SSE messages become StreamEvents. The
 * transport, key handling, redaction and the never-throw guard are shared
 * (http-provider.ts); a dialect holds only what differs between vendors.
 */
import * as t from 'io-ts';
import type { StreamEvent } from './events.js';
import type { HttpExchange } from './http-transport.js';
import type { ModelPrices } from './pricing.js';
import type { ModelRequest } from './request.js';
import type { SseMessage } from './sse.js';

export interface DecoderContext {
  readonly provider: string;
  readonly model: string;
  readonly prices: ModelPrices | undefined;
}

/**
 * Consumes one response's SSE messages. `push` may return a terminal event
 * (then the stream is over); `end` is called when the server closed the
 * stream cleanly and returns `done` if the protocol's terminal was seen,
 * otherwise a `truncated` error.
 */
export interface StreamDecoder {
  push(message: SseMessage): readonly StreamEvent[];
  end(): readonly StreamEvent[];
}

export interface Dialect {
  readonly name: string;
  /** Builds the exchange; `key` is undefined for keyless local endpoints. */
  buildExchange(baseUrl: string, request: ModelRequest, key: string | undefined): HttpExchange;
  createDecoder(context: DecoderContext): StreamDecoder;
}

/** `baseUrl` is the API's version root (".../v1"); paths are appended without doubling slashes. */
export const joinUrl = (baseUrl: string, path: string): string =>
  `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;

/**
 * io-ts: absent, `null`, or `A` — vendors use null and omission alike for
 * "no value". Short-circuits the two empty cases instead of going through
 * `t.union`, which builds failure objects for every absent field of every
 * streamed chunk (measured: most of a chat chunk's decode time).
 */
export const nullable = <C extends t.Mixed>(codec: C): t.Type<t.TypeOf<C> | null | undefined, unknown, unknown> =>
  new t.Type<t.TypeOf<C> | null | undefined, unknown, unknown>(
    `(${codec.name} | null)`,
    (value): value is t.TypeOf<C> | null | undefined => value === null || value === undefined || codec.is(value),
    (value, context) => (value === null || value === undefined ? t.success(value) : codec.validate(value, context)),
    (value) => (value === null || value === undefined ? value : codec.encode(value)),
  );

export const truncatedEvent = (provider: string, what: string): StreamEvent => ({
  type: 'error',
  error: { _tag: 'truncated', provider, message: `stream ended before ${what}` },
});

export const protocolEvent = (provider: string, message: string): StreamEvent => ({
  type: 'error',
  error: { _tag: 'protocol', provider, message },
});
