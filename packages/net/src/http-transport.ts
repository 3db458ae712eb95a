/**
 * One HTTP exchange with a model endpoint, with every wait bounded:
 * - first byte: response headers must arrive within `firstByteMs` (else `timeout`);
 * - idle: once streaming, each read must deliver a byte within `idleMs` (else `stalled`);
 * - total: the whole exchange ends by `totalMs` (else `timeout`).
 * The idle clock runs only while we wait on the socket, never while the
 * consumer is busy with an event we already handed it.
 * Failures are yielded as values; this module never throws.
 */
import type { ProviderError } from './events.js';
import { classifyHttpError, clip } from './http-errors.js';
import { DEFAULT_MAX_EVENT_LENGTH, type SseMessage, SseParser } from './sse.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface Timeouts {
  readonly firstByteMs: number;
  readonly idleMs: number;
  readonly totalMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { firstByteMs: 60_000, idleMs: 120_000, totalMs: 15 * 60_000 };

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpExchange {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface TransportContext {
  readonly provider: string;
  readonly fetch: FetchFunction;
  readonly timeouts: Timeouts;
  readonly now: () => number;
  readonly signal?: AbortSignal;
  readonly maxEventLength?: number;
  readonly maxErrorBodyBytes?: number;
  /** Bound on a non-streamed (JSON) response body, e.g. a model list. */
  readonly maxJsonBodyBytes?: number;
}

export type TransportItem =
  | { readonly kind: 'message'; readonly message: SseMessage }
  | { readonly kind: 'failure'; readonly error: ProviderError };

export const DEFAULT_MAX_ERROR_BODY_BYTES = 64 * 1024;
export const DEFAULT_MAX_JSON_BODY_BYTES = 16 * 1024 * 1024;

// ─── the watchdog ─────────────────────────────────────────────────────────

/** Owns the AbortController and remembers *why* it fired, so a rejected read can be classified. */
class Watchdog {
  readonly controller = new AbortController();
  failure: ProviderError | undefined;
  readonly #context: TransportContext;
  readonly #totalTimer: ReturnType<typeof setTimeout>;
  #phaseTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #onExternalAbort = (): void =>
    this.fail({ _tag: 'aborted', provider: this.#context.provider, message: 'request aborted by caller' });

  constructor(context: TransportContext) {
    this.#context = context;
    const { provider, timeouts } = context;
    this.#totalTimer = setTimeout(
      () =>
        this.fail({
          _tag: 'timeout',
          provider,
          phase: 'total',
          timeoutMs: timeouts.totalMs,
          message: `no complete response within ${timeouts.totalMs} ms`,
        }),
      timeouts.totalMs,
    );
    if (context.signal?.aborted === true) this.#onExternalAbort();
    else context.signal?.addEventListener('abort', this.#onExternalAbort, { once: true });
  }

  fail(error: ProviderError): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.controller.abort();
  }

  armFirstByte(): void {
    const { provider, timeouts } = this.#context;
    this.#phaseTimer = setTimeout(
      () =>
        this.fail({
          _tag: 'timeout',
          provider,
          phase: 'first_byte',
          timeoutMs: timeouts.firstByteMs,
          message: `no response headers within ${timeouts.firstByteMs} ms`,
        }),
      timeouts.firstByteMs,
    );
  }

  armIdle(): void {
    const { provider, timeouts } = this.#context;
    this.#phaseTimer = setTimeout(
      () =>
        this.fail({
          _tag: 'stalled',
          provider,
          idleMs: timeouts.idleMs,
          message: `no bytes from the server for ${timeouts.idleMs} ms`,
        }),
      timeouts.idleMs,
    );
  }

  disarm(): void {
    if (this.#phaseTimer !== undefined) clearTimeout(this.#phaseTimer);
    this.#phaseTimer = undefined;
  }

  close(): void {
    this.disarm();
    clearTimeout(this.#totalTimer);
    this.#context.signal?.removeEventListener('abort', this.#onExternalAbort);
    // Releases the socket if we stop early (consumer broke out, or an error).
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}

function networkError(provider: string, thrown: unknown): ProviderError {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  const cause = (error as { cause?: unknown }).cause;
  const causeText =
    cause instanceof Error
      ? ((cause as { code?: string }).code ?? cause.message)
      : cause === undefined
        ? ''
        : String(cause);
  return {
    _tag: 'network',
    provider,
    message: clip(causeText === '' ? error.message : `${error.message}: ${causeText}`),
  };
}

async function start(
  exchange: HttpExchange,
  context: TransportContext,
  watchdog: Watchdog,
): Promise<{ readonly response: Response } | { readonly error: ProviderError }> {
  if (watchdog.failure !== undefined) return { error: watchdog.failure };
  watchdog.armFirstByte();
  try {
    const init: RequestInit = {
      method: exchange.method,
      headers: exchange.headers,
      signal: watchdog.controller.signal,
    };
    if (exchange.body !== undefined) init.body = exchange.body;
    const response = await context.fetch(exchange.url, init);
    watchdog.disarm();
    return { response };
  } catch (thrown) {
    watchdog.disarm();
    return { error: watchdog.failure ?? networkError(context.provider, thrown) };
  }
}

/** Reads at most `maxBytes` of a body, under the idle watchdog. */
async function readBounded(
  response: Response,
  watchdog: Watchdog,
  maxBytes: number,
): Promise<{ readonly text: string; readonly complete: boolean }> {
  const body = response.body;
  if (body === null) return { text: '', complete: true };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  try {
    for (;;) {
      watchdog.armIdle();
      const { done, value } = await reader.read();
      watchdog.disarm();
      if (done) return { text: text + decoder.decode(), complete: true };
      bytes += value.byteLength;
      if (bytes > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return {
          text: text + decoder.decode(value.subarray(0, value.byteLength - (bytes - maxBytes))),
          complete: false,
        };
      }
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    watchdog.disarm();
    return { text, complete: false };
  }
}

async function failureFromResponse(
  response: Response,
  context: TransportContext,
  watchdog: Watchdog,
): Promise<ProviderError> {
  const { text } = await readBounded(response, watchdog, context.maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES);
  return (
    watchdog.failure ?? classifyHttpError(context.provider, response.status, response.headers, text, context.now())
  );
}

// ─── exchanges ────────────────────────────────────────────────────────────

/**
 * POSTs and yields the SSE messages of the response as they arrive. Ends
 * without a failure item only when the server closed the stream cleanly;
 * whether that close was a complete answer is the protocol decoder's call.
 */
export async function* streamServerSentEvents(
  exchange: HttpExchange,
  context: TransportContext,
): AsyncGenerator<TransportItem, void, undefined> {
  const watchdog = new Watchdog(context);
  try {
    const started = await start(exchange, context, watchdog);
    if ('error' in started) {
      yield { kind: 'failure', error: started.error };
      return;
    }
    const { response } = started;
    if (!response.ok) {
      yield { kind: 'failure', error: await failureFromResponse(response, context, watchdog) };
      return;
    }
    const body = response.body;
    if (body === null) return;
    const reader = body.getReader();
    const parser = new SseParser({ maxEventLength: context.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH });
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      watchdog.armIdle();
      try {
        chunk = await reader.read();
      } catch (thrown) {
        watchdog.disarm();
        yield { kind: 'failure', error: watchdog.failure ?? networkError(context.provider, thrown) };
        return;
      }
      watchdog.disarm();
      if (chunk.done) {
        for (const message of parser.end()) yield { kind: 'message', message };
        return;
      }
      for (const message of parser.push(chunk.value)) {
        yield { kind: 'message', message };
        if (watchdog.failure !== undefined) break;
      }
      if (parser.overflowed) {
        yield {
          kind: 'failure',
          error: {
            _tag: 'protocol',
            provider: context.provider,
            message: 'a server-sent event exceeded the size bound',
          },
        };
        return;
      }
      if (watchdog.failure !== undefined) {
        // The total timer or the caller fired while the consumer held an event.
        yield { kind: 'failure', error: watchdog.failure };
        return;
      }
    }
  } finally {
    watchdog.close();
  }
}

export type JsonExchangeResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly error: ProviderError };

/** A plain request whose (bounded) body is returned as text: model listings for probes. */
export async function exchangeText(exchange: HttpExchange, context: TransportContext): Promise<JsonExchangeResult> {
  const watchdog = new Watchdog(context);
  try {
    const started = await start(exchange, context, watchdog);
    if ('error' in started) return { ok: false, error: started.error };
    const { response } = started;
    if (!response.ok) return { ok: false, error: await failureFromResponse(response, context, watchdog) };
    const { text, complete } = await readBounded(
      response,
      watchdog,
      context.maxJsonBodyBytes ?? DEFAULT_MAX_JSON_BODY_BYTES,
    );
    if (watchdog.failure !== undefined) return { ok: false, error: watchdog.failure };
    if (!complete) {
      return {
        ok: false,
        error: {
          _tag: 'protocol',
          provider: context.provider,
          message: 'response body exceeded the size bound or was cut off',
        },
      };
    }
    return { ok: true, text };
  } finally {
    watchdog.close();
  }
}
