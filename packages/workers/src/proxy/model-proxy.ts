/**
 * The host side of a worker's model access. Two layers, each on its own
 * Unix socket:
 *
 *   sandbox ─► bridge ─► [worker socket] meter ─► [key socket] credential proxy ─► provider
 *
 * The meter (this module) is what the sandbox can reach. It lets through only
 * the provider's API paths, asks the task budget before each request, counts
 * tokens from the usage fields of each response, and records every request.
 * It holds no key. The credential proxy from `@crustcore/secrets` listens on
 * a socket in a directory the sandbox never sees; it strips any credential
 * the client sent, injects the real key, forwards to the one allowlisted
 * origin, and redacts the key out of responses. We chain the two instead of
 * extending the credential proxy because its API has no hook into response
 * bodies (needed for token counting) or a per-request admission check
 * (needed for the budget), and keeping the key-holding layer unchanged keeps
 * the code that touches the key small.
 */
import { chmodSync, unlinkSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { err, ok, type Result } from '@crustcore/kernel';
import { type CredentialProxy, type Redactor, type SecretMaterial, startCredentialProxy } from '@crustcore/secrets';
import type { ModelBudget } from './budget.js';
import {
  addUsage,
  type ModelPricing,
  type ModelUsage,
  type ModelWire,
  type PriceForModel,
  UsageMeter,
  ZERO_USAGE,
} from './usage.js';

/** One request the worker made, as the meter saw it. Never headers or bodies. */
export interface ModelRequestRecord {
  readonly method: string;
  /** Path and query (at most 2,048 characters). */
  readonly path: string;
  /** The provider's status, or the proxy's own (403, 429, 502) when it answered itself. */
  readonly status: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
  readonly durationMs: number;
  /** Why the proxy refused or cut the request, or null when the provider answered in full. */
  readonly refused: string | null;
  /** Tokens the response reported; null when the request never reached the provider. */
  readonly usage: ModelUsage | null;
}

export interface ModelProxyOptions {
  readonly wire: ModelWire;
  /** The socket the sandbox reaches (its directory is bound into the sandbox). */
  readonly workerSocketPath: string;
  /** The key-holding proxy's socket; its directory must never be bound into a sandbox. */
  readonly keySocketPath: string;
  /** Provider origin, e.g. `https://api.openai.com` (http: only for loopback test servers). */
  readonly upstream: string;
  readonly apiKey: SecretMaterial;
  /** Path prefixes of the provider API the worker may call (`/v1/responses`). */
  readonly allowPaths: readonly string[];
  /** Redacts the key (and anything it knows) out of response bodies; must know the key. */
  readonly responseRedactor: Redactor;
  readonly budget?: ModelBudget;
  readonly pricing?: ModelPricing | PriceForModel;
  /** Hard cap on requests per run, on top of the budget. */
  readonly maxRequests: number;
  readonly onRequest?: (record: ModelRequestRecord) => void;
  /** Called once, when the first request is refused for budget. */
  readonly onBudgetExhausted?: () => void;
}

export type ModelProxyError =
  | { readonly _tag: 'ModelProxyUpstreamRefused'; readonly message: string }
  | { readonly _tag: 'ModelProxyListenFailed'; readonly message: string };

export interface ModelProxy {
  /** Every request so far (bounded by `maxRequests` plus refusals, at most 1,000 kept). */
  readonly requests: () => readonly ModelRequestRecord[];
  /** Usage summed over every answered request. */
  readonly usage: () => ModelUsage;
  readonly close: () => Promise<void>;
}

const MAX_KEPT_RECORDS = 1000;
const MAX_PATH_CHARS = 2048;
/** Hop-by-hop headers are the meter's own business on each side. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function authHeaders(wire: ModelWire, key: SecretMaterial): Readonly<Record<string, string>> {
  // The one place the worker's key leaves its box: into the upstream request headers.
  return wire === 'openai-responses' ? { authorization: `Bearer ${key.expose()}` } : { 'x-api-key': key.expose() };
}

function copyHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  }
  return out;
}

function redactHeaders(headers: OutgoingHttpHeaders, redactor: Redactor): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out[name] = redactor.redactText(value);
    else if (Array.isArray(value)) out[name] = value.map((item) => redactor.redactText(item));
    else if (value !== undefined) out[name] = value;
  }
  return out;
}

function pathAllowed(path: string, allowPaths: readonly string[]): string | null {
  // Origin-form only: an absolute URI would be a worker using us as a forward proxy to another host.
  if (!path.startsWith('/')) return 'only the provider API is reachable (absolute URI refused)';
  let pathname: string;
  try {
    pathname = new URL(path, 'http://model-proxy.invalid').pathname;
  } catch {
    return 'malformed path';
  }
  if (/%2f|%5c/i.test(pathname)) return 'encoded slash in path';
  if (!allowPaths.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`))) {
    return 'path not allowed: only the provider API is reachable';
  }
  return null;
}

/** Starts the key-holding proxy, then the meter in front of it. */
export async function startModelProxy(options: ModelProxyOptions): Promise<Result<ModelProxyError, ModelProxy>> {
  const keyProxy = await startCredentialProxy({
    listen: { socketPath: options.keySocketPath },
    upstream: options.upstream,
    injectHeaders: () => authHeaders(options.wire, options.apiKey),
    allowPaths: options.allowPaths,
    redactor: options.responseRedactor,
  });
  if (keyProxy._tag === 'Left') {
    const problem = keyProxy.left;
    return problem._tag === 'UpstreamNotAllowed'
      ? err({ _tag: 'ModelProxyUpstreamRefused', message: `upstream ${options.upstream}: ${problem.reason}` })
      : err({ _tag: 'ModelProxyListenFailed', message: `credential proxy: ${problem.code ?? 'listen failed'}` });
  }
  const meter = await startMeter(options, keyProxy.right);
  if (meter._tag === 'Left') await keyProxy.right.close();
  return meter;
}

async function startMeter(
  options: ModelProxyOptions,
  keyProxy: CredentialProxy,
): Promise<Result<ModelProxyError, ModelProxy>> {
  const records: ModelRequestRecord[] = [];
  let total = ZERO_USAGE;
  let started = 0;
  let exhausted = false;

  const record = (entry: ModelRequestRecord): void => {
    if (records.length < MAX_KEPT_RECORDS) records.push(entry);
    try {
      options.onRequest?.(entry);
    } catch {
      // A failing observer must not break the worker's model access.
    }
  };

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const startedAt = performance.now();
    const method = request.method ?? 'GET';
    const path = (request.url ?? '').slice(0, MAX_PATH_CHARS);
    let requestBytes = 0;
    let responseBytes = 0;
    let done = false;
    const finish = (status: number, refused: string | null, usage: ModelUsage | null): void => {
      if (done) return;
      done = true;
      record({
        method,
        path,
        status,
        requestBytes,
        responseBytes,
        durationMs: performance.now() - startedAt,
        refused,
        usage,
      });
    };
    const refuse = (status: number, reason: string): void => {
      finish(status, reason, null);
      if (!response.headersSent) {
        response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      }
      response.end(`crustcore model proxy: ${reason}\n`);
      request.resume();
    };

    const notAllowed = pathAllowed(path, options.allowPaths);
    if (notAllowed !== null) {
      refuse(403, notAllowed);
      return;
    }
    if (method !== 'POST' && method !== 'GET') {
      refuse(405, `method ${method} not allowed`);
      return;
    }
    const overBudget = started >= options.maxRequests || (options.budget !== undefined && !options.budget.mayRequest());
    if (overBudget) {
      if (!exhausted) {
        exhausted = true;
        options.onBudgetExhausted?.();
      }
      refuse(429, 'model budget exhausted');
      return;
    }
    started += 1;

    const headers = copyHeaders(request.headers);
    // The key proxy only answers requests addressed to itself; token counting needs uncompressed bodies.
    headers.host = 'localhost';
    headers['accept-encoding'] = 'identity';
    const outgoing = httpRequest({ socketPath: keyProxy.socketPath ?? '', method, path, headers });
    let meter: UsageMeter | null = null;
    let status = 502;
    const settle = (refused: string | null): void => {
      const usage = meter === null ? null : meter.finish(options.pricing);
      if (usage !== null) {
        total = addUsage(total, usage);
        options.budget?.charge(usage);
      }
      finish(status, refused, usage);
    };
    outgoing.on('response', (upstream) => {
      status = upstream.statusCode ?? 502;
      meter = new UsageMeter(options.wire, String(upstream.headers['content-type'] ?? ''));
      const counting = meter;
      // The credential proxy redacts bodies; a provider could also echo the key in a header.
      response.writeHead(status, redactHeaders(copyHeaders(upstream.headers), options.responseRedactor));
      response.flushHeaders();
      upstream.on('data', (chunk: Buffer) => {
        responseBytes += chunk.length;
        counting.push(chunk);
      });
      upstream.on('end', () => settle(null));
      upstream.on('error', () => response.destroy());
      upstream.pipe(response);
    });
    outgoing.on('error', () => {
      if (done) return;
      if (response.headersSent) {
        response.destroy();
        settle('upstream connection failed');
        return;
      }
      refuse(502, 'upstream unreachable');
    });
    response.on('close', () => {
      if (!outgoing.destroyed) outgoing.destroy();
      if (!done) settle('worker went away');
    });
    request.on('data', (chunk: Buffer) => {
      requestBytes += chunk.length;
    });
    request.pipe(outgoing);
  };

  const server: Server = createServer(handle);
  server.on('clientError', (_error, socket) => socket.destroy());
  // Tunnels and protocol switches would carry traffic the meter cannot see.
  server.on('connect', (request: IncomingMessage, socket) => {
    record({
      method: 'CONNECT',
      path: (request.url ?? '').slice(0, MAX_PATH_CHARS),
      status: 403,
      requestBytes: 0,
      responseBytes: 0,
      durationMs: 0,
      refused: 'CONNECT is not allowed',
      usage: null,
    });
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  server.on('upgrade', (_request: IncomingMessage, socket) => {
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.workerSocketPath, resolve);
    });
    // The sandbox runs as our uid; nobody else on the host needs this socket.
    chmodSync(options.workerSocketPath, 0o600);
  } catch (error) {
    server.close();
    return err({ _tag: 'ModelProxyListenFailed', message: `model socket: ${(error as Error).message}` });
  }
  let closed = false;
  return ok({
    requests: () => [...records],
    usage: () => total,
    close: async () => {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      try {
        unlinkSync(options.workerSocketPath);
      } catch {
        // Already gone.
      }
      await keyProxy.close();
    },
  });
}
