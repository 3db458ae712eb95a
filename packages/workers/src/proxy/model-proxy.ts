/**
 * The host side of a worker's model access. Two layers, each on its own
 * Unix socket:
 *
 *   sandbox ─► bridge ─► [worker socket] meter ─► [key socket] credential proxy ─► provider
 *
 * The meter (this module) is what the sandbox can reach. It lets through only
 * the wire's one exact endpoint and request shape, reserves each request's
 * worst case against the budget before forwarding it, settles to what the
 * response actually cost (also when it is cut), and records every request
 * (`exchange.ts` does one request). It holds no key. The credential proxy from `@crustcore/secrets` listens on
 * a socket in a directory the sandbox never sees; it strips any credential
 * the client sent, injects the real key, forwards to the one allowlisted
 * origin, and redacts the key out of responses. We chain the two instead of
 * extending the credential proxy because its API has no hook into response
 * bodies (needed for token counting) or a per-request admission check
 * (needed for the budget), and keeping the key-holding layer unchanged keeps
 * the code that touches the key small.
 */
import { chmodSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { err, ok, type Result } from '@crustcore/kernel';
import { type CredentialProxy, type Redactor, type SecretMaterial, startCredentialProxy } from '@crustcore/secrets';
import { CLAUDE_OAUTH_BETA } from '../cli/claude-sign-in.js';
import type { ModelBudget } from './budget.js';
import { type MeterContext, type ModelRequestRecord, serveExchange } from './exchange.js';
import type { RequestPolicy } from './request-policy.js';
import { ReservationPool } from './reservation.js';
import {
  addUsage,
  type ModelPricing,
  type ModelUsage,
  type ModelWire,
  type PriceForModel,
  ZERO_USAGE,
} from './usage.js';

export type { ModelRequestRecord } from './exchange.js';

export interface ModelProxyOptions {
  readonly wire: ModelWire;
  /** The socket the sandbox reaches (its directory is bound into the sandbox). */
  readonly workerSocketPath: string;
  /** The key-holding proxy's socket; its directory must never be bound into a sandbox. */
  readonly keySocketPath: string;
  /** Provider origin, e.g. `https://api.openai.com` (http: only for loopback test servers). */
  readonly upstream: string;
  readonly apiKey: SecretMaterial;
  /** What `apiKey` is: a provider API key (default) or a Claude Code subscription token. */
  readonly credential?: ModelCredentialKind;
  /**
   * Path prefixes the key-holding layer forwards (`/v1/responses`): a second
   * fence. The meter itself lets through only the wire's exact endpoint.
   */
  readonly allowPaths: readonly string[];
  /** Redacts the key (and anything it knows) out of response bodies; must know the key. */
  readonly responseRedactor: Redactor;
  /** Reserved against before each request (its `remaining`), charged after. */
  readonly budget?: ModelBudget;
  /**
   * Prices. One `ModelPricing`: every model costs that. A lookup (`priceTable`):
   * a requested model it does not know is refused, and an answer naming a model
   * it does not know is charged at the table's highest price.
   */
  readonly pricing?: ModelPricing | PriceForModel;
  /** Request-shape settings (output caps, background, store); strict by default. */
  readonly policy?: RequestPolicy;
  /** Hard cap on requests per run, on top of the budget. */
  readonly maxRequests: number;
  readonly onRequest?: (record: ModelRequestRecord) => void;
  /** Called once, when the first request is refused because its reservation cannot fit the budget. */
  readonly onBudgetExhausted?: () => void;
}

/** A provider API key, or the access token of the user's Claude Code sign-in (claude-sign-in.ts). */
export type ModelCredentialKind = 'api-key' | 'claude-subscription';

export type ModelProxyError =
  | { readonly _tag: 'ModelProxyUpstreamRefused'; readonly message: string }
  | { readonly _tag: 'ModelProxyListenFailed'; readonly message: string };

export interface ModelProxy {
  /** Every request so far (bounded by `maxRequests` plus refusals, at most 1,000 kept). */
  readonly requests: () => readonly ModelRequestRecord[];
  /** Usage charged, summed over every forwarded request. */
  readonly usage: () => ModelUsage;
  /** Requests holding a reservation right now. */
  readonly inFlight: () => number;
  readonly close: () => Promise<void>;
}

const MAX_KEPT_RECORDS = 1000;
const MAX_PATH_CHARS = 2048;

function authHeaders(
  wire: ModelWire,
  key: SecretMaterial,
  credential: ModelCredentialKind,
): Readonly<Record<string, string>> {
  // The one place the worker's key leaves its box: into the upstream request headers.
  if (wire === 'openai-responses') return { authorization: `Bearer ${key.expose()}` };
  // A Claude subscription token is a bearer token, and the API wants the OAuth beta beside the client's.
  if (credential === 'claude-subscription')
    return { authorization: `Bearer ${key.expose()}`, 'anthropic-beta': CLAUDE_OAUTH_BETA };
  return { 'x-api-key': key.expose() };
}

/** Starts the key-holding proxy, then the meter in front of it. */
export async function startModelProxy(options: ModelProxyOptions): Promise<Result<ModelProxyError, ModelProxy>> {
  const keyProxy = await startCredentialProxy({
    listen: { socketPath: options.keySocketPath },
    upstream: options.upstream,
    injectHeaders: () => authHeaders(options.wire, options.apiKey, options.credential ?? 'api-key'),
    mergeHeaders: ['anthropic-beta'],
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
  let exhausted = false;
  const record = (entry: ModelRequestRecord): void => {
    if (records.length < MAX_KEPT_RECORDS) records.push(entry);
    try {
      options.onRequest?.(entry);
    } catch {
      // A failing observer must not break the worker's model access.
    }
  };
  const context: MeterContext = {
    wire: options.wire,
    keySocketPath: keyProxy.socketPath ?? '',
    pricing: options.pricing,
    policy: options.policy ?? {},
    redactor: options.responseRedactor,
    pool: new ReservationPool(options.budget, options.maxRequests),
    record,
    charged: (usage) => {
      total = addUsage(total, usage);
    },
    exhausted: () => {
      if (exhausted) return;
      exhausted = true;
      options.onBudgetExhausted?.();
    },
  };
  const server: Server = createServer((request, response) => {
    void serveExchange(context, request, response);
  });
  refuseTunnels(server, record);
  const listening = await listen(server, options.workerSocketPath);
  if (listening !== null) return err(listening);
  let closed = false;
  return ok({
    requests: () => [...records],
    usage: () => total,
    inFlight: () => context.pool.inFlight,
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

/** Tunnels and protocol switches would carry traffic the meter cannot see. */
function refuseTunnels(server: Server, record: (entry: ModelRequestRecord) => void): void {
  server.on('clientError', (_error, socket) => socket.destroy());
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
}

async function listen(server: Server, socketPath: string): Promise<ModelProxyError | null> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, resolve);
    });
    // The sandbox runs as our uid; nobody else on the host needs this socket.
    chmodSync(socketPath, 0o600);
    return null;
  } catch (error) {
    server.close();
    return { _tag: 'ModelProxyListenFailed', message: `model socket: ${(error as Error).message}` };
  }
}
