/**
 * One worker request through the meter, in order: the request line must be
 * the wire's exact endpoint; the body is read (bounded), decoded and given
 * an output cap; the model must have a price (when prices are configured);
 * the worst case is reserved; only then does a byte go upstream. However
 * the exchange ends — answered, cut by either side, refused upstream — it
 * settles exactly once: the reservation is released and the charge made.
 */
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { Redactor } from '@crustcore/secrets';
import { type RefusalKind, sendRefusal } from './refusal.js';
import {
  type AdmittedRequest,
  admitBody,
  checkEndpoint,
  MAX_REQUEST_BODY_BYTES,
  type RequestPolicy,
} from './request-policy.js';
import {
  chargeFor,
  type Reservation,
  type ReservationPool,
  type ReservationTicket,
  reservationFor,
} from './reservation.js';
import {
  dearerPricing,
  type ModelPricing,
  type ModelUsage,
  type ModelWire,
  type PriceForModel,
  type PriceTable,
  priceUsage,
  UsageMeter,
} from './usage.js';

/** One request the worker made, as the meter saw it. Never headers or bodies. */
export interface ModelRequestRecord {
  readonly method: string;
  /** Path and query (at most 2,048 characters). */
  readonly path: string;
  /** The provider's status, or the proxy's own (400, 403, 405, 413, 415, 429, 502) when it answered itself. */
  readonly status: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
  readonly durationMs: number;
  /** Why the proxy refused or cut the request, or null when the provider answered in full. */
  readonly refused: string | null;
  /** Tokens charged for it; null when the request never reached the provider. */
  readonly usage: ModelUsage | null;
  /** The model requested, once the body decoded. */
  readonly model?: string;
  /** The worst case reserved before forwarding (tokens, dollars). */
  readonly reserved?: { readonly tokens: number; readonly costUsd: number };
}

/** What every exchange shares with the meter that runs it. */
export interface MeterContext {
  readonly wire: ModelWire;
  readonly keySocketPath: string;
  readonly pricing: ModelPricing | PriceForModel | PriceTable | undefined;
  readonly policy: RequestPolicy;
  readonly redactor: Redactor;
  readonly pool: ReservationPool;
  readonly record: (entry: ModelRequestRecord) => void;
  readonly charged: (usage: ModelUsage) => void;
  /** The budget refused a request (not a momentary contention). */
  readonly exhausted: () => void;
}

const MAX_PATH_CHARS = 2048;
/** Hop-by-hop headers are the meter's own business on each side; the body length is ours too. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
]);

export function copyHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  }
  return out;
}

function redactHeaders(headers: OutgoingHttpHeaders, redactor: Redactor): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out[name] = redactor.redactText(value);
    else if (Array.isArray(value)) out[name] = value.map((item) => redactor.redactText(item));
    else if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The whole body, or null when it is larger than `limit` or the client went away first. */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    request.on('end', () => resolve(size <= limit ? Buffer.concat(chunks) : null));
    request.on('error', () => resolve(null));
    request.on('close', () => resolve(null));
  });
}

type PricingChoice = { readonly pricing: ModelPricing | undefined } | { readonly unknown: string };

/** The price a requested model is reserved at: exact ids only; unknown ones are refused unless policy says otherwise. */
function requestedPricing(pricing: MeterContext['pricing'], model: string, policy: RequestPolicy): PricingChoice {
  if (pricing === undefined) return { pricing: undefined };
  if (typeof pricing !== 'function') return { pricing };
  const found = pricing(model);
  if (found !== undefined) return { pricing: found };
  const highest = 'highest' in pricing ? pricing.highest : undefined;
  return policy.unknownModels === 'highest-price' && highest !== undefined ? { pricing: highest } : { unknown: model };
}

/** The price a response is charged at: the dearer of what was reserved and what the provider says answered. */
function answeredPricing(
  pricing: MeterContext['pricing'],
  requested: ModelPricing | undefined,
  answered: string | null,
): ModelPricing | undefined {
  if (typeof pricing !== 'function' || answered === null) return requested;
  const found = pricing(answered) ?? ('highest' in pricing ? pricing.highest : undefined);
  return dearerPricing(requested, found);
}

/** Serves one worker request (see the module comment). */
export async function serveExchange(
  context: MeterContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const startedAt = performance.now();
  const method = (request.method ?? 'GET').slice(0, 20);
  const target = (request.url ?? '').slice(0, MAX_PATH_CHARS);
  const base = { method, path: target };
  const refuse = (kind: RefusalKind, status: number, reason: string, extra: Partial<ModelRequestRecord> = {}) => {
    const sent = sendRefusal(response, context.wire, kind, status, reason);
    context.record({
      ...base,
      status: sent,
      requestBytes: 0,
      responseBytes: 0,
      durationMs: performance.now() - startedAt,
      refused: reason,
      usage: null,
      ...extra,
    });
    request.resume();
  };
  const endpoint = checkEndpoint(context.wire, method, target);
  if (endpoint !== null) return refuse('policy', endpoint.status, endpoint.reason);
  const body = await readBody(request, MAX_REQUEST_BODY_BYTES);
  if (body === null) return refuse('policy', 413, 'request body too large or cut off');
  const admitted = admitBody(context.wire, String(request.headers['content-type'] ?? ''), body, context.policy);
  if ('reason' in admitted) return refuse('policy', admitted.status, admitted.reason);
  const choice = requestedPricing(context.pricing, admitted.model, context.policy);
  if ('unknown' in choice) {
    return refuse('policy', 400, `model ${choice.unknown} has no price: add it to the price table`, {
      model: admitted.model,
    });
  }
  const reservation = reservationFor(admitted.inputTokensEstimate, admitted.maxOutputTokens, choice.pricing);
  const reserved = { tokens: reservation.inputTokens + reservation.outputTokens, costUsd: reservation.costUsd };
  const outcome = context.pool.reserve(reservation);
  if (outcome._tag !== 'Reserved') {
    if (outcome._tag === 'Exhausted') context.exhausted();
    const kind = outcome._tag === 'Exhausted' ? 'budget' : 'contended';
    const label = outcome._tag === 'Exhausted' ? 'model budget exhausted' : 'model budget busy, retry';
    return refuse(kind, 429, `${label}: ${outcome.reason}`, { model: admitted.model, reserved });
  }
  forward(context, { request, response, admitted, ticket: outcome.ticket, startedAt, base, reserved });
}

interface Forwarding {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly admitted: AdmittedRequest;
  readonly ticket: ReservationTicket;
  readonly startedAt: number;
  readonly base: { readonly method: string; readonly path: string };
  readonly reserved: { readonly tokens: number; readonly costUsd: number };
}

/** Everything a background run may spend, charged up front: its usage never comes back through us. */
function wholeReservation(reservation: Reservation): ModelUsage {
  const tokens = { inputTokens: reservation.inputTokens, cachedInputTokens: 0, outputTokens: reservation.outputTokens };
  return { requests: 1, ...tokens, costUsd: priceUsage(tokens, reservation.pricing) };
}

function forward(context: MeterContext, run: Forwarding): void {
  const { request, response, admitted, ticket } = run;
  const headers = copyHeaders(request.headers);
  // The key proxy only answers requests addressed to itself; token counting needs uncompressed bodies.
  headers.host = 'localhost';
  headers['accept-encoding'] = 'identity';
  headers['content-length'] = String(admitted.body.length);
  const outgoing = httpRequest({ socketPath: context.keySocketPath, method: 'POST', path: run.base.path, headers });
  let meter: UsageMeter | null = null;
  let status = 502;
  let responseBytes = 0;
  let done = false;
  const settle = (refused: string | null): void => {
    if (done) return;
    done = true;
    const observed = meter?.observe() ?? null;
    const pricing = answeredPricing(context.pricing, ticket.reservation.pricing, observed?.model ?? null);
    const usage = admitted.background
      ? wholeReservation(ticket.reservation)
      : chargeFor(observed, status, ticket.reservation, pricing);
    ticket.settle(usage);
    context.charged(usage);
    context.record({
      ...run.base,
      status,
      requestBytes: admitted.body.length,
      responseBytes,
      durationMs: performance.now() - run.startedAt,
      refused,
      usage,
      model: admitted.model,
      reserved: run.reserved,
    });
  };
  outgoing.on('response', (upstream) => {
    status = upstream.statusCode ?? 502;
    const counting = new UsageMeter(context.wire, String(upstream.headers['content-type'] ?? ''));
    meter = counting;
    // The credential proxy redacts bodies; a provider could also echo the key in a header.
    response.writeHead(status, redactHeaders(copyHeaders(upstream.headers), context.redactor));
    response.flushHeaders();
    upstream.on('data', (chunk: Buffer) => {
      responseBytes += chunk.length;
      counting.push(chunk);
    });
    upstream.on('end', () => settle(null));
    const cut = (): void => {
      response.destroy();
      settle('upstream connection failed');
    };
    upstream.on('aborted', cut);
    upstream.on('error', cut);
    upstream.pipe(response);
  });
  outgoing.on('error', () => {
    if (done) return;
    if (response.headersSent) response.destroy();
    else sendRefusal(response, context.wire, 'policy', 502, 'upstream unreachable');
    settle('upstream connection failed');
  });
  response.on('close', () => {
    if (!outgoing.destroyed) outgoing.destroy();
    settle('worker went away');
  });
  outgoing.end(admitted.body);
}
