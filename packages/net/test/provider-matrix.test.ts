/**
 * The behaviour matrix every wire dialect must pass, against scripted servers
 * on 127.0.0.1 speaking the real protocol over SSE.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, ReliableProvider, type StreamEvent } from '../src/index.js';
import { API_KEY, drain, EXPECTED_COST, HARNESSES, last, MODEL, request, textOf } from './harnesses.js';
import {
  encodeFrame,
  httpError,
  type ScriptedServer,
  sequence,
  sse,
  stall,
  startServer,
  truncated,
} from './scripted-server.js';
import { type Scenario, USAGE } from './wire-scripts.js';

const NORMAL: Scenario = {
  thinking: 'The user wants a file read.',
  text: ['Reading ', 'the file', ' now.'],
  calls: [
    { id: 'call_1', name: 'read_file', argumentsText: '{"path":"src/a.ts"}' },
    { id: 'call_2', name: 'launch_rockets', argumentsText: '{"count":3}' },
  ],
};

const MALFORMED: Scenario = {
  text: ['Oops.'],
  calls: [{ id: 'call_9', name: 'read_file', argumentsText: '{"path": "src/a.ts",' }],
};

function fakeClock(): { readonly sleeps: number[]; readonly clock: Clock } {
  const sleeps: number[] = [];
  return { sleeps, clock: { now: () => 0, sleep: async (ms) => void sleeps.push(ms) } };
}

const noKeyAnywhere = (events: readonly StreamEvent[]): void => {
  expect(JSON.stringify(events)).not.toContain(API_KEY);
};

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.each(HARNESSES)('$name', (harness) => {
  it('streams text, thinking and tool calls (including an unknown tool), then usage with cost and done', async () => {
    server = await startServer(sse(harness.frames(NORMAL)));
    const events = await drain(harness.make(server.origin).stream(request()));

    expect(textOf(events)).toBe('Reading the file now.');
    expect(
      events
        .filter((event) => event.type === 'thinking_delta')
        .map((event) => (event as { text: string }).text)
        .join(''),
    ).toBe('The user wants a file read.');
    const calls = events.filter((event) => event.type === 'tool_call');
    expect(calls.map((call) => [call.name, call.arguments])).toEqual([
      ['read_file', { path: 'src/a.ts' }],
      // An unknown tool is the agent's business: it surfaces as an ordinary call.
      ['launch_rockets', { count: 3 }],
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    const usage = events.find((event) => event.type === 'usage');
    expect(usage).toMatchObject({
      inputTokens: USAGE.input,
      outputTokens: USAGE.output,
      cacheReadTokens: USAGE.cacheRead,
      costMicroDollars: EXPECTED_COST,
      priced: true,
    });
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'tool_use' });
    expect(events.filter((event) => event.type === 'done' || event.type === 'error')).toHaveLength(1);

    const seen = server.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe(harness.path(MODEL));
    expect(harness.seenKey(seen)).toBe(harness.keyed ? API_KEY : undefined);
    if (!harness.keyed) expect(seen.headers.authorization).toBeUndefined();
    noKeyAnywhere(events);
  });

  it('turns malformed tool-call JSON into a tool_call_error carrying the raw text', async () => {
    server = await startServer(sse(harness.frames(MALFORMED)));
    const events = await drain(harness.make(server.origin).stream(request()));
    const failure = events.find((event) => event.type === 'tool_call_error');
    expect(failure).toMatchObject({ type: 'tool_call_error', name: 'read_file', raw: '{"path": "src/a.ts",' });
    expect(events.some((event) => event.type === 'tool_call')).toBe(false);
    expect(last(events)?.type).toBe('done');
  });

  it('reports a stream that closes before its terminal event as truncated', async () => {
    server = await startServer(truncated(harness.frames(NORMAL), harness.terminalFrames));
    const events = await drain(harness.make(server.origin).stream(request()));
    expect(last(events)).toMatchObject({ type: 'error', error: { _tag: 'truncated', provider: 'under-test' } });
    expect(events.some((event) => event.type === 'done')).toBe(false);
  });

  it('reports a stream cut in the middle of a frame as truncated', async () => {
    const frames = harness.frames(NORMAL);
    const terminal = frames.length - harness.terminalFrames;
    const before = frames.slice(0, terminal).map(encodeFrame).join('').length;
    const cut = before + Math.floor(encodeFrame(frames[terminal]!).length / 2);
    server = await startServer(sse(frames, { cutAfterBytes: cut }));
    const events = await drain(harness.make(server.origin).stream(request()));
    expect(last(events)).toMatchObject({ type: 'error', error: { _tag: 'truncated' } });
  });

  it('maps 429 with Retry-After to rate_limited, and a retry chain waits at least that long', async () => {
    server = await startServer(
      httpError(429, { error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '7' }),
    );
    const direct = await drain(harness.make(server.origin).stream(request()));
    expect(last(direct)).toMatchObject({ type: 'error', error: { _tag: 'rate_limited', retryAfterMs: 7000 } });

    server.handle(
      sequence(
        httpError(429, { error: { message: 'slow down' } }, { 'retry-after': '7' }),
        sse(harness.frames(NORMAL)),
      ),
    );
    const { sleeps, clock } = fakeClock();
    const reliable = new ReliableProvider({
      candidates: [{ provider: harness.make(server.origin) }],
      clock,
      random: () => 0.5,
    });
    const events = await drain(reliable.stream(request()));
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(7000);
    expect(events.find((event) => event.type === 'retry')).toMatchObject({
      cause: { _tag: 'rate_limited' },
      delayMs: sleeps[0],
    });
    expect(last(events)).toMatchObject({ type: 'done' });
    expect(textOf(events)).toBe('Reading the file now.');
  });

  it('maps 500 to server_error, and a retry chain retries it with backoff', async () => {
    server = await startServer(httpError(500, { error: { message: 'internal' } }));
    const direct = await drain(harness.make(server.origin).stream(request()));
    expect(last(direct)).toMatchObject({ type: 'error', error: { _tag: 'server_error', status: 500 } });

    server.handle(sequence(httpError(500, 'upstream exploded'), httpError(503, ''), sse(harness.frames(NORMAL))));
    const { sleeps, clock } = fakeClock();
    const reliable = new ReliableProvider({
      candidates: [{ provider: harness.make(server.origin) }],
      clock,
      random: () => 0.99,
      backoff: { baseDelayMs: 100, maxDelayMs: 10_000 },
    });
    const events = await drain(reliable.stream(request()));
    // Full jitter below base·2^retry: retry 0 < 100 ms, retry 1 < 200 ms.
    expect(sleeps).toEqual([99, 198]);
    expect(last(events)).toMatchObject({ type: 'done' });
  });

  it('reports headers-then-silence as stalled after the idle timeout', async () => {
    server = await startServer(stall);
    const provider = harness.make(server.origin, { timeouts: { idleMs: 150 } });
    const events = await drain(provider.stream(request()));
    expect(events).toEqual([
      {
        type: 'error',
        error: { _tag: 'stalled', provider: 'under-test', idleMs: 150, message: 'no bytes from the server for 150 ms' },
      },
    ]);
  });

  it('reports no response headers within the first-byte timeout as timeout', async () => {
    server = await startServer(() => undefined);
    const events = await drain(harness.make(server.origin, { timeouts: { firstByteMs: 100 } }).stream(request()));
    expect(last(events)).toMatchObject({
      type: 'error',
      error: { _tag: 'timeout', phase: 'first_byte', timeoutMs: 100 },
    });
  });

  it('maps 401 and 403 to auth', async () => {
    server = await startServer(
      sequence(httpError(401, { error: { message: 'bad key' } }), httpError(403, 'forbidden')),
    );
    for (const status of [401, 403]) {
      const events = await drain(harness.make(server.origin).stream(request()));
      expect(last(events)).toMatchObject({ type: 'error', error: { _tag: 'auth', status } });
    }
  });

  it('maps 400 to bad_request', async () => {
    server = await startServer(httpError(400, { error: { message: 'max_tokens too large' } }));
    const events = await drain(harness.make(server.origin).stream(request()));
    expect(last(events)).toMatchObject({ type: 'error', error: { _tag: 'bad_request', status: 400 } });
    expect((last(events) as { error: { message: string } }).error.message).toContain('max_tokens too large');
  });

  it('reports the caller aborting as aborted', async () => {
    server = await startServer(stall);
    const controller = new AbortController();
    const stream = harness.make(server.origin).stream(request(), controller.signal);
    setTimeout(() => controller.abort(), 50);
    const events = await drain(stream);
    expect(events).toEqual([
      { type: 'error', error: { _tag: 'aborted', provider: 'under-test', message: 'request aborted by caller' } },
    ]);
  });
});

describe.each(HARNESSES.filter((harness) => harness.keyed))('$name key hygiene', (harness) => {
  it('redacts a key that the server echoes in an error body', async () => {
    server = await startServer(httpError(401, { error: { message: `invalid x-api-key ${API_KEY}` } }));
    const events = await drain(harness.make(server.origin).stream(request()));
    expect(last(events)).toMatchObject({ type: 'error', error: { _tag: 'auth', status: 401 } });
    expect(JSON.stringify(events)).toContain('[redacted]');
    noKeyAnywhere(events);
  });

  it('redacts a key that a hostile endpoint streams back, even split across deltas', async () => {
    const half = API_KEY.length >> 1;
    server = await startServer(
      sse(harness.frames({ text: ['leak: ', API_KEY.slice(0, half), API_KEY.slice(half), ' end'], calls: [] })),
    );
    const events = await drain(harness.make(server.origin).stream(request()));
    expect(textOf(events)).toBe('leak: [redacted] end');
    noKeyAnywhere(events);
  });
});

describe('unreachable endpoint', () => {
  it('is a network error event, not a throw', async () => {
    const probe = await startServer(() => undefined);
    const origin = probe.origin;
    await probe.close();
    const events = await drain(HARNESSES[0]!.make(origin).stream(request()));
    expect(last(events)).toMatchObject({ type: 'error', error: { _tag: 'network' } });
    expect((last(events) as { error: { message: string } }).error.message).toMatch(/ECONNREFUSED|fetch failed/);
  });
});
