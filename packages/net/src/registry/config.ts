/**
 * The model registry file: which providers exist, where they listen, which
 * secret holds each key, and what we believe about each model (context
 * window, tool support, prices, roles). Beliefs, not truth: `crustcore models
 * --probe` asks each endpoint what it actually serves. Decoded with io-ts and
 * then checked for the rules a codec cannot express.
 */
import { readFile } from 'node:fs/promises';
import { err, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import { decode, parseJson } from '../decode.js';
import type { Timeouts } from '../http-transport.js';
import type { ModelPrices } from '../pricing.js';
import { DEFAULT_BASE_URLS, PROVIDER_KINDS, type ProviderKind } from '../provider-kind.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface ModelEntry {
  readonly id: string;
  readonly contextWindow?: number;
  readonly maxOutputTokens?: number;
  readonly tools?: boolean;
  readonly prices?: ModelPrices;
  readonly roles: readonly string[];
  readonly note?: string;
}

export interface ProviderEntry {
  readonly id: string;
  readonly kind: ProviderKind;
  /** Resolved: the configured base URL or the kind's default. */
  readonly baseUrl: string;
  /** The NAME of `secret://NAME`; absent for keyless endpoints. */
  readonly keyName?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeouts?: Partial<Timeouts>;
  readonly appUrl?: string;
  readonly appName?: string;
  readonly maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  readonly models: readonly ModelEntry[];
  readonly note?: string;
}

export interface RetrySettings {
  readonly maxAttemptsPerCandidate?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly maxRetryAfterMs?: number;
}

export interface ModelRegistry {
  readonly version: 1;
  readonly defaultRole: string;
  readonly providers: readonly ProviderEntry[];
  readonly retry?: RetrySettings;
  /** Ceilings the remote role chains share; each request's worst case is reserved against them first. */
  readonly budget?: { readonly ceilingMicroDollars: number; readonly ceilingTokens?: number };
  /** Pre-router class (`stack-trace`, `stack-trace:python`, `sql`, …) → the role that serves such inputs. */
  readonly inputRoles?: Readonly<Record<string, string>>;
}

export interface RegistryError {
  readonly _tag: 'RegistryError';
  readonly problems: readonly string[];
}

// ─── codecs ───────────────────────────────────────────────────────────────

const kindKeys = Object.fromEntries(PROVIDER_KINDS.map((kind) => [kind, null])) as Record<ProviderKind, null>;

const Prices = t.intersection([
  t.type({ inputPerMillion: t.number, outputPerMillion: t.number }),
  t.partial({ cacheReadPerMillion: t.number, cacheWritePerMillion: t.number }),
]);

const ModelCodec = t.intersection([
  t.type({ id: t.string }),
  t.partial({
    contextWindow: t.number,
    maxOutputTokens: t.number,
    tools: t.boolean,
    prices: Prices,
    roles: t.array(t.string),
    note: t.string,
  }),
]);

const ProviderCodec = t.intersection([
  t.type({ id: t.string, kind: t.keyof(kindKeys), models: t.array(ModelCodec) }),
  t.partial({
    baseUrl: t.string,
    key: t.string,
    headers: t.record(t.string, t.string),
    timeouts: t.partial({ firstByteMs: t.number, idleMs: t.number, totalMs: t.number }),
    appUrl: t.string,
    appName: t.string,
    maxTokensField: t.keyof({ max_tokens: null, max_completion_tokens: null }),
    note: t.string,
  }),
]);

export const RegistryFileCodec = t.intersection([
  t.type({ version: t.literal(1), providers: t.array(ProviderCodec) }),
  t.partial({
    defaultRole: t.string,
    retry: t.partial({
      maxAttemptsPerCandidate: t.number,
      baseDelayMs: t.number,
      maxDelayMs: t.number,
      maxRetryAfterMs: t.number,
    }),
    budget: t.intersection([t.type({ ceilingMicroDollars: t.number }), t.partial({ ceilingTokens: t.number })]),
    inputRoles: t.record(t.string, t.string),
    note: t.string,
  }),
]);

export type RegistryFile = t.TypeOf<typeof RegistryFileCodec>;

/** Bounds: a registry is a small hand-written file. */
export const MAX_REGISTRY_PROVIDERS = 64;
export const MAX_MODELS_PER_PROVIDER = 256;

const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const ROLE = /^[a-z][a-z0-9_-]{0,31}$/;
const SECRET_HANDLE = /^secret:\/\/([A-Za-z0-9][A-Za-z0-9_.-]{0,127})$/;
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'cookie',
  'proxy-authorization',
]);
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export const parseSecretHandle = (handle: string): string | undefined => SECRET_HANDLE.exec(handle)?.[1];

const positiveInteger = (value: number | undefined): boolean =>
  value === undefined || (Number.isSafeInteger(value) && value > 0);

// ─── validation ───────────────────────────────────────────────────────────

function checkBaseUrl(where: string, raw: string, hasKey: boolean, problems: string[]): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push(`${where}: baseUrl is not a URL`);
    return;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') problems.push(`${where}: baseUrl must be http(s)`);
  if (url.username !== '' || url.password !== '')
    problems.push(`${where}: baseUrl must not embed credentials; use "key"`);
  if (url.search !== '' || url.hash !== '') problems.push(`${where}: baseUrl must not have a query or fragment`);
  // A key sent in clear text to another machine is a leaked key.
  if (hasKey && url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) {
    problems.push(`${where}: a keyed provider must use https unless it is on loopback`);
  }
}

function checkModel(where: string, model: t.TypeOf<typeof ModelCodec>, problems: string[]): ModelEntry {
  if (model.id === '' || model.id.length > 256) problems.push(`${where}: model id must be 1–256 characters`);
  if (!positiveInteger(model.contextWindow)) problems.push(`${where}: contextWindow must be a positive integer`);
  if (!positiveInteger(model.maxOutputTokens)) problems.push(`${where}: maxOutputTokens must be a positive integer`);
  const prices = model.prices;
  if (prices !== undefined) {
    for (const [name, value] of Object.entries(prices)) {
      if (typeof value === 'number' && (!Number.isFinite(value) || value < 0)) {
        problems.push(`${where}: prices.${name} must be a non-negative number`);
      }
    }
  }
  const roles = model.roles ?? [];
  for (const role of roles) if (!ROLE.test(role)) problems.push(`${where}: role "${role}" must match ${ROLE.source}`);
  const entry: ModelEntry = { id: model.id, roles };
  return {
    ...entry,
    ...(model.contextWindow === undefined ? {} : { contextWindow: model.contextWindow }),
    ...(model.maxOutputTokens === undefined ? {} : { maxOutputTokens: model.maxOutputTokens }),
    ...(model.tools === undefined ? {} : { tools: model.tools }),
    ...(prices === undefined ? {} : { prices }),
    ...(model.note === undefined ? {} : { note: model.note }),
  };
}

function checkProvider(provider: t.TypeOf<typeof ProviderCodec>, problems: string[]): ProviderEntry {
  const where = `provider "${provider.id}"`;
  if (!PROVIDER_ID.test(provider.id)) problems.push(`${where}: id must match ${PROVIDER_ID.source}`);
  let keyName: string | undefined;
  if (provider.key !== undefined) {
    keyName = parseSecretHandle(provider.key);
    if (keyName === undefined) problems.push(`${where}: key must be a handle "secret://NAME", never the key itself`);
  }
  const baseUrl = provider.baseUrl ?? DEFAULT_BASE_URLS[provider.kind];
  checkBaseUrl(where, baseUrl, provider.key !== undefined, problems);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(provider.headers ?? {})) {
    if (CREDENTIAL_HEADERS.has(name.toLowerCase()))
      problems.push(`${where}: header "${name}" carries credentials; use "key"`);
    else if (!/^[A-Za-z0-9-]{1,64}$/.test(name) || /[\r\n]/.test(value))
      problems.push(`${where}: invalid header "${name}"`);
    else headers[name.toLowerCase()] = value;
  }
  for (const [name, value] of Object.entries(provider.timeouts ?? {})) {
    if (!positiveInteger(value)) problems.push(`${where}: timeouts.${name} must be a positive integer (ms)`);
  }
  if (provider.models.length > MAX_MODELS_PER_PROVIDER)
    problems.push(`${where}: more than ${MAX_MODELS_PER_PROVIDER} models`);
  const seen = new Set<string>();
  const models = provider.models.map((model) => {
    if (seen.has(model.id)) problems.push(`${where}: model "${model.id}" listed twice`);
    seen.add(model.id);
    return checkModel(`${where} model "${model.id}"`, model, problems);
  });
  return {
    id: provider.id,
    kind: provider.kind,
    baseUrl,
    headers,
    models,
    ...(keyName === undefined ? {} : { keyName }),
    ...(provider.timeouts === undefined ? {} : { timeouts: provider.timeouts }),
    ...(provider.appUrl === undefined ? {} : { appUrl: provider.appUrl }),
    ...(provider.appName === undefined ? {} : { appName: provider.appName }),
    ...(provider.maxTokensField === undefined ? {} : { maxTokensField: provider.maxTokensField }),
    ...(provider.note === undefined ? {} : { note: provider.note }),
  };
}

const INPUT_CLASS = /^(?:diff|stack-trace|code-fence|json|latex|sql)(?::[a-z0-9_+#.-]{1,32})?$/;

/** Each key must be a class the pre-router can answer, each value a role some model serves. */
function checkInputRoles(inputRoles: Readonly<Record<string, string>>, roles: ReadonlySet<string>, problems: string[]) {
  for (const [key, role] of Object.entries(inputRoles)) {
    if (!INPUT_CLASS.test(key))
      problems.push(`inputRoles: "${key}" is not a pre-router class (see docs/model-routing.md)`);
    if (!roles.has(role)) problems.push(`inputRoles.${key}: "${role}" is not the role of any model`);
  }
}

export function validateRegistry(file: RegistryFile): Result<RegistryError, ModelRegistry> {
  const problems: string[] = [];
  if (file.providers.length > MAX_REGISTRY_PROVIDERS) problems.push(`more than ${MAX_REGISTRY_PROVIDERS} providers`);
  const ids = new Set<string>();
  const providers = file.providers.map((provider) => {
    if (ids.has(provider.id)) problems.push(`provider "${provider.id}" listed twice`);
    ids.add(provider.id);
    return checkProvider(provider, problems);
  });
  const roles = new Set(providers.flatMap((provider) => provider.models.flatMap((model) => model.roles)));
  const defaultRole = file.defaultRole ?? (roles.has('implement') ? 'implement' : ([...roles][0] ?? 'implement'));
  if (roles.size > 0 && !roles.has(defaultRole))
    problems.push(`defaultRole "${defaultRole}" is not the role of any model`);
  const retry = file.retry;
  for (const [name, value] of Object.entries(retry ?? {})) {
    if (!positiveInteger(value)) problems.push(`retry.${name} must be a positive integer`);
  }
  const budget = file.budget;
  if (budget !== undefined && (!Number.isFinite(budget.ceilingMicroDollars) || budget.ceilingMicroDollars < 0)) {
    problems.push('budget.ceilingMicroDollars must be a non-negative number');
  }
  if (
    budget?.ceilingTokens !== undefined &&
    !(Number.isSafeInteger(budget.ceilingTokens) && budget.ceilingTokens >= 0)
  ) {
    problems.push('budget.ceilingTokens must be a non-negative integer');
  }
  const inputRoles = file.inputRoles;
  checkInputRoles(inputRoles ?? {}, roles, problems);
  if (problems.length > 0) return err({ _tag: 'RegistryError', problems });
  return ok({
    version: 1,
    defaultRole,
    providers,
    ...(retry === undefined ? {} : { retry }),
    ...(budget === undefined ? {} : { budget }),
    ...(inputRoles === undefined ? {} : { inputRoles }),
  });
}

export function decodeRegistry(value: unknown): Result<RegistryError, ModelRegistry> {
  const decoded = decode(RegistryFileCodec, value);
  if (decoded._tag === 'Left') return err({ _tag: 'RegistryError', problems: [decoded.left.message] });
  return validateRegistry(decoded.right);
}

export function parseRegistry(text: string): Result<RegistryError, ModelRegistry> {
  const parsed = parseJson(text);
  if (parsed._tag === 'Left') return err({ _tag: 'RegistryError', problems: [`not JSON: ${parsed.left.message}`] });
  return decodeRegistry(parsed.right);
}

/** Bound on a registry file read from disk. */
export const MAX_REGISTRY_FILE_BYTES = 1024 * 1024;

export async function readRegistryFile(path: string): Promise<Result<RegistryError, ModelRegistry>> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (thrown) {
    const code = (thrown as { code?: string }).code ?? 'read error';
    return err({ _tag: 'RegistryError', problems: [`cannot read ${path}: ${code}`] });
  }
  if (bytes.byteLength > MAX_REGISTRY_FILE_BYTES) {
    return err({ _tag: 'RegistryError', problems: [`${path} exceeds ${MAX_REGISTRY_FILE_BYTES} bytes`] });
  }
  return parseRegistry(bytes.toString('utf8'));
}
