/**
 * io-ts codecs for StreamEvent, used to read recorded trajectories (untrusted
 * files) back into events. Each variant is decoded exactly; unknown event
 * types are rejected rather than passed to the agent.
 */
import type { Json } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { JsonObject, ProviderError, StreamEvent } from '../events.js';

const nonNegative = new t.Type<number, number, unknown>(
  'NonNegativeNumber',
  (value): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0,
  (value, context) =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? t.success(value) : t.failure(value, context),
  (value) => value,
);

const isJson = (value: unknown, depth: number): value is Json => {
  if (depth > 64) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  if (typeof value === 'object') return Object.values(value).every((item) => isJson(item, depth + 1));
  return false;
};

const jsonObject = new t.Type<JsonObject, JsonObject, unknown>(
  'JsonObject',
  (value): value is JsonObject =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && isJson(value, 0),
  (value, context) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && isJson(value, 0)
      ? t.success(value as JsonObject)
      : t.failure(value, context),
  (value) => value,
);

const base = { provider: t.string, message: t.string };

const ProviderErrorCodec: t.Type<ProviderError, unknown, unknown> = t.union([
  t.intersection([t.type({ _tag: t.literal('rate_limited'), ...base }), t.partial({ retryAfterMs: nonNegative })]),
  t.type({ _tag: t.literal('server_error'), ...base, status: t.number }),
  t.type({
    _tag: t.literal('timeout'),
    ...base,
    phase: t.union([t.literal('first_byte'), t.literal('total')]),
    timeoutMs: nonNegative,
  }),
  t.type({ _tag: t.literal('stalled'), ...base, idleMs: nonNegative }),
  t.type({ _tag: t.literal('truncated'), ...base }),
  t.intersection([t.type({ _tag: t.literal('auth'), ...base }), t.partial({ status: t.number })]),
  t.intersection([t.type({ _tag: t.literal('bad_request'), ...base }), t.partial({ status: t.number })]),
  t.type({ _tag: t.literal('network'), ...base }),
  t.type({ _tag: t.literal('protocol'), ...base }),
  t.type({ _tag: t.literal('aborted'), ...base }),
  t.type({
    _tag: t.literal('budget_exhausted'),
    ...base,
    spentMicroDollars: nonNegative,
    ceilingMicroDollars: nonNegative,
  }),
  t.intersection([
    t.type({ _tag: t.literal('replay_divergence'), ...base, turn: nonNegative }),
    t.partial({ expectedHash: t.string, actualHash: t.string }),
  ]),
  t.type({ _tag: t.literal('internal'), ...base }),
]) as unknown as t.Type<ProviderError, unknown, unknown>;

const StopReasonCodec = t.keyof({
  end_turn: null,
  tool_use: null,
  max_tokens: null,
  content_filter: null,
  stop_sequence: null,
  other: null,
});

const Endpoint = t.type({ provider: t.string, model: t.string });

export const StreamEventCodec: t.Type<StreamEvent, unknown, unknown> = t.union([
  t.type({ type: t.literal('text_delta'), text: t.string }),
  t.type({ type: t.literal('thinking_delta'), text: t.string }),
  t.type({ type: t.literal('thinking_signature'), signature: t.string }),
  t.intersection([
    t.type({ type: t.literal('tool_call'), id: t.string, name: t.string, arguments: jsonObject }),
    t.partial({ signature: t.string }),
  ]),
  t.type({ type: t.literal('tool_call_error'), id: t.string, name: t.string, raw: t.string, message: t.string }),
  t.type({
    type: t.literal('usage'),
    inputTokens: nonNegative,
    outputTokens: nonNegative,
    cacheReadTokens: nonNegative,
    cacheWriteTokens: nonNegative,
    costMicroDollars: nonNegative,
    priced: t.boolean,
  }),
  t.type({
    type: t.literal('retry'),
    attempt: nonNegative,
    delayMs: nonNegative,
    from: Endpoint,
    to: Endpoint,
    cause: ProviderErrorCodec,
  }),
  t.intersection([
    t.type({ type: t.literal('done'), stopReason: StopReasonCodec }),
    t.partial({ rawStopReason: t.string }),
  ]),
  t.type({ type: t.literal('error'), error: ProviderErrorCodec }),
]) as unknown as t.Type<StreamEvent, unknown, unknown>;
