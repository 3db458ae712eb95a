/**
 * Imports servers from the configs people already have: a repository's
 * `.mcp.json` (project scope), Claude Code's `~/.claude.json` (its
 * `mcpServers`, user scope) and Codex's `~/.codex/config.toml`
 * (`[mcp_servers.NAME]`). Every imported server is `untrusted` with no tool
 * pinned: importing starts nothing, and a person's `crustcore mcp approve`
 * is what lets it run. A literal credential in a config is refused with the
 * way to move it into the vault.
 */

import { err, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import { describeDecodeErrors, type GatewayError, gatewayError } from '../errors.js';
import { checkNoCredential } from './credential-check.js';
import { DEFAULT_TIMEOUT_MS, SERVER_NAME_PATTERN, type ServerRecord, type Transport } from './server-record.js';
import { parseTomlSubset } from './toml-subset.js';

export type ConfigFormat = 'mcp-json' | 'claude' | 'codex';

const StringMap = t.record(t.string, t.string);
/** One entry of `mcpServers` as Claude Code and `.mcp.json` write it. */
const JsonServerC = t.intersection([
  t.partial({
    type: t.keyof({ stdio: null, http: null, sse: null, 'streamable-http': null }),
    command: t.string,
    args: t.readonlyArray(t.string),
    env: StringMap,
    url: t.string,
    headers: StringMap,
  }),
  t.UnknownRecord,
]);
const McpJsonC = t.type({ mcpServers: t.record(t.string, JsonServerC) });
/** One `[mcp_servers.NAME]` table of Codex. */
const CodexServerC = t.partial({
  command: t.string,
  args: t.readonlyArray(t.string),
  env: StringMap,
  url: t.string,
  bearer_token_env_var: t.string,
});
const CodexConfigC = t.partial({ mcp_servers: t.record(t.string, CodexServerC) });

export interface ImportOptions {
  readonly path: string;
  readonly format: ConfigFormat;
  /** For a project `.mcp.json`: the repository it belongs to (the only one allowed to use it). */
  readonly repository?: string;
}

interface RawEntry {
  readonly command?: string | undefined;
  readonly args?: readonly string[] | undefined;
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly url?: string | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly type?: string | undefined;
}

function transportOf(name: string, entry: RawEntry, where: string): Result<GatewayError, Transport> {
  if (entry.type === 'sse')
    return err(
      gatewayError(
        'Unsupported',
        `${where}: server ${name} uses the old SSE transport; only stdio and streamable HTTP are supported`,
      ),
    );
  if (entry.url !== undefined && entry.command === undefined) {
    if (!/^https?:\/\//.test(entry.url))
      return err(gatewayError('BadRecord', `${where}: server ${name}: url must be http(s)://`));
    return ok({ kind: 'http', url: entry.url });
  }
  if (entry.command === undefined || entry.command === '')
    return err(gatewayError('BadRecord', `${where}: server ${name} has neither a command nor a url`));
  return ok({ kind: 'stdio', command: entry.command, args: entry.args ?? [], env: { ...(entry.env ?? {}) } });
}

function recordOf(name: string, entry: RawEntry, options: ImportOptions): Result<GatewayError, ServerRecord> {
  const where = options.path;
  if (!SERVER_NAME_PATTERN.test(name))
    return err(
      gatewayError(
        'BadRecord',
        `${where}: server name ${JSON.stringify(name.slice(0, 80))} must be letters, digits, _ or - (≤ 64)`,
      ),
    );
  const leaked = checkNoCredential(name, { ...(entry.env ?? {}), ...(entry.headers ?? {}) });
  if (leaked !== null) return err(gatewayError('CredentialValue', `${where}: ${leaked}`));
  const transport = transportOf(name, entry, where);
  if (transport._tag === 'Left') return transport;
  return ok({
    name,
    transport: transport.right,
    trust: 'untrusted',
    repositories: options.repository === undefined ? [] : [options.repository],
    defaultPolicy: 'ask',
    tools: {},
    network: false,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    source: `${options.format}:${options.path}`,
  });
}

function entriesOf(text: string, options: ImportOptions): Result<GatewayError, [string, RawEntry][]> {
  const bad = (message: string): Result<GatewayError, never> =>
    err(gatewayError('BadConfigFile', `${options.path}: ${message}`, { path: options.path }));
  if (options.format === 'codex') {
    const parsed = parseTomlSubset(text);
    if (parsed._tag === 'Left') return bad(`${parsed.left}; fix the TOML or add the server with \`crustcore mcp add\``);
    const decoded = CodexConfigC.decode(parsed.right);
    if (decoded._tag === 'Left') return bad(`${describeDecodeErrors(decoded.left)} (in [mcp_servers.*])`);
    return ok(Object.entries(decoded.right.mcp_servers ?? {}));
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return bad(`not JSON (${(error as Error).message})`);
  }
  const decoded = McpJsonC.decode(raw);
  if (decoded._tag === 'Left')
    return bad(`${describeDecodeErrors(decoded.left)}; expected {"mcpServers": {"NAME": {"command": …}}}`);
  return ok(Object.entries(decoded.right.mcpServers) as [string, RawEntry][]);
}

/** The records a config file describes; the first bad entry fails the whole import. */
export function importConfig(text: string, options: ImportOptions): Result<GatewayError, ServerRecord[]> {
  const entries = entriesOf(text, options);
  if (entries._tag === 'Left') return entries;
  const records: ServerRecord[] = [];
  for (const [name, entry] of entries.right) {
    const record = recordOf(name, entry, options);
    if (record._tag === 'Left') return record;
    records.push(record.right);
  }
  return ok(records);
}
