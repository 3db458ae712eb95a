import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CredentialProxy, type ProxyRequestRecord, startCredentialProxy } from '../src/index.js';
import { materialOf, redactorWith } from './helpers.js';

const KEY = 'sk-real-upstream-key-0123456789abcdef';
const material = materialOf(KEY);

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let upstream: Server;
let upstreamOrigin: string;
const seen: Seen[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crustcore-proxy-'));
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.url === '/v1/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'set-cookie': 'upstream=session' });
        let n = 0;
        const timer = setInterval(() => {
          n++;
          res.write(`data: {"n":${n},"at":${Date.now()}}\n\n`);
          if (n === 3) {
            clearInterval(timer);
            res.end('data: [DONE]\n\n');
          }
        }, 150);
        return;
      }
      if (req.url === '/v1/echo-auth') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `Incorrect API key provided: ${req.headers.authorization}` }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, path: req.url }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamOrigin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

async function startProxy(
  records: ProxyRequestRecord[],
  extra: Partial<Parameters<typeof startCredentialProxy>[0]> = {},
) {
  const started = await startCredentialProxy({
    listen: { host: '127.0.0.1' },
    upstream: upstreamOrigin,
    injectHeaders: () => ({ authorization: `Bearer ${material.expose()}` }),
    allowPaths: ['/v1/'],
    onRequest: (record) => records.push(record),
    ...extra,
  });
  if (started._tag === 'Left') throw new Error(started.left._tag);
  return started.right;
}

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly firstChunkAt: number;
}

function send(
  proxy: CredentialProxy,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const target =
      proxy.socketPath === null ? { host: '127.0.0.1', port: proxy.port! } : { socketPath: proxy.socketPath };
    const req = request({ ...target, path, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      let firstChunkAt = 0;
      res.on('data', (c: Buffer) => {
        if (firstChunkAt === 0) firstChunkAt = Date.now();
        body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, firstChunkAt }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Sends raw bytes (for request forms http.request will not produce) and returns the status line. */
function sendRaw(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let reply = '';
    socket.on('data', (c: Buffer) => {
      reply += c.toString();
    });
    socket.on('end', () => resolve(reply.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

describe('credential proxy', () => {
  it('replaces client credentials with the real key and forwards only to the upstream', async () => {
    const records: ProxyRequestRecord[] = [];
    const proxy = await startProxy(records);
    seen.length = 0;
    const reply = await send(proxy, '/v1/chat?x=1', {
      method: 'POST',
      headers: {
        authorization: 'Bearer sandbox-fake-key',
        'x-api-key': 'sandbox-other-key',
        cookie: 'a=b',
        'content-type': 'application/json',
      },
      body: '{"q":"hello"}',
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ ok: true, path: '/v1/chat?x=1' });
    expect(seen).toHaveLength(1);
    const forwarded = seen[0]!;
    expect(forwarded.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(forwarded.headers['x-api-key']).toBeUndefined();
    expect(forwarded.headers.cookie).toBeUndefined();
    expect(forwarded.headers.host).toBe(new URL(upstreamOrigin).host);
    expect(forwarded.body).toBe('{"q":"hello"}');
    expect(records).toEqual([
      expect.objectContaining({ method: 'POST', path: '/v1/chat?x=1', status: 200, requestBytes: 13, refused: null }),
    ]);
    expect(records[0]!.responseBytes).toBe(Buffer.byteLength(reply.body));
    expect(JSON.stringify(records)).not.toContain(KEY);
    await proxy.close();
  });

  it('adds a merged header to the list the client sent, once; never merges a credential header', async () => {
    const records: ProxyRequestRecord[] = [];
    const proxy = await startProxy(records, {
      injectHeaders: () => ({ authorization: `Bearer ${material.expose()}`, 'anthropic-beta': 'oauth-2025-04-20' }),
      mergeHeaders: ['anthropic-beta', 'authorization'],
    });
    const forwardedWith = async (headers: Record<string, string>): Promise<IncomingHttpHeaders> => {
      seen.length = 0;
      const reply = await send(proxy, '/v1/messages', { method: 'POST', headers, body: '{}' });
      expect(reply.status).toBe(200);
      return seen[0]!.headers;
    };
    const merged = await forwardedWith({
      authorization: 'Bearer sandbox-fake-key',
      'anthropic-beta': 'claude-code-20250219, oauth-2025-04-20,fine-grained-tool-streaming-2025-05-14',
    });
    expect(merged['anthropic-beta']).toBe(
      'claude-code-20250219,oauth-2025-04-20,fine-grained-tool-streaming-2025-05-14',
    );
    // A credential header is replaced even when listed for merging: the client's never survives.
    expect(merged.authorization).toBe(`Bearer ${KEY}`);
    const alone = await forwardedWith({});
    expect(alone['anthropic-beta']).toBe('oauth-2025-04-20');
    await proxy.close();
  });

  it('refuses other hosts, other origins, paths outside the allowlist, CONNECT and traversal with 403', async () => {
    const records: ProxyRequestRecord[] = [];
    const proxy = await startProxy(records);
    seen.length = 0;
    const port = proxy.port!;
    expect(await sendRaw(port, 'GET /v1/x HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n')).toBe(
      'HTTP/1.1 403 Forbidden',
    );
    expect(
      await sendRaw(port, 'GET http://evil.example/v1/x HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'),
    ).toBe('HTTP/1.1 403 Forbidden');
    expect(
      await sendRaw(
        port,
        `GET ${upstreamOrigin}/v1/ok HTTP/1.1\r\nHost: ${new URL(upstreamOrigin).host}\r\nConnection: close\r\n\r\n`,
      ),
    ).toBe('HTTP/1.1 200 OK');
    expect(await sendRaw(port, 'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n')).toBe(
      'HTTP/1.1 403 Forbidden',
    );
    expect((await send(proxy, '/admin')).status).toBe(403);
    expect((await send(proxy, '/v1/../admin')).status).toBe(403);
    expect((await send(proxy, '/v1/%2e%2e/admin')).status).toBe(403);
    expect((await send(proxy, '/v1%2f..%2fadmin')).status).toBe(403);
    expect(seen.map((s) => s.url)).toEqual(['/v1/ok']);
    expect(records.filter((r) => r.status === 403).every((r) => r.refused !== null)).toBe(true);
    await proxy.close();
  });

  it('streams server-sent events through as they arrive and drops upstream cookies', async () => {
    const proxy = await startProxy([]);
    const started = Date.now();
    const reply = await send(proxy, '/v1/stream');
    expect(reply.headers['content-type']).toBe('text/event-stream');
    expect(reply.headers['set-cookie']).toBeUndefined();
    const events = reply.body.split('\n\n').filter((e) => e !== '');
    expect(events).toHaveLength(4);
    // The first event reached the client well before the upstream finished (3 × 150 ms).
    const lastAt = JSON.parse(events[2]!.slice('data: '.length)).at as number;
    expect(reply.firstChunkAt).toBeLessThan(lastAt);
    expect(reply.firstChunkAt - started).toBeLessThan(lastAt - started);
    await proxy.close();
  });

  it('listens on a 0600 Unix socket', async () => {
    const socketPath = join(dir, 'proxy.sock');
    const started = await startCredentialProxy({
      listen: { socketPath },
      upstream: upstreamOrigin,
      injectHeaders: () => ({ authorization: `Bearer ${material.expose()}` }),
    });
    if (started._tag === 'Left') throw new Error(started.left._tag);
    expect((await stat(socketPath)).mode & 0o777).toBe(0o600);
    seen.length = 0;
    const reply = await send(started.right, '/v1/models');
    expect(reply.status).toBe(200);
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    await started.right.close();
  });

  it('with a redactor, an upstream that echoes the key cannot leak it to the client', async () => {
    const redactor = redactorWith({ upstream: KEY });
    const proxy = await startProxy([], { redactor });
    const reply = await send(proxy, '/v1/echo-auth');
    expect(reply.status).toBe(401);
    expect(reply.body).not.toContain(KEY);
    expect(reply.body).toContain('[REDACTED:upstream]');
    await proxy.close();
  });

  it('answers 502 without detail when the upstream is down or the key source fails', async () => {
    const down = await startCredentialProxy({
      listen: { host: '127.0.0.1' },
      upstream: 'http://127.0.0.1:9',
      injectHeaders: () => ({ authorization: `Bearer ${material.expose()}` }),
    });
    if (down._tag === 'Left') throw new Error(down.left._tag);
    const reply = await send(down.right, '/v1/x');
    expect(reply.status).toBe(502);
    expect(reply.body).not.toContain(KEY);
    await down.right.close();
    const failing = await startProxy([], {
      injectHeaders: () => {
        throw new Error(`vault said ${KEY}`);
      },
    });
    const failed = await send(failing, '/v1/x');
    expect(failed.status).toBe(502);
    expect(failed.body).not.toContain(KEY);
    await failing.close();
  });

  it('refuses upstreams that are not an https origin (plain http only on loopback)', async () => {
    for (const bad of [
      'http://api.openai.com',
      'https://api.openai.com/v1',
      'https://u:p@api.openai.com',
      'ftp://x',
      'nope',
    ]) {
      const started = await startCredentialProxy({
        listen: { host: '127.0.0.1' },
        upstream: bad,
        injectHeaders: () => ({}),
      });
      expect(started._tag === 'Left' && started.left._tag, bad).toBe('UpstreamNotAllowed');
    }
  });
});
