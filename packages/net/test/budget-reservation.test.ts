/**
 * The native agent's cost ceiling holds by construction: the real Anthropic
 * HTTP provider against a scripted server on 127.0.0.1 that bills every
 * output token it streams, under a BudgetProvider. Overlap is forced by a
 * handshake (the server holds every answer until all N requests have arrived
 * or been refused); cut streams are the consumer stopping early. Each attack
 * has a CONTROL without the budget showing what it would have spent.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BudgetProvider,
  buildModelStack,
  CostMeter,
  createAnthropicProvider,
  type ModelPrices,
  type ModelProvider,
  type ModelRequest,
  parseRegistry,
  reservedInputTokens,
  type StreamEvent,
  worstCase,
} from '../src/index.js';
import { drain } from './harnesses.js';
import { encodeFrame, type ScriptedServer, startServer } from './scripted-server.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const PRICES: ModelPrices = { inputPerMillion: 3, outputPerMillion: 15, cacheWritePerMillion: 3.75 };
const MODEL = 'claude-sonnet-4-5';
const ANSWER_TOKENS = 400;

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: MODEL,
  system: 'You are a careful coding agent.',
  messages: [{ role: 'user', content: 'Write as much as you can.' }],
  tools: [],
  maxTokens: ANSWER_TOKENS,
  ...overrides,
});

/** One Anthropic answer of `tokens` one-token deltas; `finish` false leaves it open after the deltas. */
function writeAnswer(response: ServerResponse, tokens: number, finish: boolean): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const frames = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'm',
          type: 'message',
          role: 'assistant',
          model: MODEL,
          content: [],
          usage: { input_tokens: 30, output_tokens: 1 },
        },
      },
    },
    {
      event: 'content_block_start',
      data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    },
    ...Array.from({ length: tokens }, (_, index) => ({
      event: 'content_block_delta',
      data: {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: index % 2 === 0 ? ' é' : '漢' },
      },
    })),
  ];
  response.write(frames.map(encodeFrame).join(''));
  if (!finish) return;
  const closing = [
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: tokens } },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
  response.end(closing.map(encodeFrame).join(''));
}

function provider(server: ScriptedServer): ModelProvider {
  return createAnthropicProvider({
    id: 'anthropic',
    baseUrl: `${server.origin}/v1`,
    key: () => 'sk-test',
    prices: { [MODEL]: PRICES },
  });
}

interface HeldServer {
  readonly server: ScriptedServer;
  /** Lets every parked answer (and every later one) go. */
  readonly release: () => void;
  /** Called after each request arrives. */
  readonly onArrival: (listener: () => void) => void;
}

/** A server that parks every answer until `release`. */
async function heldServer(): Promise<HeldServer> {
  const parked: ServerResponse[] = [];
  let released = false;
  let arrival: () => void = () => {};
  const server = await startServer((_recorded, response) => {
    if (released) writeAnswer(response, ANSWER_TOKENS, true);
    else parked.push(response);
    arrival();
  });
  servers.push(server);
  return {
    server,
    release: () => {
      released = true;
      for (const response of parked.splice(0)) writeAnswer(response, ANSWER_TOKENS, true);
    },
    onArrival: (listener) => {
      arrival = listener;
    },
  };
}

/** Starts N streams at once; resolves after each has reached the server or been refused, then lets answers go. */
async function overlapping(
  subject: ModelProvider,
  held: HeldServer,
  count: number,
): Promise<{ readonly arrivedWhileHeld: number; readonly results: readonly StreamEvent[][] }> {
  let refused = 0;
  let resolveDecided: () => void = () => {};
  const decided = new Promise<void>((resolve) => {
    resolveDecided = resolve;
  });
  const tick = (): void => {
    if (held.server.requests.length + refused === count) resolveDecided();
  };
  held.onArrival(tick);
  const runs = Array.from({ length: count }, async () => {
    const events: StreamEvent[] = [];
    for await (const event of subject.stream(request())) {
      events.push(event);
      if (event.type === 'error' && event.error._tag === 'budget_exhausted') {
        refused += 1;
        tick();
      }
    }
    return events;
  });
  await decided;
  const arrivedWhileHeld = held.server.requests.length;
  held.release();
  return { arrivedWhileHeld, results: await Promise.all(runs) };
}

describe('BudgetProvider under overlapping requests', () => {
  const N = 12;
  const worst = worstCase(request(), reservedInputTokens(request()), PRICES);

  it('CONTROL: without the ceiling all 12 run and spend more than a 3-answer ceiling', async () => {
    const held = await heldServer();
    const meter = new CostMeter();
    const { arrivedWhileHeld, results } = await overlapping(provider(held.server), held, N);
    expect(arrivedWhileHeld).toBe(N);
    for (const events of results) {
      const usage = events.find((event) => event.type === 'usage');
      if (usage?.type === 'usage') meter.add(usage.costMicroDollars);
    }
    expect(meter.spentMicroDollars).toBeGreaterThan(3.5 * worst.costMicroDollars);
  });

  it('a ceiling for 3 worst cases admits exactly 3 of 12 overlapping requests and is never passed', async () => {
    const held = await heldServer();
    const ceiling = Math.floor(3.5 * worst.costMicroDollars);
    const budget = new BudgetProvider(provider(held.server), { ceilingMicroDollars: ceiling, prices: PRICES });
    const { arrivedWhileHeld, results } = await overlapping(budget, held, N);
    expect(arrivedWhileHeld).toBe(3);
    expect(results.filter((events) => events.at(-1)?.type === 'done')).toHaveLength(3);
    expect(budget.spentMicroDollars).toBeLessThanOrEqual(ceiling);
    expect(budget.meter.heldMicroDollars).toBe(0);
  });

  it('a token ceiling smaller than one worst case lets none through', async () => {
    const held = await heldServer();
    const budget = new BudgetProvider(provider(held.server), {
      ceilingMicroDollars: 1_000_000_000,
      ceilingTokens: worst.tokens - 1,
      prices: PRICES,
    });
    const { arrivedWhileHeld } = await overlapping(budget, held, N);
    expect(arrivedWhileHeld).toBe(0);
  });
});

describe('BudgetProvider and cut streams', () => {
  it('a consumer that stops before the usage event is charged at least the streamed output', async () => {
    const server = await startServer((_request, response) => writeAnswer(response, ANSWER_TOKENS, false));
    servers.push(server);
    const budget = new BudgetProvider(provider(server), { ceilingMicroDollars: 1_000_000_000, prices: PRICES });
    let deltas = 0;
    let usageEvents = 0;
    for await (const event of budget.stream(request())) {
      if (event.type === 'usage') usageEvents += 1;
      if (event.type === 'text_delta') deltas += 1;
      if (deltas >= ANSWER_TOKENS) break;
    }
    // CONTROL: the old rule charged usage events only, and none arrived.
    expect(usageEvents).toBe(0);
    // Every streamed delta is at least one token: at least ANSWER_TOKENS output tokens at the output price.
    expect(budget.meter.spentMicroDollars).toBeGreaterThanOrEqual(ANSWER_TOKENS * PRICES.outputPerMillion);
    expect(budget.meter.spentTokens).toBeGreaterThanOrEqual(ANSWER_TOKENS);
    expect(budget.meter.heldMicroDollars).toBe(0);
  });
});

describe('exact pricing for the native agent', () => {
  it('an unpriced model in a budgeted chain is refused before any request, prototype names included', async () => {
    const server = await startServer((_request, response) => writeAnswer(response, 3, true));
    servers.push(server);
    const registry = parseRegistry(
      JSON.stringify({
        version: 1,
        defaultRole: 'implement',
        budget: { ceilingMicroDollars: 1_000_000 },
        providers: [
          {
            id: 'anthropic',
            kind: 'anthropic',
            baseUrl: `${server.origin}/v1`,
            models: [{ id: 'claude-unpriced', roles: ['implement'] }],
          },
        ],
      }),
    );
    if (registry._tag === 'Left') throw new Error(registry.left.problems.join('; '));
    const stack = buildModelStack(registry.right, { resolveKey: () => undefined });
    const events = await drain(stack.router.stream(request({ model: 'claude-unpriced' })));
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { _tag: 'budget_exhausted' } });
    expect(server.requests).toHaveLength(0);
    // A price record is read by own keys only.
    const direct = createAnthropicProvider({ id: 'a', baseUrl: `${server.origin}/v1`, prices: { [MODEL]: PRICES } });
    const usage = (await drain(direct.stream(request({ model: 'toString' })))).find((event) => event.type === 'usage');
    expect(usage).toMatchObject({ priced: false, costMicroDollars: 0 });
  });
});
