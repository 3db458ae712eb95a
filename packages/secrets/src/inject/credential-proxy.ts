/**
 * The preferred way to give a tool an API: a local HTTP proxy that holds the
 * key. The tool talks plain HTTP to a Unix socket (or 127.0.0.1) with no key
 * at all; the proxy forwards to one allowlisted upstream origin only, strips
 * whatever credentials the client sent, adds the real ones, and streams the
 * response back (server-sent events pass through as they arrive). It records
 * method, path, status and byte counts for each request — never headers, so
 * never the key.
 */
import type { Buffer } from 'node:buffer';
import { chmod, unlink } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { err, ok, type Result } from '@crustcore/kernel';
import type { Redactor } from '../redact/redactor.js';
import { RedactingStream } from '../redact/stream.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface ProxyRequestInfo {
  readonly method: string;
  /** Path and query as forwarded upstream. */
  readonly path: string;
}

export interface ProxyRequestRecord extends ProxyRequestInfo {
  /** Upstream status, or the proxy's own (403, 413, 502, 504) when it answered itself. */
  readonly status: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
  readonly durationMs: number;
  /** Why the proxy answered itself, or null when the upstream did. */
  readonly refused: string | null;
}

export type ProxyListen = { readonly socketPath: string } | { readonly host: '127.0.0.1'; readonly port?: number };

export interface CredentialProxyOptions {
  readonly listen: ProxyListen;
  /** Origin the proxy forwards to, e.g. 'https://api.openai.com'. http: only for loopback upstreams (tests). */
  readonly upstream: string;
  /** Headers carrying the credential, computed per request (read the key at request time). */
  readonly injectHeaders: (request: ProxyRequestInfo) => Readonly<Record<string, string>>;
  /** Path prefixes allowed (e.g. ['/v1/']); default: every path. */
  readonly allowPaths?: readonly string[];
  /**
   * Injected headers that add to the client's value of the same header instead of replacing it
   * (comma-separated lists such as `anthropic-beta`: a subscription token needs one more flag
   * beside the ones the client asked for). Never a credential header: those are always replaced.
   */
  readonly mergeHeaders?: readonly string[];
  readonly onRequest?: (record: ProxyRequestRecord) => void;
  /** Redacts response bodies (the upstream could echo the key); forces identity encoding. */
  readonly redactor?: Redactor;
  /** Default 32 MiB. */
  readonly maxRequestBytes?: number;
  /** Time allowed for the upstream to start answering; default 120 s. */
  readonly upstreamTimeoutMs?: number;
  /** Concurrent requests; default 64. */
  readonly maxConcurrent?: number;
}

export type CredentialProxyError =
  | { readonly _tag: 'UpstreamNotAllowed'; readonly reason: string }
  | { readonly _tag: 'ProxyListenFailed'; readonly code: string | null };

export interface CredentialProxy {
  /** For clients: `http://127.0.0.1:PORT` (TCP) or `http://localhost` (with the socket path). */
  readonly baseUrl: string;
  readonly socketPath: string | null;
  readonly port: number | null;
  close(): Promise<void>;
}

/** Headers a client might use to carry its own credential; all are dropped. */
const CLIENT_CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
]);
/** Hop-by-hop headers (RFC 9110 §7.6.1) are never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

// ─── request checks ───────────────────────────────────────────────────────

export function parseUpstream(upstream: string): Result<CredentialProxyError, URL> {
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    return err({ _tag: 'UpstreamNotAllowed', reason: 'not a URL' });
  }
  if (url.username !== '' || url.password !== '') {
    return err({ _tag: 'UpstreamNotAllowed', reason: 'credentials in the upstream URL' });
  }
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    return err({ _tag: 'UpstreamNotAllowed', reason: 'the upstream must be an origin (no path)' });
  }
  if (url.protocol === 'https:') return ok(url);
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return ok(url);
  return err({ _tag: 'UpstreamNotAllowed', reason: 'https only (plain http is allowed for loopback upstreams)' });
}

interface Target {
  readonly path: string;
}

/** Decides where a request goes, or why it is refused. */
function routeRequest(
  request: IncomingMessage,
  upstream: URL,
  ownHosts: ReadonlySet<string>,
  allowPaths: readonly string[] | null,
): Result<string, Target> {
  const method = request.method ?? '';
  if (method === 'CONNECT') return err('CONNECT is not allowed');
  const rawTarget = request.url ?? '';
  let path: string;
  if (rawTarget.startsWith('/')) {
    path = rawTarget;
  } else {
    // Absolute-form (a client using us as a forward proxy): only the upstream origin itself.
    let absolute: URL;
    try {
      absolute = new URL(rawTarget);
    } catch {
      return err('malformed request target');
    }
    if (absolute.origin !== upstream.origin) return err('absolute URI for another origin');
    path = `${absolute.pathname}${absolute.search}`;
  }
  const host = (request.headers.host ?? '').toLowerCase();
  if (host !== '' && host !== upstream.host && !ownHosts.has(host)) return err('Host is not the upstream');
  // A path that normalizes differently (dot segments, encoded slashes) could dodge the prefix check.
  const normalized = new URL(path, upstream.origin);
  if (normalized.origin !== upstream.origin) return err('path escapes the upstream origin');
  const forwarded = `${normalized.pathname}${normalized.search}`;
  if (/%2f|%5c/i.test(normalized.pathname)) return err('encoded slash in path');
  if (allowPaths !== null && !allowPaths.some((prefix) => normalized.pathname.startsWith(prefix))) {
    return err('path not allowed');
  }
  return ok({ path: forwarded });
}

/** Which injected headers add to the client's list: never a credential header (those are replaced). */
function mergeableHeaders(names: readonly string[] | undefined): ReadonlySet<string> {
  return new Set(
    (names ?? []).map((name) => name.toLowerCase()).filter((name) => !CLIENT_CREDENTIAL_HEADERS.has(name)),
  );
}

/** Sets the injected headers on `headers`; false when a value would split the header. */
function addInjected(
  headers: OutgoingHttpHeaders,
  injected: Readonly<Record<string, string>>,
  merges: ReadonlySet<string>,
): boolean {
  for (const [name, value] of Object.entries(injected)) {
    if (/[\r\n]/.test(value)) return false;
    const lower = name.toLowerCase();
    headers[lower] = merges.has(lower) ? mergedList(headers[lower], value) : value;
  }
  return true;
}

/** A comma-separated header list with `added` appended, each entry once. */
function mergedList(current: OutgoingHttpHeaders[string], added: string): string {
  const entries = [current, added]
    .flatMap((value) => (Array.isArray(value) ? value : value === undefined ? [] : [String(value)]))
    .flatMap((value) => value.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return [...new Set(entries)].join(',');
}

function forwardHeaders(headers: IncomingHttpHeaders, upstream: URL): OutgoingHttpHeaders {
  const connectionListed = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ''),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || connectionListed.has(lower)) continue;
    if (CLIENT_CREDENTIAL_HEADERS.has(lower)) continue;
    out[lower] = value;
  }
  out.host = upstream.host;
  return out;
}

function responseHeaders(headers: IncomingHttpHeaders, redacting: boolean): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || (HOP_BY_HOP.has(lower) && lower !== 'content-length')) continue;
    if (redacting && lower === 'content-length') continue;
    // Upstream cookies are session credentials of the proxy's identity, not the client's.
    if (lower === 'set-cookie') continue;
    out[lower] = value;
  }
  return out;
}

// ─── the proxy ────────────────────────────────────────────────────────────

export async function startCredentialProxy(
  options: CredentialProxyOptions,
): Promise<Result<CredentialProxyError, CredentialProxy>> {
  const upstreamParsed = parseUpstream(options.upstream);
  if (upstreamParsed._tag === 'Left') return upstreamParsed;
  const upstream = upstreamParsed.right;
  const maxRequestBytes = options.maxRequestBytes ?? 32 * 1024 * 1024;
  const upstreamTimeoutMs = options.upstreamTimeoutMs ?? 120_000;
  const maxConcurrent = options.maxConcurrent ?? 64;
  const allowPaths = options.allowPaths ?? null;
  const merges = mergeableHeaders(options.mergeHeaders);
  const ownHosts = new Set<string>(['localhost']);
  const sendUpstream = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  let active = 0;

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const startedAt = performance.now();
    const method = request.method ?? 'GET';
    let requestBytes = 0;
    let responseBytes = 0;
    let recorded = false;
    const record = (path: string, status: number, refused: string | null): void => {
      if (recorded) return;
      recorded = true;
      options.onRequest?.({
        method,
        path,
        status,
        requestBytes,
        responseBytes,
        durationMs: performance.now() - startedAt,
        refused,
      });
    };
    let answered = false;
    const refuse = (status: number, reason: string, path: string): void => {
      answered = true;
      record(path, status, reason);
      if (!response.headersSent) {
        response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      }
      response.end(`crustcore credential proxy: ${reason}\n`);
      request.resume();
    };
    const shownPath = (request.url ?? '').slice(0, 2048);
    if (active >= maxConcurrent) {
      refuse(503, 'too many concurrent requests', shownPath);
      return;
    }
    const route = routeRequest(request, upstream, ownHosts, allowPaths);
    if (route._tag === 'Left') {
      refuse(403, route.left, shownPath);
      return;
    }
    const { path } = route.right;
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > maxRequestBytes) {
      refuse(413, 'request body too large', path);
      return;
    }

    let injected: Readonly<Record<string, string>>;
    try {
      injected = options.injectHeaders({ method, path });
    } catch {
      refuse(502, 'credential unavailable', path);
      return;
    }
    const headers = forwardHeaders(request.headers, upstream);
    if (!addInjected(headers, injected, merges)) {
      refuse(502, 'credential unusable', path);
      return;
    }
    if (options.redactor !== undefined) headers['accept-encoding'] = 'identity';

    active++;
    let status = 502;
    const outgoing = sendUpstream({
      protocol: upstream.protocol,
      hostname: upstream.hostname.replace(/^\[|\]$/g, ''),
      port: upstream.port === '' ? undefined : Number(upstream.port),
      method,
      path,
      headers,
      timeout: upstreamTimeoutMs,
    });
    response.on('close', () => {
      active--;
      if (!outgoing.destroyed) outgoing.destroy();
      record(path, status, response.writableFinished ? null : 'client went away');
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('upstream timeout')));
    outgoing.on('error', (error) => {
      if (answered || response.destroyed) return;
      if (response.headersSent) {
        response.destroy();
        return;
      }
      const timedOut = error.message === 'upstream timeout';
      refuse(timedOut ? 504 : 502, timedOut ? 'upstream timed out' : 'upstream unreachable', path);
    });
    outgoing.on('response', (upstreamResponse) => {
      status = upstreamResponse.statusCode ?? 502;
      response.writeHead(status, responseHeaders(upstreamResponse.headers, options.redactor !== undefined));
      response.flushHeaders();
      upstreamResponse.on('data', (chunk: Buffer) => {
        responseBytes += chunk.length;
      });
      // An upstream that dies mid-answer must not leave the client waiting: pipe() does not pass a cut on.
      const cut = (): void => {
        response.destroy();
      };
      upstreamResponse.on('aborted', cut);
      upstreamResponse.on('error', cut);
      const body =
        options.redactor === undefined
          ? upstreamResponse
          : upstreamResponse.pipe(new RedactingStream(options.redactor, { batchChars: 1 }));
      body.pipe(response);
    });

    request.on('data', (chunk: Buffer) => {
      requestBytes += chunk.length;
      if (requestBytes > maxRequestBytes && !response.headersSent) {
        outgoing.destroy();
        refuse(413, 'request body too large', path);
      }
    });
    request.pipe(outgoing);
  };

  const server: Server = createServer(handle);
  server.on('clientError', (_error, socket) => socket.destroy());
  // Node routes CONNECT (tunnel requests) here, not to the request handler: refuse them explicitly.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    options.onRequest?.({
      method: 'CONNECT',
      path: (request.url ?? '').slice(0, 2048),
      status: 403,
      requestBytes: 0,
      responseBytes: 0,
      durationMs: 0,
      refused: 'CONNECT is not allowed',
    });
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  server.on('upgrade', (_request: IncomingMessage, socket: Duplex) => {
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      if ('socketPath' in options.listen) server.listen(options.listen.socketPath, resolve);
      else server.listen(options.listen.port ?? 0, '127.0.0.1', resolve);
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return err({ _tag: 'ProxyListenFailed', code: typeof code === 'string' ? code : null });
  }
  let socketPath: string | null = null;
  let port: number | null = null;
  if ('socketPath' in options.listen) {
    socketPath = options.listen.socketPath;
    // Only our uid may connect: the socket is the key, in effect.
    await chmod(socketPath, 0o600);
  } else {
    port = (server.address() as AddressInfo).port;
    ownHosts.add(`127.0.0.1:${port}`);
    ownHosts.add(`localhost:${port}`);
  }
  return ok({
    baseUrl: port === null ? 'http://localhost' : `http://127.0.0.1:${port}`,
    socketPath,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        if (socketPath !== null) unlink(socketPath).catch(() => undefined);
      }),
  });
}
