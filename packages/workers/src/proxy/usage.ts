/**
 * Token counting from the model's own responses. The host proxy sees every
 * byte the provider sends back; both providers report usage inside the
 * response (the last SSE events of a stream, or the JSON body), so we count
 * there — never from what the worker CLI prints about itself. Decoding is
 * io-ts over untrusted JSON; anything that does not decode counts as zero.
 */
import * as t from 'io-ts';

/** Which provider API a worker speaks. */
export type ModelWire = 'openai-responses' | 'anthropic-messages';

/** Tokens (and cost, when prices are known) of one response or a whole run. */
export interface ModelUsage {
  readonly requests: number;
  /** Prompt tokens, including cached ones. */
  readonly inputTokens: number;
  /** The part of `inputTokens` served from the provider's prompt cache. */
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  /** US dollars by `ModelPricing`; 0 when no pricing was given. */
  readonly costUsd: number;
}

/** Prices per million tokens. */
export interface ModelPricing {
  readonly inputUsdPerMillion: number;
  readonly outputUsdPerMillion: number;
  /** Defaults to `inputUsdPerMillion`. */
  readonly cachedInputUsdPerMillion?: number;
}

/**
 * Prices for a model id (the worker CLI picks its own model; the provider
 * says which one answered). Undefined: the price is unknown, and the proxy
 * refuses the request (see `model-proxy.ts`).
 */
export type PriceForModel = (model: string | null) => ModelPricing | undefined;

/** A price table: exact lookups plus its most expensive entry, for answers naming a model it does not know. */
export interface PriceTable extends PriceForModel {
  /** The highest input and highest output price in the table (each taken separately). */
  readonly highest: ModelPricing | undefined;
}

/**
 * Dated snapshots a provider answers with, as the one explicit rule besides
 * exact ids: `<id>-YYYY-MM-DD` (OpenAI) or `<id>-YYYYMMDD` (Anthropic).
 * Nothing else extends an id: `gpt-5-pro` is not `gpt-5`.
 */
const SNAPSHOT = /^(.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/** The table id `model` names: itself, or the id it is a dated snapshot of; null when neither is known. */
export function matchModelId(model: string, ids: ReadonlySet<string>): string | null {
  if (ids.has(model)) return model;
  const base = SNAPSHOT.exec(model)?.[1];
  return base !== undefined && ids.has(base) ? base : null;
}

/** A `PriceTable` over entries (model id → prices), matched by `matchModelId`. */
export function priceTable(entries: Iterable<readonly [string, ModelPricing]>): PriceTable {
  const table = new Map(entries);
  const ids = new Set(table.keys());
  const lookup = (model: string | null): ModelPricing | undefined => {
    if (model === null) return undefined;
    const id = matchModelId(model, ids);
    return id === null ? undefined : table.get(id);
  };
  const prices = [...table.values()];
  const highest: ModelPricing | undefined =
    prices.length === 0
      ? undefined
      : {
          inputUsdPerMillion: Math.max(...prices.map((price) => price.inputUsdPerMillion)),
          outputUsdPerMillion: Math.max(...prices.map((price) => price.outputUsdPerMillion)),
          cachedInputUsdPerMillion: Math.max(
            ...prices.map((price) => price.cachedInputUsdPerMillion ?? price.inputUsdPerMillion),
          ),
        };
  return Object.assign(lookup, { highest });
}

/** The dearer of two prices, field by field (undefined counts as nothing known). */
export function dearerPricing(a: ModelPricing | undefined, b: ModelPricing | undefined): ModelPricing | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return {
    inputUsdPerMillion: Math.max(a.inputUsdPerMillion, b.inputUsdPerMillion),
    outputUsdPerMillion: Math.max(a.outputUsdPerMillion, b.outputUsdPerMillion),
    cachedInputUsdPerMillion: Math.max(
      a.cachedInputUsdPerMillion ?? a.inputUsdPerMillion,
      b.cachedInputUsdPerMillion ?? b.inputUsdPerMillion,
    ),
  };
}

export const ZERO_USAGE: ModelUsage = Object.freeze({
  requests: 0,
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
});

/** Sums usages. */
export function addUsage(a: ModelUsage, b: ModelUsage): ModelUsage {
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
  };
}

/** Cost of token counts under `pricing` (0 without pricing). */
export function priceUsage(
  tokens: { readonly inputTokens: number; readonly cachedInputTokens: number; readonly outputTokens: number },
  pricing: ModelPricing | undefined,
): number {
  if (pricing === undefined) return 0;
  const cachedPrice = pricing.cachedInputUsdPerMillion ?? pricing.inputUsdPerMillion;
  const uncached = Math.max(0, tokens.inputTokens - tokens.cachedInputTokens);
  return (
    (uncached * pricing.inputUsdPerMillion +
      tokens.cachedInputTokens * cachedPrice +
      tokens.outputTokens * pricing.outputUsdPerMillion) /
    1_000_000
  );
}

// ─── codecs ────────────────────────────────────────────────────────────────

const Count = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 0, 'Count');

const OpenAiUsage = t.intersection([
  t.type({ input_tokens: Count, output_tokens: Count }),
  t.partial({ input_tokens_details: t.partial({ cached_tokens: Count }) }),
]);
/** `response.completed` / `.incomplete` / `.failed` events, and a non-streamed response body. */
const OpenAiEvent = t.union([
  t.type({
    type: t.string,
    response: t.intersection([t.type({ usage: OpenAiUsage }), t.partial({ model: t.string })]),
  }),
  t.intersection([t.type({ object: t.literal('response'), usage: OpenAiUsage }), t.partial({ model: t.string })]),
]);
/** Any event that names the answering model (`response.created` does, before any usage). */
const OpenAiModel = t.union([t.type({ response: t.type({ model: t.string }) }), t.type({ model: t.string })]);

const AnthropicUsage = t.partial({
  input_tokens: Count,
  output_tokens: Count,
  cache_creation_input_tokens: t.union([Count, t.null]),
  cache_read_input_tokens: t.union([Count, t.null]),
});
const AnthropicStart = t.type({
  type: t.literal('message_start'),
  message: t.intersection([t.type({ usage: AnthropicUsage }), t.partial({ model: t.string })]),
});
const AnthropicDelta = t.type({ type: t.literal('message_delta'), usage: AnthropicUsage });
/** A non-streamed Messages response. */
const AnthropicMessage = t.intersection([
  t.type({ type: t.literal('message'), usage: AnthropicUsage }),
  t.partial({ model: t.string }),
]);

/** A streamed piece of output: OpenAI `response.*.delta` events, Anthropic `content_block_delta`. */
const OutputDelta = t.type({ type: t.string, delta: t.union([t.string, t.record(t.string, t.unknown)]) });

// ─── the meter ─────────────────────────────────────────────────────────────

/** Longest SSE event we look into; a longer one is skipped (usage events are small). */
const MAX_EVENT_CHARS = 1024 * 1024;
/** Largest JSON body parsed for usage; bigger non-stream bodies are not counted. */
const MAX_JSON_BODY_CHARS = 8 * 1024 * 1024;

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

interface Counts {
  input: number;
  cached: number;
  output: number;
}

/** What one response showed about its cost, whether or not it ran to the end. */
export interface ObservedUsage {
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  /** The provider's final usage report arrived (OpenAI `response.completed`…, Anthropic `message_delta`, a JSON body). */
  readonly final: boolean;
  /**
   * UTF-8 bytes of streamed output (delta text, skipped oversized events, an
   * unparsed JSON body). A byte-level tokenizer spends at least one byte per
   * token, so this bounds the output tokens the client could have been sent.
   */
  readonly outputBytes: number;
  readonly model: string | null;
}

/** Reads one response's bytes as they stream past and reports its usage at the end. */
export class UsageMeter {
  readonly #wire: ModelWire;
  readonly #sse: boolean;
  readonly #decoder = new TextDecoder();
  #pending = '';
  #skipping = false;
  #body = '';
  #bodyTooLarge = false;
  readonly #counts: Counts = { input: 0, cached: 0, output: 0 };
  #seen = false;
  #final = false;
  #outputBytes = 0;
  #closed = false;
  /** The model the provider says answered, when it said. */
  #model: string | null = null;

  /** `contentType`: the response's content-type header (SSE or JSON). */
  constructor(wire: ModelWire, contentType: string) {
    this.#wire = wire;
    this.#sse = contentType.toLowerCase().includes('text/event-stream');
  }

  push(chunk: Uint8Array): void {
    const text = this.#decoder.decode(chunk, { stream: true });
    if (!this.#sse) {
      if (this.#body.length + text.length > MAX_JSON_BODY_CHARS) this.#bodyTooLarge = true;
      else this.#body += text;
      if (this.#bodyTooLarge) this.#outputBytes += chunk.length;
      return;
    }
    this.#pending += text;
    for (;;) {
      const boundary = this.#pending.search(/\r?\n\r?\n/);
      if (boundary < 0) break;
      const event = this.#pending.slice(0, boundary);
      this.#pending = this.#pending.slice(boundary).replace(/^\r?\n\r?\n/, '');
      if (this.#skipping) {
        this.#skipping = false;
        this.#outputBytes += utf8Bytes(event);
      } else this.#event(event);
    }
    if (this.#pending.length > MAX_EVENT_CHARS) {
      // Drop the oversized event's head and ignore the rest of it — but count it as output.
      this.#outputBytes += utf8Bytes(this.#pending);
      this.#pending = '';
      this.#skipping = true;
    }
  }

  /** Everything seen so far, after reading what is still buffered (call once, at the end or at a cut). */
  observe(): ObservedUsage {
    if (!this.#closed) this.#close();
    return {
      inputTokens: this.#counts.input,
      cachedInputTokens: this.#counts.cached,
      outputTokens: this.#counts.output,
      final: this.#final,
      outputBytes: this.#outputBytes,
      model: this.#model,
    };
  }

  /** Usage of the whole response as reported (zero tokens when it reported none). */
  finish(pricing: ModelPricing | PriceForModel | undefined): ModelUsage {
    const seen = this.observe();
    const tokens = {
      inputTokens: seen.inputTokens,
      cachedInputTokens: seen.cachedInputTokens,
      outputTokens: seen.outputTokens,
    };
    const prices = typeof pricing === 'function' ? pricing(this.#model) : pricing;
    return { requests: 1, ...tokens, costUsd: priceUsage(tokens, prices) };
  }

  /** The model named by the response (null when it named none). */
  get model(): string | null {
    return this.#model;
  }

  /** Whether any usage field was seen. */
  get reported(): boolean {
    return this.#seen;
  }

  #close(): void {
    this.#closed = true;
    const tail = this.#decoder.decode();
    if (this.#sse) {
      this.#pending += tail;
      if (this.#pending.trim() !== '' && !this.#skipping) this.#event(this.#pending);
      else if (this.#skipping) this.#outputBytes += utf8Bytes(this.#pending);
      return;
    }
    if (this.#bodyTooLarge) return;
    const body = this.#body + tail;
    this.#json(body);
    // A body that reported no final usage (cut, or a shape we do not know) is all output, as far as we know.
    if (!this.#final) this.#outputBytes += utf8Bytes(body);
  }

  #event(block: string): void {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '' || data === '[DONE]') return;
    if (!this.#json(data)) this.#outputBytes += utf8Bytes(data);
  }

  /** False when `text` is not JSON. */
  #json(text: string): boolean {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return false;
    }
    this.#delta(value);
    if (this.#wire === 'openai-responses') this.#openAi(value);
    else this.#anthropic(value);
    return true;
  }

  #delta(value: unknown): void {
    const delta = OutputDelta.decode(value);
    if (delta._tag === 'Left' || this.#final) return;
    const piece = delta.right.delta;
    if (typeof piece === 'string') {
      if (delta.right.type.endsWith('.delta')) this.#outputBytes += utf8Bytes(piece);
      return;
    }
    if (delta.right.type !== 'content_block_delta') return;
    for (const [field, part] of Object.entries(piece)) {
      if (field !== 'type' && typeof part === 'string') this.#outputBytes += utf8Bytes(part);
    }
  }

  #openAi(value: unknown): void {
    const named = OpenAiModel.decode(value);
    if (named._tag === 'Right') {
      const model = 'response' in named.right ? named.right.response.model : named.right.model;
      this.#model = model.slice(0, 200);
    }
    const decoded = OpenAiEvent.decode(value);
    if (decoded._tag === 'Left') return;
    const body = 'response' in decoded.right ? decoded.right.response : decoded.right;
    const usage = body.usage;
    // A stream reports usage once, in its final event; the last report wins.
    this.#seen = true;
    this.#final = true;
    this.#counts.input = usage.input_tokens;
    this.#counts.cached = usage.input_tokens_details?.cached_tokens ?? 0;
    this.#counts.output = usage.output_tokens;
  }

  #anthropic(value: unknown): void {
    const start = AnthropicStart.decode(value);
    const delta = AnthropicDelta.decode(value);
    const message = AnthropicMessage.decode(value);
    if (start._tag === 'Right') {
      if (start.right.message.model !== undefined) this.#model = start.right.message.model.slice(0, 200);
      this.#anthropicUsage(start.right.message.usage);
    } else if (delta._tag === 'Right') {
      this.#anthropicUsage(delta.right.usage);
      this.#final = true;
    } else if (message._tag === 'Right') {
      if (message.right.model !== undefined) this.#model = message.right.model.slice(0, 200);
      this.#anthropicUsage(message.right.usage);
      this.#final = true;
    }
  }

  /** Anthropic's counts are cumulative per message: message_delta repeats and raises message_start's. */
  #anthropicUsage(usage: t.TypeOf<typeof AnthropicUsage>): void {
    this.#seen = true;
    const cacheRead = usage.cache_read_input_tokens ?? null;
    const cacheWrite = usage.cache_creation_input_tokens ?? null;
    if (usage.input_tokens !== undefined || cacheRead !== null || cacheWrite !== null) {
      const input = (usage.input_tokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
      this.#counts.input = Math.max(this.#counts.input, input);
      this.#counts.cached = Math.max(this.#counts.cached, cacheRead ?? 0);
    }
    if (usage.output_tokens !== undefined) this.#counts.output = Math.max(this.#counts.output, usage.output_tokens);
  }
}
