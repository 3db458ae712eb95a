/**
 * The proxy's own answers, shaped like the provider's errors so the worker
 * CLI reads them as what they are and stops cleanly: a spent budget looks
 * like an exhausted quota / credit balance (neither CLI retries those), a
 * momentary contention like a rate limit (retryable), a refused endpoint or
 * shape like a permission or request error.
 */
import type { ServerResponse } from 'node:http';
import type { ModelWire } from './usage.js';

export type RefusalKind = 'budget' | 'contended' | 'policy';

interface Shaped {
  readonly status: number;
  readonly body: string;
}

const OPENAI_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  403: 'invalid_request_error',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  502: 'server_error',
};
const ANTHROPIC_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  403: 'permission_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  502: 'api_error',
};

function shape(wire: ModelWire, kind: RefusalKind, status: number, message: string): Shaped {
  const text = `crustcore model proxy: ${message}`;
  if (wire === 'openai-responses') {
    const error =
      kind === 'budget'
        ? { message: text, type: 'insufficient_quota', code: 'insufficient_quota', param: null }
        : kind === 'contended'
          ? { message: text, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null }
          : {
              message: text,
              type: OPENAI_TYPES[status] ?? 'invalid_request_error',
              code: 'crustcore_policy',
              param: null,
            };
    return { status: kind === 'budget' || kind === 'contended' ? 429 : status, body: JSON.stringify({ error }) };
  }
  const type =
    kind === 'budget'
      ? 'invalid_request_error'
      : kind === 'contended'
        ? 'rate_limit_error'
        : (ANTHROPIC_TYPES[status] ?? 'invalid_request_error');
  // Anthropic answers a spent credit balance with 400, which Claude Code does not retry.
  const shapedStatus = kind === 'budget' ? 400 : kind === 'contended' ? 429 : status;
  return { status: shapedStatus, body: JSON.stringify({ type: 'error', error: { type, message: text } }) };
}

/** Writes the refusal and returns the status sent. */
export function sendRefusal(
  response: ServerResponse,
  wire: ModelWire,
  kind: RefusalKind,
  status: number,
  message: string,
): number {
  const shaped = shape(wire, kind, status, message);
  if (!response.headersSent) {
    response.writeHead(shaped.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(shaped.body),
      connection: 'close',
      ...(kind === 'contended' ? { 'retry-after': '1' } : {}),
    });
  }
  response.end(shaped.body);
  return shaped.status;
}
