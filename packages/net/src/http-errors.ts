/**
 * Turns a non-2xx HTTP response into a typed ProviderError. The three vendor
 * error bodies differ (OpenAI `{error:{message,code}}`, Anthropic
 * `{type:"error",error:{type,message}}`, Gemini `{error:{code,message,status,
 * details}}`); all are decoded with io-ts, and anything else is quoted, bounded.
 */
import * as t from 'io-ts';
import { decode, decodeJson } from './decode.js';
import type { ProviderError } from './events.js';

/** Longest server message we copy into an error event. */
export const MAX_ERROR_MESSAGE_LENGTH = 500;

/** Longest wait we believe from a server; longer hints are clamped (a bound, not trust). */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

const ErrorBody = t.type({
  error: t.union([
    t.string,
    t.partial({
      message: t.string,
      type: t.string,
      code: t.union([t.string, t.number, t.null]),
      status: t.string,
      details: t.array(t.UnknownRecord),
    }),
  ]),
});

const RetryInfo = t.type({ '@type': t.string, retryDelay: t.string });

export const clip = (text: string, max = MAX_ERROR_MESSAGE_LENGTH): string =>
  text.length <= max ? text : `${text.slice(0, max)}…`;

/** Seconds (`"2"`, `"0.5"`) or an HTTP date, relative to `nowMs`. */
export function parseRetryAfter(headers: { get(name: string): string | null }, nowMs: number): number | undefined {
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null) {
    const value = Number(milliseconds);
    if (Number.isFinite(value) && value >= 0) return Math.min(Math.ceil(value), MAX_RETRY_AFTER_MS);
  }
  const raw = headers.get('retry-after');
  if (raw === null) return undefined;
  const seconds = Number(raw);
  if (raw.trim() !== '' && Number.isFinite(seconds)) {
    return Math.min(Math.max(0, Math.ceil(seconds * 1000)), MAX_RETRY_AFTER_MS);
  }
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - nowMs), MAX_RETRY_AFTER_MS);
}

interface DecodedBody {
  readonly message?: string;
  readonly retryAfterMs?: number;
}

function decodeBody(text: string): DecodedBody {
  const decoded = decodeJson(ErrorBody, text);
  if (decoded._tag === 'Left') return {};
  const error = decoded.right.error;
  if (typeof error === 'string') return { message: error };
  let retryAfterMs: number | undefined;
  for (const detail of error.details ?? []) {
    const info = decode(RetryInfo, detail);
    if (info._tag === 'Right' && info.right['@type'].endsWith('RetryInfo')) {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(info.right.retryDelay);
      if (match?.[1] !== undefined) retryAfterMs = Math.min(Math.ceil(Number(match[1]) * 1000), MAX_RETRY_AFTER_MS);
    }
  }
  const label = error.type ?? error.status ?? (typeof error.code === 'string' ? error.code : undefined);
  const message =
    error.message === undefined ? label : label === undefined ? error.message : `${label}: ${error.message}`;
  return { ...(message === undefined ? {} : { message }), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

export function classifyHttpError(
  provider: string,
  status: number,
  headers: { get(name: string): string | null },
  bodyText: string,
  nowMs: number,
): ProviderError {
  const body = decodeBody(bodyText);
  const detail = clip(body.message ?? bodyText.trim());
  const message = detail === '' ? `HTTP ${status}` : `HTTP ${status}: ${detail}`;
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headers, nowMs) ?? body.retryAfterMs;
    return retryAfterMs === undefined
      ? { _tag: 'rate_limited', provider, message }
      : { _tag: 'rate_limited', provider, message, retryAfterMs };
  }
  if (status === 401 || status === 403) return { _tag: 'auth', provider, message, status };
  if (status === 408) return { _tag: 'timeout', provider, message, phase: 'total', timeoutMs: 0 };
  if (status >= 500) return { _tag: 'server_error', provider, message, status };
  return { _tag: 'bad_request', provider, message, status };
}
