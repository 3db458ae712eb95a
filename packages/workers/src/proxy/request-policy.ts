/**
 * What a worker may ask its provider, decided before a byte goes upstream.
 * Exact endpoints, not prefixes (a prefix let `/v1/messages/batches` through
 * with the real key: one call, 100,000 billed requests), and exact request
 * shapes, decoded with io-ts: the model named, the output cap the budget
 * reserves against (inserted when the client sent none), and none of the
 * features that bill outside the answer we meter — background runs, stored
 * responses to fetch later, hosted tools, remote MCP, code containers.
 *
 * The body forwarded is the decoded value serialized again, never the
 * client's bytes: a JSON text with duplicate keys (`max_tokens` twice) means
 * whatever the parser picks, and the provider's parser may pick the other
 * one. Re-serializing makes what we reserved against the only thing sent.
 */
import * as t from 'io-ts';
import type { ModelWire } from './usage.js';

/** Settings a caller may loosen; every default is the strict one. */
export interface RequestPolicy {
  /** Output cap inserted when an OpenAI request names none (default 32,768). */
  readonly defaultMaxOutputTokens?: number;
  /** Lowers any larger declared cap to this (default: declared caps are kept). */
  readonly maxOutputTokens?: number;
  /** Let `background: true` through; its whole reservation is then charged up front (default false). */
  readonly allowBackground?: boolean;
  /** Let `store: true` through (nothing can fetch it back: only the exact POST endpoint is reachable). */
  readonly allowStore?: boolean;
  /** Request body bytes per estimated input token (default 3; text tokenizers average about 4). */
  readonly inputBytesPerToken?: number;
  /**
   * A requested model the price table does not know: refused (default), or
   * reserved and charged at the table's highest price. The second keeps a CLI's
   * newer default model usable, at the risk of a model dearer than any listed.
   */
  readonly unknownModels?: 'refuse' | 'highest-price';
}

export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768;
export const DEFAULT_INPUT_BYTES_PER_TOKEN = 3;
/** Largest request body read (Claude Code's are ~60 KB; long sessions grow to a few MB). */
export const MAX_REQUEST_BODY_BYTES = 32 * 1024 * 1024;

/** A request the policy let through, ready to reserve for and forward. */
export interface AdmittedRequest {
  readonly model: string;
  /** The output cap the forwarded body carries. */
  readonly maxOutputTokens: number;
  /** Input tokens estimated from the body's size. */
  readonly inputTokensEstimate: number;
  /** `background: true` let through by policy (no usage will come back). */
  readonly background: boolean;
  /** What goes upstream. */
  readonly body: Buffer;
}

/** Why a request was refused, in terms the provider-shaped error carries. */
export interface PolicyRefusal {
  readonly status: 400 | 403 | 405 | 413 | 415;
  readonly reason: string;
}

const Count = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 0, 'Count');
const Positive = t.refinement(Count, (n) => n > 0, 'PositiveCount');
const ModelId = t.refinement(t.string, (id) => /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/.test(id), 'ModelId');
const Tool = t.partial({ type: t.string });
const Optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.null, t.undefined]);

const OpenAiRequest = t.intersection([
  t.type({ model: ModelId }),
  t.partial({
    max_output_tokens: Optional(Positive),
    background: Optional(t.boolean),
    store: Optional(t.boolean),
    previous_response_id: Optional(t.string),
    conversation: t.unknown,
    tools: Optional(t.array(Tool)),
  }),
]);

const AnthropicRequest = t.intersection([
  t.type({ model: ModelId, max_tokens: Positive, messages: t.array(t.unknown) }),
  t.partial({ tools: Optional(t.array(Tool)), mcp_servers: t.unknown, container: t.unknown }),
]);

/** Tools the client runs itself (only their tokens are billed). Hosted tools bill per call, outside the answer. */
const OPENAI_CLIENT_TOOLS = new Set(['function', 'custom', 'local_shell', 'shell', 'apply_patch']);
const ANTHROPIC_CLIENT_TOOL = /^(?:custom|(?:bash|text_editor|memory)_\d{8})$/;

/** The one endpoint per wire: method, path, and the exact queries allowed. */
const ENDPOINTS: Readonly<Record<ModelWire, { readonly path: string; readonly queries: readonly string[] }>> = {
  'openai-responses': { path: '/v1/responses', queries: [''] },
  'anthropic-messages': { path: '/v1/messages', queries: ['', '?beta=true'] },
};

/** The request line: exactly `POST <endpoint>` with an allowed query, else a refusal. */
export function checkEndpoint(wire: ModelWire, method: string, target: string): PolicyRefusal | null {
  const endpoint = ENDPOINTS[wire];
  // Origin-form only: an absolute URI would be a worker using us as a forward proxy to another host.
  if (!target.startsWith('/'))
    return { status: 403, reason: 'only the provider API is reachable (absolute URI refused)' };
  const queryAt = target.indexOf('?');
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  const query = queryAt < 0 ? '' : target.slice(queryAt);
  if (path !== endpoint.path) {
    return { status: 403, reason: `path not allowed: only POST ${endpoint.path} is reachable` };
  }
  if (!endpoint.queries.includes(query)) return { status: 403, reason: `query ${query.slice(0, 100)} not allowed` };
  if (method !== 'POST') return { status: 405, reason: `method ${method.slice(0, 20)} not allowed (POST only)` };
  return null;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

const firstProblem = (errors: t.Errors): string => {
  const path = (errors[0]?.context ?? [])
    .map((entry) => entry.key)
    .filter((key) => key !== '' && !/^\d+$/.test(key))
    .join('.');
  return path === '' ? 'the request body' : `field ${path}`;
};

/** Decodes and checks a request body, and builds what is forwarded. */
export function admitBody(
  wire: ModelWire,
  contentType: string,
  body: Buffer,
  policy: RequestPolicy = {},
): PolicyRefusal | AdmittedRequest {
  if (!/^application\/json\s*(?:;|$)/i.test(contentType.trim())) {
    return { status: 415, reason: 'the request body must be application/json' };
  }
  const value = parseJson(body);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { status: 400, reason: 'the request body is not a JSON object' };
  }
  return wire === 'openai-responses'
    ? admitOpenAi(value as Record<string, unknown>, body.length, policy)
    : admitAnthropic(value as Record<string, unknown>, body.length, policy);
}

function admitted(
  fields: Record<string, unknown>,
  capField: string,
  model: string,
  cap: number,
  bodyBytes: number,
  policy: RequestPolicy,
  background: boolean,
): AdmittedRequest {
  const forwarded = { ...fields, [capField]: cap };
  const perToken = policy.inputBytesPerToken ?? DEFAULT_INPUT_BYTES_PER_TOKEN;
  return {
    model,
    maxOutputTokens: cap,
    inputTokensEstimate: Math.ceil(bodyBytes / Math.max(1, perToken)),
    background,
    body: Buffer.from(JSON.stringify(forwarded), 'utf8'),
  };
}

const lowered = (declared: number, policy: RequestPolicy): number =>
  policy.maxOutputTokens === undefined ? declared : Math.min(declared, policy.maxOutputTokens);

function admitOpenAi(
  fields: Record<string, unknown>,
  bodyBytes: number,
  policy: RequestPolicy,
): PolicyRefusal | AdmittedRequest {
  const decoded = OpenAiRequest.decode(fields);
  if (decoded._tag === 'Left') return { status: 400, reason: `unexpected ${firstProblem(decoded.left)}` };
  const request = decoded.right;
  const background = request.background === true;
  if (background && policy.allowBackground !== true) {
    return { status: 403, reason: 'background responses are not allowed (they return before any usage)' };
  }
  if (request.store === true && policy.allowStore !== true) {
    return { status: 403, reason: 'store: true is not allowed (send store: false)' };
  }
  if (typeof request.previous_response_id === 'string' || (request.conversation ?? null) !== null) {
    return { status: 403, reason: 'stored conversation state is not allowed (send the whole input)' };
  }
  const hosted = (request.tools ?? []).find((tool) => !OPENAI_CLIENT_TOOLS.has(tool.type ?? ''));
  if (hosted !== undefined) {
    return {
      status: 403,
      reason: `tool type ${String(hosted.type).slice(0, 60)} is not allowed (hosted tools bill outside the answer)`,
    };
  }
  const declared = request.max_output_tokens ?? policy.defaultMaxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const cap = lowered(declared, policy);
  return admitted(fields, 'max_output_tokens', request.model, cap, bodyBytes, policy, background);
}

function admitAnthropic(
  fields: Record<string, unknown>,
  bodyBytes: number,
  policy: RequestPolicy,
): PolicyRefusal | AdmittedRequest {
  const decoded = AnthropicRequest.decode(fields);
  if (decoded._tag === 'Left') return { status: 400, reason: `unexpected ${firstProblem(decoded.left)}` };
  const request = decoded.right;
  if (request.mcp_servers !== undefined || request.container !== undefined) {
    return { status: 403, reason: 'mcp_servers and container are not allowed (they run outside the sandbox)' };
  }
  const hosted = (request.tools ?? []).find(
    (tool) => tool.type !== undefined && !ANTHROPIC_CLIENT_TOOL.test(tool.type),
  );
  if (hosted !== undefined) {
    return {
      status: 403,
      reason: `tool type ${String(hosted.type).slice(0, 60)} is not allowed (server tools bill outside the answer)`,
    };
  }
  const cap = lowered(request.max_tokens, policy);
  return admitted(fields, 'max_tokens', request.model, cap, bodyBytes, policy, false);
}
