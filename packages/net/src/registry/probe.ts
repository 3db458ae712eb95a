/**
 * Asks each configured endpoint which models it serves (every supported API
 * has a list-models endpoint), and compares the answer with the registry.
 * The registry is belief; the probe is observation. Keys are redacted from
 * any error text, as everywhere else.
 */
import * as t from 'io-ts';
import { decodeJson } from '../decode.js';
import { joinUrl, nullable } from '../dialect.js';
import type { ProviderError } from '../events.js';
import { safeExtraHeaders } from '../http-provider.js';
import { exchangeText, type FetchFunction, type HttpExchange, type Timeouts } from '../http-transport.js';
import { type KeySource, readKey } from '../key-source.js';
import { Redactor } from '../redaction.js';
import { ANTHROPIC_VERSION } from '../wire/anthropic.js';
import type { ModelRegistry, ProviderEntry } from './config.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface ProbedModel {
  readonly id: string;
  readonly contextWindow?: number;
  readonly maxOutputTokens?: number;
}

export interface ProbeReport {
  readonly provider: string;
  readonly kind: ProviderEntry['kind'];
  readonly baseUrl: string;
  readonly ok: boolean;
  readonly error?: ProviderError;
  /** What the endpoint lists (bounded); empty when the probe failed. */
  readonly models: readonly ProbedModel[];
  /** Each configured model and whether the endpoint lists it (undefined when the probe failed). */
  readonly configured: readonly { readonly id: string; readonly listed: boolean | undefined }[];
}

export interface ProbeOptions {
  readonly fetch?: FetchFunction;
  readonly timeouts?: Partial<Timeouts>;
  readonly now?: () => number;
  readonly signal?: AbortSignal;
}

/** Pages followed per provider, and models kept: a probe is a bounded look, not a crawl. */
export const MAX_PROBE_PAGES = 10;
export const MAX_PROBED_MODELS = 2_000;

const PROBE_TIMEOUTS: Timeouts = { firstByteMs: 15_000, idleMs: 15_000, totalMs: 30_000 };

// ─── codecs per API ───────────────────────────────────────────────────────

const OpenAIList = t.type({
  data: t.array(
    t.intersection([
      t.type({ id: t.string }),
      // OpenRouter adds these; plain OpenAI does not.
      t.partial({
        context_length: nullable(t.number),
        top_provider: nullable(t.partial({ max_completion_tokens: nullable(t.number) })),
      }),
    ]),
  ),
});
const AnthropicList = t.intersection([
  t.type({ data: t.array(t.type({ id: t.string })) }),
  t.partial({ has_more: t.boolean, last_id: nullable(t.string) }),
]);
const GeminiList = t.partial({
  models: t.array(
    t.intersection([t.type({ name: t.string }), t.partial({ inputTokenLimit: t.number, outputTokenLimit: t.number })]),
  ),
  nextPageToken: t.string,
});

interface Page {
  readonly models: ProbedModel[];
  readonly next?: string;
}

function listExchange(entry: ProviderEntry, key: string | undefined, cursor: string | undefined): HttpExchange {
  const headers: Record<string, string> = { ...safeExtraHeaders(entry.headers), accept: 'application/json' };
  if (entry.kind === 'anthropic') {
    headers['anthropic-version'] = ANTHROPIC_VERSION;
    if (key !== undefined) headers['x-api-key'] = key;
    const query = cursor === undefined ? '?limit=1000' : `?limit=1000&after_id=${encodeURIComponent(cursor)}`;
    return { url: joinUrl(entry.baseUrl, `models${query}`), method: 'GET', headers };
  }
  if (entry.kind === 'gemini') {
    if (key !== undefined) headers['x-goog-api-key'] = key;
    const query = cursor === undefined ? '?pageSize=1000' : `?pageSize=1000&pageToken=${encodeURIComponent(cursor)}`;
    return { url: joinUrl(entry.baseUrl, `models${query}`), method: 'GET', headers };
  }
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  return { url: joinUrl(entry.baseUrl, 'models'), method: 'GET', headers };
}

function parsePage(entry: ProviderEntry, text: string): Page | string {
  if (entry.kind === 'anthropic') {
    const decoded = decodeJson(AnthropicList, text);
    if (decoded._tag === 'Left') return decoded.left.message;
    const last = decoded.right.last_id;
    const models = decoded.right.data.map((model) => ({ id: model.id }));
    return decoded.right.has_more === true && last != null ? { models, next: last } : { models };
  }
  if (entry.kind === 'gemini') {
    const decoded = decodeJson(GeminiList, text);
    if (decoded._tag === 'Left') return decoded.left.message;
    const models = (decoded.right.models ?? []).map((model) => ({
      id: model.name.replace(/^models\//, ''),
      ...(model.inputTokenLimit === undefined ? {} : { contextWindow: model.inputTokenLimit }),
      ...(model.outputTokenLimit === undefined ? {} : { maxOutputTokens: model.outputTokenLimit }),
    }));
    const next = decoded.right.nextPageToken;
    return next === undefined || next === '' ? { models } : { models, next };
  }
  const decoded = decodeJson(OpenAIList, text);
  if (decoded._tag === 'Left') return decoded.left.message;
  return {
    models: decoded.right.data.map((model) => {
      const output = model.top_provider?.max_completion_tokens;
      return {
        id: model.id,
        ...(model.context_length == null ? {} : { contextWindow: model.context_length }),
        ...(output == null ? {} : { maxOutputTokens: output }),
      };
    }),
  };
}

// ─── probing ──────────────────────────────────────────────────────────────

export async function probeProvider(
  entry: ProviderEntry,
  keySource: KeySource | undefined,
  options: ProbeOptions = {},
): Promise<ProbeReport> {
  const report = (error: ProviderError | undefined, models: ProbedModel[]): ProbeReport => {
    const listed = new Set(models.map((model) => model.id));
    return {
      provider: entry.id,
      kind: entry.kind,
      baseUrl: entry.baseUrl,
      ok: error === undefined,
      ...(error === undefined ? {} : { error }),
      models,
      configured: entry.models.map((model) => ({
        id: model.id,
        listed: error === undefined ? listed.has(model.id) : undefined,
      })),
    };
  };
  let key: string | undefined;
  if (entry.keyName !== undefined) {
    const read = keySource === undefined ? undefined : await readKey(keySource);
    if (read === undefined || read._tag === 'Left') {
      const reason = read === undefined ? `secret "${entry.keyName}" is not available` : read.left.reason;
      return report({ _tag: 'auth', provider: entry.id, message: `no API key: ${reason}` }, []);
    }
    key = read.right;
  }
  const redactor = new Redactor(key === undefined ? [] : [key]);
  const context = {
    provider: entry.id,
    fetch: options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init)),
    timeouts: { ...PROBE_TIMEOUTS, ...options.timeouts },
    now: options.now ?? Date.now,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const models: ProbedModel[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PROBE_PAGES; page += 1) {
    const result = await exchangeText(listExchange(entry, key, cursor), context);
    if (!result.ok) return report({ ...result.error, message: redactor.text(result.error.message) }, []);
    const parsed = parsePage(entry, result.text);
    if (typeof parsed === 'string') {
      return report(
        { _tag: 'protocol', provider: entry.id, message: redactor.text(`unexpected model list: ${parsed}`) },
        [],
      );
    }
    models.push(...parsed.models.slice(0, MAX_PROBED_MODELS - models.length));
    cursor = parsed.next;
    if (cursor === undefined || models.length >= MAX_PROBED_MODELS) break;
  }
  return report(undefined, models);
}

export async function probeRegistry(
  registry: ModelRegistry,
  resolveKey: (name: string) => KeySource | undefined,
  options: ProbeOptions = {},
): Promise<ProbeReport[]> {
  // In parallel: one slow endpoint must not hold up the report for the others (each is time-bounded).
  return Promise.all(
    registry.providers.map((entry) =>
      probeProvider(entry, entry.keyName === undefined ? undefined : resolveKey(entry.keyName), options),
    ),
  );
}
