import { describe, expect, it } from 'vitest';
import {
  BudgetProvider,
  backoffDelayMs,
  type Clock,
  CostMeter,
  failureDisposition,
  LocalFallbackProvider,
  ReliableProvider,
  RouterProvider,
  type StreamEvent,
} from '../src/index.js';
import { fail, fakeProvider, ok } from './fake-provider.js';
import { drain, request, textOf } from './harnesses.js';

function fakeClock(): { readonly sleeps: number[]; readonly clock: Clock } {
  const sleeps: number[] = [];
  return { sleeps, clock: { now: () => 0, sleep: async (ms) => void sleeps.push(ms) } };
}

const types = (events: readonly StreamEvent[]): string[] => events.map((event) => event.type);

describe('backoff', () => {
  it('is full-jitter exponential, capped', () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1_000 };
    expect([0, 1, 2, 3, 4, 10].map((retry) => backoffDelayMs(retry, policy, () => 0.999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffDelayMs(3, policy, () => 0)).toBe(0);
  });

  it('classifies failures', () => {
    expect(failureDisposition({ _tag: 'stalled', provider: 'p', message: '', idleMs: 1 })).toBe('retry');
    expect(failureDisposition({ _tag: 'auth', provider: 'p', message: '' })).toBe('next');
    expect(failureDisposition({ _tag: 'aborted', provider: 'p', message: '' })).toBe('stop');
  });
});

describe('ReliableProvider', () => {
  it('retries stalls, timeouts and 5xx on one candidate, then succeeds', async () => {
    const primary = fakeProvider(
      'a',
      fail('a', { _tag: 'stalled', idleMs: 100 }),
      fail('a', { _tag: 'timeout', phase: 'first_byte', timeoutMs: 5 }),
      ok('hi'),
    );
    const { sleeps, clock } = fakeClock();
    const events = await drain(
      new ReliableProvider({ candidates: [{ provider: primary }], clock, random: () => 0.5 }).stream(request()),
    );
    expect(types(events)).toEqual(['retry', 'retry', 'text_delta', 'usage', 'done']);
    expect(sleeps).toEqual([250, 500]);
    expect(primary.requests).toHaveLength(3);
  });

  it('moves to the next candidate (with its own model) after attempts run out, announcing the switch', async () => {
    const a = fakeProvider('a', fail('a', { _tag: 'server_error', status: 502 }));
    const b = fakeProvider('b', ok('from b'));
    const { clock } = fakeClock();
    const reliable = new ReliableProvider({
      candidates: [
        { provider: a, model: 'model-a' },
        { provider: b, model: 'model-b' },
      ],
      maxAttemptsPerCandidate: 2,
      clock,
      random: () => 0,
    });
    const events = await drain(reliable.stream(request()));
    expect(textOf(events)).toBe('from b');
    expect(a.requests.map((seen) => seen.model)).toEqual(['model-a', 'model-a']);
    expect(b.requests.map((seen) => seen.model)).toEqual(['model-b']);
    expect(events.filter((event) => event.type === 'retry').at(-1)).toMatchObject({
      from: { provider: 'a', model: 'model-a' },
      to: { provider: 'b', model: 'model-b' },
      delayMs: 0,
    });
  });

  it('goes straight to the next candidate on auth failure (credentials are per provider)', async () => {
    const a = fakeProvider('a', fail('a', { _tag: 'auth', status: 401 }));
    const b = fakeProvider('b', ok('b'));
    const { sleeps, clock } = fakeClock();
    await drain(new ReliableProvider({ candidates: [{ provider: a }, { provider: b }], clock }).stream(request()));
    expect(a.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('does not wait out a Retry-After beyond its bound: it moves on', async () => {
    const a = fakeProvider('a', fail('a', { _tag: 'rate_limited', retryAfterMs: 3_600_000 }));
    const b = fakeProvider('b', ok('b'));
    const { sleeps, clock } = fakeClock();
    const events = await drain(
      new ReliableProvider({ candidates: [{ provider: a }, { provider: b }], clock, maxRetryAfterMs: 60_000 }).stream(
        request(),
      ),
    );
    expect(sleeps).toEqual([]);
    expect(textOf(events)).toBe('b');
  });

  it('never retries once content reached the consumer: the error passes through', async () => {
    const a = fakeProvider('a', [{ type: 'text_delta', text: 'partial' }, ...fail('a', { _tag: 'network' })]);
    const b = fakeProvider('b', ok('b'));
    const events = await drain(
      new ReliableProvider({ candidates: [{ provider: a }, { provider: b }], clock: fakeClock().clock }).stream(
        request(),
      ),
    );
    expect(types(events)).toEqual(['text_delta', 'error']);
    expect(b.requests).toHaveLength(0);
  });

  it('stops at budget_exhausted, and returns the last error when every candidate failed', async () => {
    const budget = fakeProvider(
      'a',
      fail('a', { _tag: 'budget_exhausted', spentMicroDollars: 1, ceilingMicroDollars: 1 }),
    );
    const spare = fakeProvider('b', ok('b'));
    const stopped = await drain(
      new ReliableProvider({ candidates: [{ provider: budget }, { provider: spare }] }).stream(request()),
    );
    expect(stopped.at(-1)).toMatchObject({ type: 'error', error: { _tag: 'budget_exhausted' } });
    expect(spare.requests).toHaveLength(0);

    const x = fakeProvider('x', fail('x', { _tag: 'bad_request', status: 400 }));
    const y = fakeProvider('y', fail('y', { _tag: 'protocol' }));
    const all = await drain(new ReliableProvider({ candidates: [{ provider: x }, { provider: y }] }).stream(request()));
    expect(all.at(-1)).toMatchObject({ type: 'error', error: { _tag: 'protocol', provider: 'y' } });
  });

  it('aborting during backoff ends the stream with aborted', async () => {
    const controller = new AbortController();
    const a = fakeProvider('a', fail('a', { _tag: 'server_error', status: 500 }));
    const clock: Clock = {
      now: () => 0,
      sleep: async () => {
        controller.abort();
      },
    };
    const events = await drain(
      new ReliableProvider({ candidates: [{ provider: a }], clock }).stream(request(), controller.signal),
    );
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { _tag: 'aborted' } });
  });
});

/** Cheap enough that one request's worst case (1,024 output tokens + input) stays far under the ceilings. */
const CHEAP = { inputPerMillion: 0.1, outputPerMillion: 0.1 } as const;

describe('BudgetProvider', () => {
  it('meters usage and refuses once spent reaches the ceiling', async () => {
    const inner = fakeProvider('a', ok('one'));
    const budget = new BudgetProvider(inner, { ceilingMicroDollars: 900, prices: CHEAP });
    await drain(budget.stream(request()));
    expect(budget.spentMicroDollars).toBe(450);
    await drain(budget.stream(request()));
    expect(budget.spentMicroDollars).toBe(900);
    const refused = await drain(budget.stream(request()));
    expect(refused).toEqual([
      {
        type: 'error',
        error: {
          _tag: 'budget_exhausted',
          provider: 'budget(a)',
          message: 'cost ceiling reached: spent 900 of 900 micro-dollars',
          spentMicroDollars: 900,
          ceilingMicroDollars: 900,
        },
      },
    ]);
    expect(inner.requests).toHaveLength(2);
  });

  it('shares one meter across providers', async () => {
    const meter = new CostMeter(800);
    const first = new BudgetProvider(fakeProvider('a', ok('x')), { ceilingMicroDollars: 1_000, meter, prices: CHEAP });
    const second = new BudgetProvider(fakeProvider('b', ok('y')), { ceilingMicroDollars: 1_000, meter, prices: CHEAP });
    await drain(first.stream(request()));
    const refused = await drain(second.stream(request()));
    expect(refused[0]).toMatchObject({ type: 'error', error: { _tag: 'budget_exhausted', spentMicroDollars: 1_250 } });
  });
});

describe('LocalFallbackProvider', () => {
  it('degrades to the local model when the remote fails before any content, and says so', async () => {
    const remote = fakeProvider('remote', fail('remote', { _tag: 'network' }));
    const local = fakeProvider('ollama', ok('local answer'));
    const provider = new LocalFallbackProvider({ primary: remote, local: { provider: local, model: 'qwen3:14b' } });
    const events = await drain(provider.stream(request()));
    expect(events[0]).toMatchObject({
      type: 'retry',
      to: { provider: 'ollama', model: 'qwen3:14b' },
      cause: { _tag: 'network' },
    });
    expect(textOf(events)).toBe('local answer');
    expect(local.requests[0]!.model).toBe('qwen3:14b');
  });

  it('keeps working locally once the remote budget is spent', async () => {
    const remote = new BudgetProvider(fakeProvider('remote', ok('remote')), { ceilingMicroDollars: 0, prices: CHEAP });
    const provider = new LocalFallbackProvider({
      primary: remote,
      local: { provider: fakeProvider('ollama', ok('local')) },
    });
    expect(textOf(await drain(provider.stream(request())))).toBe('local');
  });

  it('does not degrade on bad_request or abort', async () => {
    const local = fakeProvider('ollama', ok('local'));
    const provider = new LocalFallbackProvider({
      primary: fakeProvider('remote', fail('remote', { _tag: 'bad_request', status: 400 })),
      local: { provider: local },
    });
    const events = await drain(provider.stream(request()));
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { _tag: 'bad_request' } });
    expect(local.requests).toHaveLength(0);
  });
});

describe('RouterProvider', () => {
  const implement = fakeProvider('anthropic', ok('implemented'));
  const reviewer = fakeProvider('openai', ok('reviewed'));
  const noTools = fakeProvider('tiny', ok('tiny'));
  const router = new RouterProvider({
    defaultRole: 'implement',
    routes: {
      implement: [
        { provider: noTools, model: 'tiny-1', tools: false },
        { provider: implement, model: 'claude-x', contextWindow: 200_000 },
      ],
      review: [{ provider: reviewer, model: 'gpt-x' }],
      summarize: [{ provider: reviewer, model: 'small', contextWindow: 100 }],
    },
  });

  it('routes by role hint, defaulting to the default role, and sets the route model', async () => {
    expect(textOf(await drain(router.stream(request({ route: { role: 'review' } }))))).toBe('reviewed');
    expect(reviewer.requests.at(-1)!.model).toBe('gpt-x');
    expect(textOf(await drain(router.stream(request())))).toBe('implemented');
    expect(implement.requests.at(-1)!.model).toBe('claude-x');
  });

  it('skips a route without tool support when tools are sent, and uses it when none are', async () => {
    expect(router.select(request())).toMatchObject({ _tag: 'Selected', routes: [{ model: 'claude-x' }] });
    expect(router.select(request({ tools: [] }))).toMatchObject({
      _tag: 'Selected',
      routes: [{ model: 'tiny-1' }, { model: 'claude-x' }],
    });
  });

  it('reports an unknown role and a request no route can hold as bad_request events', async () => {
    const unknown = await drain(router.stream(request({ route: { role: 'poetry' } })));
    expect(unknown).toEqual([
      { type: 'error', error: { _tag: 'bad_request', provider: 'router', message: 'no routes for role "poetry"' } },
    ]);
    const tooBig = await drain(router.stream(request({ route: { role: 'summarize' } })));
    expect(tooBig[0]).toMatchObject({ type: 'error', error: { _tag: 'bad_request' } });
    expect((tooBig[0] as { error: { message: string } }).error.message).toContain('context window 100');
  });

  it('hands the eligible routes to the chain builder in preference order', async () => {
    const seen: string[][] = [];
    const chained = new RouterProvider({
      defaultRole: 'implement',
      routes: {
        implement: [
          { provider: implement, model: 'm1' },
          { provider: reviewer, model: 'm2' },
        ],
      },
      chain: (routes) => {
        seen.push(routes.map((route) => route.model));
        return new ReliableProvider({
          candidates: routes.map((route) => ({ provider: route.provider, model: route.model })),
        });
      },
    });
    await drain(chained.stream(request()));
    await drain(chained.stream(request()));
    expect(seen).toEqual([['m1', 'm2']]);
  });
});

describe('a provider that breaks the contract', () => {
  it('has its throw turned into an internal error event by the meta-provider guard', async () => {
    const broken = {
      id: 'broken',
      // biome-ignore lint/correctness/useYield: the point is a generator that throws before yielding
      async *stream(): AsyncGenerator<StreamEvent> {
        throw new Error('boom');
      },
    };
    const events = await drain(new ReliableProvider({ candidates: [{ provider: broken }] }).stream(request()));
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { _tag: 'internal' } });
  });
});
