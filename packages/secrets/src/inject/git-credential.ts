/**
 * A git credential helper that hands a token to git and nothing else. Git
 * runs the helper (`credential.helper=!…`); the helper is a tiny script
 * holding no secret: it forwards git's request over a Unix socket, in a 0700
 * directory, to a broker inside the trusted crustcore process. The broker
 * checks protocol, host and repository path against an allowlist and only
 * then answers with the token.
 *
 * Git with credentials runs through the trusted host runner, never inside a
 * sandbox; the broker's directory must never be bound into one.
 */
import { Buffer } from 'node:buffer';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { scriptNodeBinary } from '@crustcore/sandbox';
import type { SecretHandle } from '../handle.js';
import type { SecretMaterial } from '../material.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface GitCredentialRequest {
  readonly protocol: string;
  readonly host: string;
  /** Repository path without a leading slash, when git sends it (credential.useHttpPath). */
  readonly path: string | null;
  readonly username: string | null;
}

export interface GitCredentialRule {
  readonly protocol: 'https';
  /** Host as git sends it: lowercase, with `:port` when not the default. */
  readonly host: string;
  /** Allowed repositories (`owner/repo`); null allows every repository on the host. */
  readonly repositories: readonly string[] | null;
  /** Username sent with the token (GitHub: `x-access-token`). */
  readonly username: string;
  readonly handle: SecretHandle;
}

export type GitCredentialError =
  | { readonly _tag: 'GitCredentialMalformed'; readonly reason: string }
  | { readonly _tag: 'GitCredentialDenied'; readonly reason: string }
  | { readonly _tag: 'GitCredentialUnavailable'; readonly reason: string };

export interface GitCredentialDecision {
  readonly operation: string;
  readonly protocol: string | null;
  readonly host: string | null;
  readonly path: string | null;
  /** null when the token was given. */
  readonly refused: string | null;
}

export type ResolveSecret = (handle: SecretHandle) => Promise<SecretMaterial | null>;

const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_LINES = 256;

// ─── protocol ─────────────────────────────────────────────────────────────

/** Parses git's `key=value` lines (terminated by a blank line or EOF). */
export function parseGitCredentialRequest(input: string): Result<GitCredentialError, GitCredentialRequest> {
  const malformed = (reason: string): Result<GitCredentialError, GitCredentialRequest> =>
    err({ _tag: 'GitCredentialMalformed', reason });
  if (input.length > MAX_REQUEST_BYTES) return malformed('request too large');
  // CR and NUL inside values are how credential-protocol injection starts (CVE-2020-5260).
  if (/[\r\u0000]/.test(input)) return malformed('control characters in request');
  const fields = new Map<string, string>();
  const lines = input.split('\n');
  if (lines.length > MAX_LINES) return malformed('too many lines');
  for (const line of lines) {
    if (line === '') break;
    const eq = line.indexOf('=');
    if (eq <= 0) return malformed('a line without key=value');
    const key = line.slice(0, eq);
    if (key.endsWith('[]')) continue;
    if (fields.has(key)) return malformed(`duplicate ${key}`);
    fields.set(key, line.slice(eq + 1));
  }
  const url = fields.get('url');
  if (url !== undefined && !fields.has('protocol')) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return malformed('bad url');
    }
    fields.set('protocol', parsed.protocol.replace(/:$/, ''));
    fields.set('host', parsed.host);
    if (parsed.pathname.length > 1) fields.set('path', decodeURIComponent(parsed.pathname.slice(1)));
    if (parsed.username !== '') fields.set('username', decodeURIComponent(parsed.username));
  }
  const protocol = fields.get('protocol');
  const host = fields.get('host');
  if (protocol === undefined || host === undefined || host === '') return malformed('protocol and host are required');
  return ok({
    protocol,
    host: host.toLowerCase(),
    path: fields.get('path')?.replace(/^\/+/, '') ?? null,
    username: fields.get('username') ?? null,
  });
}

const repositoryOf = (path: string): string => path.replace(/\.git$/, '').replace(/\/+$/, '');

/** The rule that allows this request, or why none does. */
export function matchGitCredentialRule(
  request: GitCredentialRequest,
  rules: readonly GitCredentialRule[],
): Result<GitCredentialError, GitCredentialRule> {
  const deny = (reason: string): Result<GitCredentialError, GitCredentialRule> =>
    err({ _tag: 'GitCredentialDenied', reason });
  if (request.protocol !== 'https') return deny('only https requests get a token');
  const forHost = rules.filter((rule) => rule.host.toLowerCase() === request.host);
  if (forHost.length === 0) return deny('host not in the allowlist');
  for (const rule of forHost) {
    if (rule.repositories !== null) {
      if (request.path === null) continue;
      const repository = repositoryOf(request.path);
      if (repository.split('/').some((segment) => segment === '..' || segment === '.')) continue;
      if (!rule.repositories.includes(repository)) continue;
    }
    if (request.username !== null && request.username !== rule.username) continue;
    return ok(rule);
  }
  return deny('repository or username not in the allowlist');
}

/**
 * Answers one helper invocation. Returns the text for git's stdout: the
 * username and token for an allowed `get`, and nothing for anything else
 * (git then fails without prompting when GIT_TERMINAL_PROMPT=0).
 */
export async function answerGitCredential(
  operation: string,
  input: string,
  rules: readonly GitCredentialRule[],
  resolve: ResolveSecret,
): Promise<{ readonly output: string; readonly decision: GitCredentialDecision }> {
  const decide = (request: GitCredentialRequest | null, refused: string | null): GitCredentialDecision => ({
    operation,
    protocol: request?.protocol ?? null,
    host: request?.host ?? null,
    path: request?.path ?? null,
    refused,
  });
  // store/erase: git reporting success or failure of a credential; there is nothing to keep.
  if (operation !== 'get') return { output: '', decision: decide(null, `operation ${operation} ignored`) };
  const request = parseGitCredentialRequest(input);
  if (request._tag === 'Left') return { output: '', decision: decide(null, request.left.reason) };
  const rule = matchGitCredentialRule(request.right, rules);
  if (rule._tag === 'Left') return { output: '', decision: decide(request.right, rule.left.reason) };
  const material = await resolve(rule.right.handle);
  if (material === null) return { output: '', decision: decide(request.right, 'secret unavailable') };
  try {
    const token = material.expose();
    if (/[\r\n\u0000]/.test(token) || /[\r\n\u0000]/.test(rule.right.username)) {
      return { output: '', decision: decide(request.right, 'secret unusable in the credential protocol') };
    }
    return {
      output: `protocol=https\nhost=${request.right.host}\nusername=${rule.right.username}\npassword=${token}\n`,
      decision: decide(request.right, null),
    };
  } finally {
    material.dispose();
  }
}

// ─── broker and helper script ─────────────────────────────────────────────

/**
 * The helper git runs. Plain Node, no dependencies, no secret: it sends
 * "<operation>\n<git's request>" to the socket and prints the reply.
 */
const HELPER_SOURCE = `// crustcore git credential helper (generated). Holds no secret.
import { connect } from 'node:net';
const [socketPath, operation] = process.argv.slice(2);
if (operation !== 'get') process.exit(0);
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const socket = connect(socketPath);
  const reply = [];
  socket.on('data', (c) => reply.push(c));
  socket.on('error', () => process.exit(0));
  socket.on('end', () => process.stdout.write(Buffer.concat(reply)));
  socket.end(Buffer.concat([Buffer.from(operation + '\\n'), ...chunks]));
});
`;

export interface GitCredentialBrokerOptions {
  readonly rules: readonly GitCredentialRule[];
  readonly resolve: ResolveSecret;
  /** Node binary for the helper; default the one that runs scripts (scriptNodeBinary). */
  readonly nodePath?: string;
  readonly onDecision?: (decision: GitCredentialDecision) => void;
}

export interface GitCredentialBroker {
  /** Value for `git -c credential.helper=<this>`; pass `-c credential.helper=` first to drop other helpers. */
  readonly helper: string;
  /** git config arguments that install only this helper. */
  readonly gitConfigArgs: readonly string[];
  readonly socketPath: string;
  close(): Promise<void>;
}

const shellQuote = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

export async function startGitCredentialBroker(options: GitCredentialBrokerOptions): Promise<GitCredentialBroker> {
  const directory = await mkdtemp(join(tmpdir(), 'crustcore-git-cred-'));
  const socketPath = join(directory, 'broker.sock');
  const helperPath = join(directory, 'helper.mjs');
  await writeFile(helperPath, HELPER_SOURCE, { mode: 0o500 });

  const serve = (socket: Socket): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) socket.destroy();
      else chunks.push(chunk);
    });
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const newline = text.indexOf('\n');
      const operation = newline < 0 ? text : text.slice(0, newline);
      const input = newline < 0 ? '' : text.slice(newline + 1);
      answerGitCredential(operation, input, options.rules, options.resolve).then(
        ({ output, decision }) => {
          options.onDecision?.(decision);
          socket.end(output);
        },
        () => socket.end(''),
      );
    });
  };
  // Half-open: the helper ends its side after the request; the reply still has to go back.
  const server: Server = createServer({ allowHalfOpen: true }, serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  const helper = `!${shellQuote(options.nodePath ?? scriptNodeBinary() ?? process.execPath)} ${shellQuote(helperPath)} ${shellQuote(socketPath)}`;
  return {
    helper,
    gitConfigArgs: [
      '-c',
      'credential.helper=',
      '-c',
      `credential.helper=${helper}`,
      '-c',
      'credential.useHttpPath=true',
    ],
    socketPath,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}
