/**
 * One registered MCP server, as data. The registry file is decoded with these
 * codecs every time it is read: a hand-edited or corrupted file is a typed
 * error, never a half-trusted record.
 *
 * A record never holds a credential: `auth` is a `secret://NAME` handle that
 * the gateway resolves from the vault at start-up (see credentials.ts).
 */
import * as t from 'io-ts';

const MAX_NAME = 64;
const MAX_TEXT = 4_096;
const MAX_LIST = 256;

/** Server and tool names: what a person types and what prefixes the model's tool names. */
/** No `__`: it separates server and tool in the model's tool names (`mcp__SERVER__TOOL`). */
export const SERVER_NAME_PATTERN = /^(?!.*__)[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const bounded = (max: number, name: string) =>
  t.refinement(t.string, (s) => s.length <= max && !s.includes('\u0000'), `${name}(<=${max} chars)`);
const boundedList = <C extends t.Mixed>(codec: C, max: number) =>
  t.refinement(t.readonlyArray(codec), (a) => a.length <= max, `list(<=${max})`);

export const ServerNameC = t.refinement(t.string, (s) => SERVER_NAME_PATTERN.test(s), 'ServerName');
/** A `secret://NAME` handle, never a value. */
export const AuthHandleC = t.refinement(t.string, (s) => /^secret:\/\/[A-Za-z0-9_.-]{1,64}$/.test(s), 'secret://NAME');

export const ToolPolicyC = t.keyof({ allow: null, ask: null, deny: null });
export type ToolPolicy = t.TypeOf<typeof ToolPolicyC>;

/** `trusted`: a person approved it. `untrusted`: found in a repository's files; nothing starts. */
export const TrustC = t.keyof({ trusted: null, untrusted: null });
export type Trust = t.TypeOf<typeof TrustC>;

export const StdioTransportC = t.type({
  kind: t.literal('stdio'),
  command: bounded(MAX_TEXT, 'command'),
  args: boundedList(bounded(MAX_TEXT, 'arg'), MAX_LIST),
  /** Non-secret variables for the server. Credentials go through `auth`. */
  env: t.record(bounded(MAX_NAME * 2, 'env name'), bounded(MAX_TEXT, 'env value')),
});
export const HttpTransportC = t.type({ kind: t.literal('http'), url: bounded(MAX_TEXT, 'url') });
export const TransportC = t.union([StdioTransportC, HttpTransportC]);
export type Transport = t.TypeOf<typeof TransportC>;

/** Where the auth handle goes: an environment variable (stdio) or a header (HTTP). */
export const AuthC = t.type({
  handle: AuthHandleC,
  /** Env name (stdio) or header name (http). */
  target: bounded(MAX_NAME * 2, 'auth target'),
});
export type Auth = t.TypeOf<typeof AuthC>;

/** What a person approved about one tool: its definition's hash and its policy. */
export const ToolPinC = t.type({
  /** sha256 of the canonical JSON of {name, description, inputSchema}. */
  hash: t.refinement(t.string, (s) => /^[0-9a-f]{64}$/.test(s), 'sha256 hex'),
  policy: ToolPolicyC,
  /** The definition as approved, for showing a diff when it changes. */
  definition: t.unknown,
});
export type ToolPin = t.TypeOf<typeof ToolPinC>;

export const ServerRecordC = t.intersection([
  t.type({
    name: ServerNameC,
    transport: TransportC,
    trust: TrustC,
    /** Repositories (absolute paths) whose tasks may use this server; empty: none. `*`: every one. */
    repositories: boundedList(bounded(MAX_TEXT, 'repository'), MAX_LIST),
    /** Policy for tools without a pin of their own. */
    defaultPolicy: ToolPolicyC,
    tools: t.record(bounded(MAX_TEXT, 'tool name'), ToolPinC),
    /** Whether the stdio server may use the network (refused for now: see docs/mcp-gateway.md). */
    network: t.boolean,
    /** Per-call limit in milliseconds; the server is killed when a call passes it. */
    timeoutMs: t.refinement(t.number, (n) => Number.isInteger(n) && n >= 100 && n <= 3_600_000, 'timeoutMs'),
    /** Where the record came from (`cli`, or the config file it was imported from). */
    source: bounded(MAX_TEXT, 'source'),
  }),
  t.partial({
    auth: AuthC,
    /** Host directories bound read-only into the server's sandbox (its code, its data). */
    readPaths: boundedList(bounded(MAX_TEXT, 'path'), 32),
  }),
]);
export type ServerRecord = t.TypeOf<typeof ServerRecordC>;

export const REGISTRY_VERSION = 1;
export const RegistryFileC = t.type({
  version: t.literal(REGISTRY_VERSION),
  servers: boundedList(ServerRecordC, MAX_LIST),
});
export type RegistryFile = t.TypeOf<typeof RegistryFileC>;

export const DEFAULT_TIMEOUT_MS = 30_000;
