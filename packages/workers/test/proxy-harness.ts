/**
 * The real model proxy (meter + credential proxy) on Unix sockets in a
 * scratch directory, and a raw HTTP client that talks to it the way a
 * hostile worker would: any method, path and body, and free to hang up in
 * the middle of an answer. Also the CONTROL: the credential proxy alone
 * with the old prefix allowlist — a key-injecting pass-through with no meter.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redactor, SecretHandle, SecretMaterial, startCredentialProxy } from '@crustcore/secrets';
import {
  type ModelBudget,
  type ModelPricing,
  type ModelProxy,
  type ModelRequestRecord,
  type ModelWire,
  type PriceForModel,
  type RequestPolicy,
  startModelProxy,
} from '../src/index.js';
import { TEST_API_KEY } from './worker-harness.js';

export interface TestProxy {
  readonly socketPath: string;
  readonly proxy: ModelProxy;
  readonly records: ModelRequestRecord[];
  /** Resolves once `count` requests have been recorded (refused or settled). */
  readonly recorded: (count: number) => Promise<void>;
  readonly exhaustedCalls: () => number;
  readonly close: () => Promise<void>;
}

export interface TestProxyOptions {
  readonly wire: ModelWire;
  readonly upstream: string;
  readonly budget?: ModelBudget;
  readonly pricing?: ModelPricing | PriceForModel;
  readonly policy?: RequestPolicy;
  readonly maxRequests?: number;
}

function keyAndRedactor(): { key: SecretMaterial; redactor: Redactor } {
  const key = SecretMaterial.fromText(TEST_API_KEY);
  const handle = SecretHandle.create('test-key');
  if (key._tag === 'Left' || handle._tag === 'Left') throw new Error('test key setup');
  const redactor = new Redactor({ detectors: [] });
  redactor.register(handle.right, key.right);
  return { key: key.right, redactor };
}

export const ENDPOINT: Readonly<Record<ModelWire, string>> = {
  'openai-responses': '/v1/responses',
  'anthropic-messages': '/v1/messages?beta=true',
};

export async function startTestProxy(options: TestProxyOptions): Promise<TestProxy> {
  const scratch = mkdtempSync(join(tmpdir(), 'cc-budget-proxy-'));
  mkdirSync(join(scratch, 'worker'));
  mkdirSync(join(scratch, 'key'));
  const { key, redactor } = keyAndRedactor();
  const records: ModelRequestRecord[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let exhausted = 0;
  const socketPath = join(scratch, 'worker', 'model.sock');
  const started = await startModelProxy({
    wire: options.wire,
    workerSocketPath: socketPath,
    keySocketPath: join(scratch, 'key', 'key.sock'),
    upstream: options.upstream,
    apiKey: key,
    allowPaths: [options.wire === 'openai-responses' ? '/v1/responses' : '/v1/messages'],
    responseRedactor: redactor,
    maxRequests: options.maxRequests ?? 1000,
    ...(options.budget === undefined ? {} : { budget: options.budget }),
    ...(options.pricing === undefined ? {} : { pricing: options.pricing }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
    onRequest: (record) => {
      records.push(record);
      for (const waiter of waiters.splice(0)) {
        if (records.length >= waiter.count) waiter.resolve();
        else waiters.push(waiter);
      }
    },
    onBudgetExhausted: () => {
      exhausted += 1;
    },
  });
  if (started._tag === 'Left') throw new Error(started.left.message);
  return {
    socketPath,
    proxy: started.right,
    records,
    recorded: (count) =>
      records.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    exhaustedCalls: () => exhausted,
    close: async () => {
      await started.right.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** CONTROL: the key-holding layer alone, with the prefix allowlist the meter used to apply. */
export async function startBarePassThrough(
  wire: ModelWire,
  upstream: string,
): Promise<{ socketPath: string; close: () => Promise<void> }> {
  const scratch = mkdtempSync(join(tmpdir(), 'cc-bare-proxy-'));
  const { key, redactor } = keyAndRedactor();
  const socketPath = join(scratch, 'bare.sock');
  const started = await startCredentialProxy({
    listen: { socketPath },
    upstream,
    injectHeaders: () =>
      wire === 'openai-responses' ? { authorization: `Bearer ${key.expose()}` } : { 'x-api-key': key.expose() },
    allowPaths: [wire === 'openai-responses' ? '/v1/responses' : '/v1/messages'],
    redactor,
  });
  if (started._tag === 'Left') throw new Error(started.left._tag);
  return {
    socketPath,
    close: async () => {
      await started.right.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

export interface ClientAnswer {
  readonly status: number;
  readonly body: string;
  /** The client hung up (by `hangUpWhen`) before the answer ended. */
  readonly hungUp: boolean;
}

export interface ClientOptions {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Hang up as soon as this says so about the text received so far. */
  readonly hangUpWhen?: (received: string) => boolean;
  /** Sees the text received so far after each chunk. */
  readonly onText?: (received: string) => void;
}

/** One raw request over the socket, as a worker inside the sandbox could send it. */
export function send(
  socketPath: string,
  path: string,
  body: string,
  options: ClientOptions = {},
): Promise<ClientAnswer> {
  return new Promise((resolve, reject) => {
    const method = options.method ?? 'POST';
    const outgoing = request(
      {
        socketPath,
        method,
        path,
        headers: { host: '127.0.0.1:47474', 'content-type': 'application/json', ...options.headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          options.onText?.(text);
          if (options.hangUpWhen?.(text) === true) {
            response.destroy();
            resolve({ status: response.statusCode ?? 0, body: text, hungUp: true });
          }
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text, hungUp: false }));
        // Cut from the other side: whatever arrived is the answer (the first resolve wins).
        response.on('error', () => resolve({ status: response.statusCode ?? 0, body: text, hungUp: true }));
        response.on('close', () => resolve({ status: response.statusCode ?? 0, body: text, hungUp: true }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(method === 'GET' || method === 'HEAD' ? undefined : body);
  });
}

/**
 * Counts `needle` in a growing text, scanning only what is new since the last
 * call (a hang-up predicate runs after every chunk of a 300 KB answer).
 */
export function growingCount(needle: string): (text: string) => number {
  let scanned = 0;
  let count = 0;
  return (text) => {
    let at = text.indexOf(needle, scanned);
    while (at >= 0) {
      count += 1;
      at = text.indexOf(needle, at + needle.length);
    }
    scanned = Math.max(scanned, text.length - needle.length + 1);
    return count;
  };
}

/** Occurrences of `needle` in `text`. */
export const occurrences = (text: string, needle: string): number => text.split(needle).length - 1;
