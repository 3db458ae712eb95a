/**
 * The one HTTP provider implementation, parameterized by a wire dialect, and
 * the per-vendor constructors. Shared here: key read per request, transport
 * with bounded waits, decoding, key redaction on every yielded event, and the
 * never-throw guard.
 */
import type { Dialect } from './dialect.js';
import { errorEvent, type StreamEvent } from './events.js';
import { DEFAULT_TIMEOUTS, type FetchFunction, streamServerSentEvents, type Timeouts } from './http-transport.js';
import { type KeySource, readKey } from './key-source.js';
import type { ModelPrices, PriceLookup } from './pricing.js';
import { guardStream, type ModelProvider } from './provider.js';
import { DEFAULT_BASE_URLS, type ProviderKind } from './provider-kind.js';
import { DeltaRedactor, Redactor } from './redaction.js';
import type { ModelRequest } from './request.js';
import { anthropicDialect } from './wire/anthropic.js';
import { geminiDialect } from './wire/gemini.js';
import { type ChatDialectOptions, openAIChatDialect } from './wire/openai-chat.js';
import { openAIResponsesDialect } from './wire/openai-responses.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface HttpProviderOptions {
  /** Registry id; appears in every error event and in routing. */
  readonly id: string;
  /** The API's version root, e.g. `https://api.openai.com/v1`. Defaults per kind. */
  readonly baseUrl?: string;
  /** Absent for keyless local endpoints: then no auth header is sent at all. */
  readonly key?: KeySource;
  /** Extra non-secret headers. They cannot override the auth or protocol headers. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeouts?: Partial<Timeouts>;
  /** Model id → prices, or a lookup function. */
  readonly prices?: PriceLookup | Readonly<Record<string, ModelPrices>>;
  /** Injected for tests and proxies; defaults to the global fetch. */
  readonly fetch?: FetchFunction;
  /** Wall clock used to interpret HTTP-date Retry-After values. */
  readonly now?: () => number;
  /** Bound on one SSE event, UTF-16 code units. */
  readonly maxEventLength?: number;
}

// ─── the provider ─────────────────────────────────────────────────────────

const defaultFetch: FetchFunction = (input, init) => fetch(input, init);

export class HttpModelProvider implements ModelProvider {
  readonly id: string;
  readonly #dialect: Dialect;
  readonly #options: HttpProviderOptions;
  readonly #baseUrl: string;
  readonly #timeouts: Timeouts;
  readonly #prices: PriceLookup;

  constructor(dialect: Dialect, baseUrl: string, options: HttpProviderOptions) {
    this.id = options.id;
    this.#dialect = dialect;
    this.#options = options;
    this.#baseUrl = options.baseUrl ?? baseUrl;
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    const prices = options.prices;
    // Own keys only: `toString` or `__proto__` must not read as a price.
    this.#prices =
      typeof prices === 'function'
        ? prices
        : (model) => (prices !== undefined && Object.hasOwn(prices, model) ? prices[model] : undefined);
  }

  get baseUrl(): string {
    return this.#baseUrl;
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    // Filled with the key once it is read, before the first event is produced.
    const secrets: string[] = [];
    return redactStream(
      guardStream(this.id, () => this.#raw(request, signal, secrets)),
      secrets,
    );
  }

  async *#raw(
    request: ModelRequest,
    signal: AbortSignal | undefined,
    secrets: string[],
  ): AsyncGenerator<StreamEvent, void, undefined> {
    let key: string | undefined;
    if (this.#options.key !== undefined) {
      const read = await readKey(this.#options.key);
      if (read._tag === 'Left') {
        yield errorEvent({
          _tag: 'auth',
          provider: this.id,
          message: `no API key for provider "${this.id}": ${read.left.reason}`,
        });
        return;
      }
      key = read.right;
      secrets.push(key);
    }
    const exchange = this.#dialect.buildExchange(this.#baseUrl, request, key);
    const headers = { ...safeExtraHeaders(this.#options.headers), ...exchange.headers };
    const decoder = this.#dialect.createDecoder({
      provider: this.id,
      model: request.model,
      prices: this.#prices(request.model),
    });
    const transport = streamServerSentEvents(
      { ...exchange, headers },
      {
        provider: this.id,
        fetch: this.#options.fetch ?? defaultFetch,
        timeouts: this.#timeouts,
        now: this.#options.now ?? Date.now,
        ...(signal === undefined ? {} : { signal }),
        ...(this.#options.maxEventLength === undefined ? {} : { maxEventLength: this.#options.maxEventLength }),
      },
    );
    for await (const item of transport) {
      if (item.kind === 'failure') {
        yield errorEvent(item.error);
        return;
      }
      for (const event of decoder.push(item.message)) {
        yield event;
        if (event.type === 'done' || event.type === 'error') return;
      }
    }
    yield* decoder.end();
  }
}

/** Headers that carry credentials are set by the dialect from the key source only. */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'cookie',
  'proxy-authorization',
]);

export function safeExtraHeaders(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (CREDENTIAL_HEADERS.has(lower) || /[\r\n]/.test(value)) continue;
    out[lower] = value;
  }
  return out;
}

/**
 * Applies key redaction to a finished-guard stream. Text and thinking deltas
 * go through streaming redactors (a key may straddle two deltas); everything
 * else is redacted field by field. Held-back text is released before the next
 * non-delta event, so ordering is preserved.
 */
async function* redactStream(
  source: AsyncIterable<StreamEvent>,
  secrets: readonly string[],
): AsyncGenerator<StreamEvent, void, undefined> {
  let redactor: Redactor | undefined;
  let text: DeltaRedactor | undefined;
  let thinking: DeltaRedactor | undefined;
  for await (const event of source) {
    if (redactor === undefined) {
      redactor = new Redactor(secrets);
      text = new DeltaRedactor(redactor, secrets);
      thinking = new DeltaRedactor(redactor, secrets);
    }
    if (!redactor.active) {
      yield event;
      continue;
    }
    if (event.type === 'text_delta' || event.type === 'thinking_delta') {
      const channel = event.type === 'text_delta' ? text : thinking;
      const out = channel?.push(event.text) ?? event.text;
      if (out !== '') yield out === event.text ? event : { type: event.type, text: out };
      continue;
    }
    const heldThinking = thinking?.flush() ?? '';
    if (heldThinking !== '') yield { type: 'thinking_delta', text: heldThinking };
    const heldText = text?.flush() ?? '';
    if (heldText !== '') yield { type: 'text_delta', text: heldText };
    yield redactor.event(event);
  }
}

// ─── constructors ─────────────────────────────────────────────────────────

export const createOpenAIResponsesProvider = (options: HttpProviderOptions): HttpModelProvider =>
  new HttpModelProvider(openAIResponsesDialect(), DEFAULT_BASE_URLS['openai-responses'], options);

export const createOpenAIChatProvider = (options: HttpProviderOptions): HttpModelProvider =>
  new HttpModelProvider(
    openAIChatDialect({ maxTokensField: 'max_completion_tokens', reasoning: 'openai', promptCacheKey: true }),
    DEFAULT_BASE_URLS['openai-chat'],
    options,
  );

export const createAnthropicProvider = (options: HttpProviderOptions): HttpModelProvider =>
  new HttpModelProvider(anthropicDialect(), DEFAULT_BASE_URLS.anthropic, options);

export const createGeminiProvider = (options: HttpProviderOptions): HttpModelProvider =>
  new HttpModelProvider(geminiDialect(), DEFAULT_BASE_URLS.gemini, options);

export interface OpenRouterOptions extends HttpProviderOptions {
  /** Sent as `HTTP-Referer` for OpenRouter's app attribution. */
  readonly appUrl?: string;
  /** Sent as `X-Title`. */
  readonly appName?: string;
}

export function createOpenRouterProvider(options: OpenRouterOptions): HttpModelProvider {
  const attribution: Record<string, string> = {};
  if (options.appUrl !== undefined) attribution['http-referer'] = options.appUrl;
  if (options.appName !== undefined) attribution['x-title'] = options.appName;
  return new HttpModelProvider(
    openAIChatDialect({ maxTokensField: 'max_tokens', reasoning: 'openrouter', promptCacheKey: false }),
    DEFAULT_BASE_URLS.openrouter,
    { ...options, headers: { ...attribution, ...options.headers } },
  );
}

export interface OpenAICompatibleOptions extends HttpProviderOptions {
  readonly maxTokensField?: ChatDialectOptions['maxTokensField'];
}

/** vLLM, LM Studio, llama.cpp server, Ollama's /v1: Chat Completions at a configurable base URL. */
export const createOpenAICompatibleProvider = (options: OpenAICompatibleOptions): HttpModelProvider =>
  new HttpModelProvider(
    openAIChatDialect({
      maxTokensField: options.maxTokensField ?? 'max_tokens',
      reasoning: 'none',
      promptCacheKey: false,
    }),
    DEFAULT_BASE_URLS['openai-compatible'],
    options,
  );

export const createOllamaProvider = (options: OpenAICompatibleOptions): HttpModelProvider =>
  new HttpModelProvider(
    openAIChatDialect({
      maxTokensField: options.maxTokensField ?? 'max_tokens',
      reasoning: 'none',
      promptCacheKey: false,
    }),
    DEFAULT_BASE_URLS.ollama,
    options,
  );

export function createProvider(
  kind: ProviderKind,
  options: OpenRouterOptions & OpenAICompatibleOptions,
): HttpModelProvider {
  switch (kind) {
    case 'openai-responses':
      return createOpenAIResponsesProvider(options);
    case 'openai-chat':
      return createOpenAIChatProvider(options);
    case 'anthropic':
      return createAnthropicProvider(options);
    case 'gemini':
      return createGeminiProvider(options);
    case 'openrouter':
      return createOpenRouterProvider(options);
    case 'openai-compatible':
      return createOpenAICompatibleProvider(options);
    case 'ollama':
      return createOllamaProvider(options);
  }
}
