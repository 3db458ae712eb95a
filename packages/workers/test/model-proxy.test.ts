/**
 * The host model proxy on its own: a worker-side Unix socket with no key,
 * the key injected on the way to a loopback "provider", only the provider's
 * API paths, budget refusals, token counting, and the key redacted out of
 * anything the provider echoes back.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redactor, SecretHandle, SecretMaterial } from '@crustcore/secrets';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { boundedModelBudget, type ModelProxy, type ModelRequestRecord, startModelProxy } from '../src/index.js';
import { TEST_API_KEY } from './worker-harness.js';

interface Seen {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let upstream: Server;
let upstreamOrigin = '';
let seen: Seen[] = [];
let scratch = '';
let proxy: ModelProxy | null = null;

beforeEach(async () => {
  seen = [];
  upstream = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.headers['x-test-echo'] === 'yes') {
        // A provider error that repeats the key it was sent.
        res.writeHead(401, { 'content-type': 'application/json', 'x-echo': String(req.headers.authorization) });
        res.end(JSON.stringify({ error: { message: `bad key ${String(req.headers.authorization)}` } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\n');
      res.end(
        'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r","usage":{"input_tokens":10,"output_tokens":5}}}\n\n',
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamOrigin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  scratch = mkdtempSync(join(tmpdir(), 'cc-model-proxy-'));
  mkdirSync(join(scratch, 'worker'));
  mkdirSync(join(scratch, 'key'));
});

afterEach(async () => {
  await proxy?.close();
  proxy = null;
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  rmSync(scratch, { recursive: true, force: true });
});

async function start(extra: { maxRequests?: number; budget?: ReturnType<typeof boundedModelBudget> } = {}) {
  const key = SecretMaterial.fromText(TEST_API_KEY);
  const handle = SecretHandle.create('test-key');
  if (key._tag === 'Left' || handle._tag === 'Left') throw new Error('setup');
  const redactor = new Redactor({ detectors: [] });
  redactor.register(handle.right, key.right);
  const records: ModelRequestRecord[] = [];
  let exhausted = 0;
  const started = await startModelProxy({
    wire: 'openai-responses',
    workerSocketPath: join(scratch, 'worker', 'model.sock'),
    keySocketPath: join(scratch, 'key', 'key.sock'),
    upstream: upstreamOrigin,
    apiKey: key.right,
    allowPaths: ['/v1/responses'],
    responseRedactor: redactor,
    maxRequests: extra.maxRequests ?? 10,
    ...(extra.budget === undefined ? {} : { budget: extra.budget }),
    onRequest: (record) => records.push(record),
    onBudgetExhausted: () => {
      exhausted += 1;
    },
  });
  if (started._tag === 'Left') throw new Error(started.left.message);
  proxy = started.right;
  return { records, exhausted: () => exhausted };
}

const REQUEST_BODY = '{"model":"m","stream":true,"max_output_tokens":5}';

function call(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  requestBody: string = REQUEST_BODY,
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: join(scratch, 'worker', 'model.sock'),
        method,
        path,
        headers: { host: '127.0.0.1:47474', 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? requestBody : undefined);
  });
}

describe('startModelProxy', () => {
  it('forwards the provider API with the real key, dropping the key the worker sent, and counts tokens', async () => {
    const { records } = await start();
    const answer = await call('POST', '/v1/responses', {
      authorization: 'Bearer crustcore-proxy-placeholder-not-a-key',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('response.completed');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${TEST_API_KEY}`);
    expect(seen[0]?.headers['accept-encoding']).toBe('identity');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ model: 'm', stream: true, max_output_tokens: 5 });
    expect(records).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/v1/responses',
        status: 200,
        refused: null,
        usage: { requests: 1, inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, costUsd: 0 },
      }),
    ]);
    expect(proxy?.usage()).toMatchObject({ requests: 1, inputTokens: 10, outputTokens: 5 });
    // Only our uid may connect.
    expect(statSync(join(scratch, 'worker', 'model.sock')).mode & 0o777).toBe(0o600);
  });

  it('refuses every other path, absolute URIs (forward proxying), odd methods and CONNECT', async () => {
    const { records } = await start();
    expect((await call('GET', '/v1/files')).status).toBe(403);
    expect((await call('POST', '/v1/responsesX')).status).toBe(403);
    expect((await call('POST', '/v1/responses/../files')).status).toBe(403);
    expect((await call('POST', '/v1%2fresponses')).status).toBe(403);
    expect((await call('POST', '/v1/responses/input_tokens')).status).toBe(403);
    expect((await call('POST', '/v1/responses?background=true')).status).toBe(403);
    expect((await call('GET', 'http://example.com/v1/responses')).status).toBe(403);
    expect((await call('DELETE', '/v1/responses')).status).toBe(405);
    const tunnel = await new Promise<number>((resolve, reject) => {
      const req = request({
        socketPath: join(scratch, 'worker', 'model.sock'),
        method: 'CONNECT',
        path: 'example.com:443',
      });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(tunnel).toBe(403);
    expect(seen).toHaveLength(0);
    expect(records.every((record) => record.refused !== null && record.usage === null)).toBe(true);
    expect(records.map((record) => record.status)).toEqual([403, 403, 403, 403, 403, 403, 403, 405, 403]);
  });

  it('refuses with 429 once the next reservation does not fit, and says so once', async () => {
    // Each request reserves ceil(49 body bytes / 3) = 17 input + 5 output tokens and is charged 10 + 5.
    const budget = boundedModelBudget({ maxTokens: 40 });
    const state = await start({ budget });
    expect((await call('POST', '/v1/responses')).status).toBe(200);
    expect((await call('POST', '/v1/responses')).status).toBe(200);
    expect((await call('POST', '/v1/responses')).status).toBe(429);
    expect((await call('POST', '/v1/responses')).status).toBe(429);
    expect(state.exhausted()).toBe(1);
    expect(budget.spent()).toMatchObject({ requests: 2, inputTokens: 20, outputTokens: 10 });
    expect(seen).toHaveLength(2);
  });

  it('a hard request cap applies even without a budget', async () => {
    await start({ maxRequests: 1 });
    expect((await call('POST', '/v1/responses')).status).toBe(200);
    expect((await call('POST', '/v1/responses')).status).toBe(429);
  });

  it('redacts the key out of what the provider echoes back, body and headers', async () => {
    await start();
    const answer = await call('POST', '/v1/responses', { 'x-test-echo': 'yes' });
    expect(answer.status).toBe(401);
    expect(answer.body).toContain('bad key Bearer');
    expect(answer.body).not.toContain(TEST_API_KEY);
    expect(answer.headers['x-echo']).toContain('Bearer');
    expect(JSON.stringify(answer.headers)).not.toContain(TEST_API_KEY);
  });
});
