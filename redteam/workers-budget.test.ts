/**
 * Budgets a worker could walk past (issue "Hardening", class 7), replayed
 * against the REAL model proxy (meter + credential proxy) with a scripted
 * provider on 127.0.0.1 that bills like a real one: every request that
 * reaches it, and every output token it streams. Each attack has a CONTROL
 * showing it works without the defence — through the credential proxy alone
 * (a key-injecting pass-through with the old prefix allowlist), through a
 * budget of the old check-then-charge shape, or read by the old rule
 * "charge the usage event". Assertions are counts (upstream requests,
 * streamed tokens, charged tokens), never times; overlap is forced with a
 * handshake: the upstream holds every answer until all N requests have
 * arrived or been refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  boundedModelBudget,
  DEFAULT_INPUT_BYTES_PER_TOKEN,
  type ModelBudget,
  type ModelPricing,
  type ModelWire,
  priceTable,
  priceUsage,
  UsageMeter,
} from '../packages/workers/src/index.js';
import {
  type Answer,
  type BillingUpstream,
  startBillingUpstream,
  TOKENS_PER_DELTA,
} from '../packages/workers/test/billing-upstream.js';
import {
  type ClientAnswer,
  ENDPOINT,
  growingCount,
  occurrences,
  send,
  startBarePassThrough,
  startTestProxy,
  type TestProxy,
} from '../packages/workers/test/proxy-harness.js';
import { TEST_API_KEY } from '../packages/workers/test/worker-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function upstreamFor(
  wire: ModelWire,
  plan: (parsed: Record<string, unknown>) => Answer,
  options: { hold?: boolean; onArrival?: () => void } = {},
): Promise<BillingUpstream> {
  const upstream = await startBillingUpstream(wire, (_request, parsed) => plan(parsed), options);
  cleanups.push(upstream.close);
  return upstream;
}

async function proxyFor(options: Parameters<typeof startTestProxy>[0]): Promise<TestProxy> {
  const proxy = await startTestProxy(options);
  cleanups.push(proxy.close);
  return proxy;
}

async function bareFor(wire: ModelWire, origin: string): Promise<string> {
  const bare = await startBarePassThrough(wire, origin);
  cleanups.push(bare.close);
  return bare.socketPath;
}

/** A request body of each wire; `cap` undefined leaves the output cap out (OpenAI allows that). */
function bodyFor(wire: ModelWire, model: string, cap: number | undefined, extra: Record<string, unknown> = {}): string {
  const capField =
    cap === undefined ? {} : wire === 'openai-responses' ? { max_output_tokens: cap } : { max_tokens: cap };
  return wire === 'openai-responses'
    ? JSON.stringify({ model, input: 'write the longest answer you can', stream: true, ...capField, ...extra })
    : JSON.stringify({
        model,
        messages: [{ role: 'user', content: 'write the longest answer you can' }],
        stream: true,
        ...capField,
        ...extra,
      });
}

/** What the proxy reserves for `body`: its input estimate plus the output cap. */
const reservedTokens = (body: string, cap: number): number =>
  Math.ceil(Buffer.byteLength(body) / DEFAULT_INPUT_BYTES_PER_TOKEN) + cap;

/** One complete streamed delta in the text a client received. */
const DELTA_MARK: Readonly<Record<ModelWire, string>> = {
  'openai-responses': '"type":"response.output_text.delta"',
  'anthropic-messages': '"type":"content_block_delta"',
};

const WIRES: readonly (readonly [ModelWire, string])[] = [
  ['openai-responses', 'gpt-5'],
  ['anthropic-messages', 'claude-sonnet-4-5'],
];
const PRICES: Readonly<Record<string, ModelPricing>> = {
  'gpt-5': { inputUsdPerMillion: 1.25, outputUsdPerMillion: 10, cachedInputUsdPerMillion: 0.125 },
  'gpt-5-mini': { inputUsdPerMillion: 0.25, outputUsdPerMillion: 2 },
  'claude-sonnet-4-5': { inputUsdPerMillion: 3, outputUsdPerMillion: 15, cachedInputUsdPerMillion: 0.3 },
  'claude-opus-4-1': { inputUsdPerMillion: 15, outputUsdPerMillion: 75, cachedInputUsdPerMillion: 1.5 },
};
const TABLE = priceTable(Object.entries(PRICES));

const isProviderShapedError = (answer: ClientAnswer): boolean => {
  try {
    const parsed = JSON.parse(answer.body) as { error?: { message?: unknown } };
    return answer.status >= 400 && typeof parsed.error?.message === 'string';
  } catch {
    return false;
  }
};

describe.each(WIRES)('redteam (%s): hanging up just before the usage event', (wire, model) => {
  const ANSWER_TOKENS = 2000;
  const cutAnswer = (): Answer => ({ outputTokens: ANSWER_TOKENS, inputTokens: 20, model, cutAfterDeltas: true });
  /** A fresh predicate per answer: true once every delta of it has arrived. */
  const atLastDelta = (): ((text: string) => boolean) => {
    const count = growingCount(DELTA_MARK[wire]);
    return (text) => count(text) >= ANSWER_TOKENS / TOKENS_PER_DELTA;
  };

  it('CONTROL: through a pass-through, five cut answers bill 10,000 tokens and show (almost) no usage', async () => {
    const upstream = await upstreamFor(wire, cutAnswer);
    const socket = await bareFor(wire, upstream.origin);
    let counted = 0;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const answer = await send(socket, ENDPOINT[wire], bodyFor(wire, model, ANSWER_TOKENS), {
        headers: { host: 'localhost' },
        hangUpWhen: atLastDelta(),
      });
      expect(answer.hungUp).toBe(true);
      // The old rule: charge what the usage events say.
      const meter = new UsageMeter(wire, 'text/event-stream');
      meter.push(Buffer.from(answer.body));
      counted += meter.finish(undefined).outputTokens;
    }
    expect(upstream.billed).toHaveLength(5);
    expect(upstream.billedOutputTokens()).toBe(5 * ANSWER_TOKENS);
    // OpenAI reports nothing before response.completed; Anthropic only message_start's 1 output token.
    expect(counted).toBeLessThanOrEqual(5);
  });

  it('under a 1,500-token budget no 2,000-token answer is even asked for, whatever cap the worker sends', async () => {
    const upstream = await upstreamFor(wire, cutAnswer);
    const budget = boundedModelBudget({ maxTokens: 1500 });
    const proxy = await proxyFor({ wire, upstream: upstream.origin, budget });
    // No cap (the proxy inserts its default), the answer's size, and absurd ones.
    const caps = wire === 'openai-responses' ? [undefined, 2000, 1_000_000, 1501] : [2000, 1_000_000, 1501, 128_000];
    for (const cap of [...caps, 2000]) {
      const answer = await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, model, cap), {
        hangUpWhen: atLastDelta(),
      });
      expect(isProviderShapedError(answer)).toBe(true);
    }
    expect(upstream.billed).toHaveLength(0);
    expect(upstream.billedOutputTokens()).toBe(0);
    expect(budget.spent().requests).toBe(0);
    expect(proxy.exhaustedCalls()).toBe(1);
    expect(proxy.records.every((record) => record.refused?.startsWith('model budget exhausted') === true)).toBe(true);
  });

  it('a cut answer is charged at least every token streamed before the hang-up', async () => {
    const upstream = await upstreamFor(wire, cutAnswer);
    const budget = boundedModelBudget({ maxTokens: 100_000 });
    const proxy = await proxyFor({ wire, upstream: upstream.origin, budget });
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const answer = await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, model, ANSWER_TOKENS), {
        hangUpWhen: atLastDelta(),
      });
      expect(answer.hungUp).toBe(true);
    }
    await proxy.recorded(5);
    expect(upstream.billedOutputTokens()).toBe(5 * ANSWER_TOKENS);
    for (const record of proxy.records) {
      expect(record.refused).toBe('worker went away');
      // Never less than what was streamed, never more than the cap the request carried.
      expect(record.usage?.outputTokens).toBeGreaterThanOrEqual(ANSWER_TOKENS);
      expect(record.usage?.outputTokens).toBeLessThanOrEqual(ANSWER_TOKENS);
    }
    expect(budget.spent().outputTokens).toBeGreaterThanOrEqual(upstream.billedOutputTokens());
  });

  it('an upstream that dies mid-answer is charged what it streamed', async () => {
    const upstream = await upstreamFor(wire, cutAnswer);
    const budget = boundedModelBudget({ maxTokens: 100_000 });
    const proxy = await proxyFor({ wire, upstream: upstream.origin, budget });
    let dropped = false;
    const allArrived = atLastDelta();
    const answer = await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, model, ANSWER_TOKENS), {
      onText: (text) => {
        if (!dropped && allArrived(text)) {
          dropped = true;
          upstream.dropConnections();
        }
      },
    });
    await proxy.recorded(1);
    expect(dropped).toBe(true);
    // CONTROL: the old rule (charge the usage events) counts at most message_start's 1 token here.
    const usageOnly = new UsageMeter(wire, 'text/event-stream');
    usageOnly.push(Buffer.from(answer.body));
    expect(usageOnly.finish(undefined).outputTokens).toBeLessThanOrEqual(1);
    expect(proxy.records[0]?.usage?.outputTokens).toBeGreaterThanOrEqual(ANSWER_TOKENS);
    expect(proxy.proxy.inFlight()).toBe(0);
  });
});

describe.each(WIRES)('redteam (%s): many requests at once under a small budget', (wire, model) => {
  const N = 20;
  const CAP = 2000;
  const body = bodyFor(wire, model, CAP);
  const perRequest = reservedTokens(body, CAP);
  /** Answers use exactly what was reserved, so a settled request frees nothing. */
  const fullAnswer = (): Answer => ({
    outputTokens: CAP,
    inputTokens: perRequest - CAP,
    model,
  });

  /** Fires N requests; resolves once each has arrived upstream or been refused, then lets the answers go. */
  async function overlap(
    proxySocket: string,
    upstream: BillingUpstream,
    decided: Promise<void>,
    onRefused: () => void,
  ) {
    const answers = Array.from({ length: N }, () =>
      send(proxySocket, ENDPOINT[wire], body).then((answer) => {
        if (answer.status !== 200) onRefused();
        return answer;
      }),
    );
    await decided;
    const arrivedWhileHeld = upstream.billed.length;
    upstream.release();
    return { arrivedWhileHeld, answers: await Promise.all(answers) };
  }

  /** Resolves `decided` once every one of the N requests has arrived upstream or been refused. */
  function handshake() {
    let refused = 0;
    let arrived: () => number = () => 0;
    let resolve: () => void = () => {};
    const decided = new Promise<void>((done) => {
      resolve = done;
    });
    const tick = (): void => {
      if (arrived() + refused === N) resolve();
    };
    return {
      decided,
      tick,
      refused: () => {
        refused += 1;
        tick();
      },
      watch: (count: () => number) => {
        arrived = count;
      },
    };
  }

  it('CONTROL: a budget checked at the start and charged at the end lets all 20 through', async () => {
    const gate = handshake();
    const upstream = await upstreamFor(wire, fullAnswer, { hold: true, onArrival: () => gate.tick() });
    gate.watch(() => upstream.billed.length);
    const limit = perRequest - 1;
    let spent = 0;
    let stopped = false;
    // The shape the kernel bridge had: a stop flag set asynchronously after each charge.
    const checkThenCharge: ModelBudget = {
      mayRequest: () => !stopped,
      charge: (usage) => {
        void Promise.resolve().then(() => {
          spent += usage.inputTokens + usage.outputTokens;
          if (spent >= limit) stopped = true;
        });
      },
    };
    const proxy = await proxyFor({ wire, upstream: upstream.origin, budget: checkThenCharge });
    const { arrivedWhileHeld } = await overlap(proxy.socketPath, upstream, gate.decided, gate.refused);
    expect(arrivedWhileHeld).toBe(N);
    await proxy.recorded(N);
    await Promise.resolve();
    expect(spent).toBe(N * perRequest);
    expect(spent).toBeGreaterThan(limit);
  });

  it('a budget smaller than one answer: none of the 20 reaches the provider', async () => {
    const gate = handshake();
    const upstream = await upstreamFor(wire, fullAnswer, { hold: true, onArrival: () => gate.tick() });
    gate.watch(() => upstream.billed.length);
    const budget = boundedModelBudget({ maxTokens: perRequest - 1 });
    const proxy = await proxyFor({ wire, upstream: upstream.origin, budget });
    const { arrivedWhileHeld, answers } = await overlap(proxy.socketPath, upstream, gate.decided, gate.refused);
    expect(arrivedWhileHeld).toBe(0);
    expect(upstream.billed).toHaveLength(0);
    expect(answers.every(isProviderShapedError)).toBe(true);
    expect(proxy.exhaustedCalls()).toBe(1);
  });

  it('a budget for 3 answers (tokens, then dollars): exactly 3 of 20 overlapping requests go through', async () => {
    for (const limitKind of ['tokens', 'dollars'] as const) {
      const gate = handshake();
      const upstream = await upstreamFor(wire, fullAnswer, { hold: true, onArrival: () => gate.tick() });
      gate.watch(() => upstream.billed.length);
      const price = PRICES[model] as ModelPricing;
      const perRequestUsd = priceUsage(
        { inputTokens: perRequest - CAP, cachedInputTokens: 0, outputTokens: CAP },
        price,
      );
      const budget =
        limitKind === 'tokens'
          ? boundedModelBudget({ maxTokens: 4 * perRequest - 1 })
          : boundedModelBudget({ maxCostUsd: 3.5 * perRequestUsd });
      const proxy = await proxyFor({ wire, upstream: upstream.origin, budget, pricing: TABLE });
      const { arrivedWhileHeld, answers } = await overlap(proxy.socketPath, upstream, gate.decided, gate.refused);
      expect(arrivedWhileHeld).toBe(3);
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
      // The other 17 fit the budget alone, not beside the 3 in flight: a retryable "busy", not a stop.
      expect(answers.filter((answer) => answer.status === 429 && isProviderShapedError(answer))).toHaveLength(N - 3);
      await proxy.recorded(N);
      const spent = budget.spent();
      if (limitKind === 'tokens')
        expect(spent.inputTokens + spent.outputTokens).toBeLessThanOrEqual(4 * perRequest - 1);
      else expect(spent.costUsd).toBeLessThanOrEqual(3.5 * perRequestUsd);
      expect(spent.requests).toBe(3);
      expect(proxy.proxy.inFlight()).toBe(0);
    }
  });
});

/** Requests a worker could aim past the one billed endpoint it is metered on. */
const OFF_ENDPOINT: Readonly<Record<ModelWire, readonly (readonly [string, string])[]>> = {
  'anthropic-messages': [
    ['POST', '/v1/messages/batches'],
    ['POST', '/v1/messages/batches?beta=true'],
    ['GET', '/v1/messages/batches/msgbatch_01/results'],
    ['POST', '/v1/messages/count_tokens?beta=true'],
    ['POST', '/v1/messages/'],
    ['POST', '/v1/messages/../messages/batches'],
    ['POST', '/v1/messages%2fbatches'],
    ['POST', '/V1/messages'],
    ['POST', '/v1/messages?beta=true&beta=true'],
    ['POST', '/v1/messages?beta=false'],
    ['POST', '/v1/messages?Beta=true'],
    ['POST', '/v1/files'],
    ['POST', 'http://api.anthropic.com/v1/messages/batches'],
    ['PUT', '/v1/messages'],
    ['PATCH', '/v1/messages?beta=true'],
    ['DELETE', '/v1/messages'],
    ['GET', '/v1/messages'],
    ['OPTIONS', '/v1/messages'],
  ],
  'openai-responses': [
    ['POST', '/v1/batches'],
    ['POST', '/v1/files'],
    ['GET', '/v1/responses/resp_bg'],
    ['POST', '/v1/responses/resp_bg/cancel'],
    ['GET', '/v1/responses/resp_bg/input_items'],
    ['POST', '/v1/responses/input_tokens'],
    ['POST', '/v1/responses?background=true'],
    ['POST', '/v1/responses/'],
    ['POST', '/v1/responses/./'],
    ['POST', '/v1/chat/completions'],
    ['POST', '/v1%2fresponses'],
    ['POST', '/V1/RESPONSES'],
    ['POST', 'http://api.openai.com/v1/batches'],
    ['PUT', '/v1/responses'],
    ['DELETE', '/v1/responses'],
    ['GET', '/v1/responses'],
  ],
};

const BATCH_BODY = JSON.stringify({
  requests: Array.from({ length: 100 }, (_, index) => ({
    custom_id: `r${index}`,
    params: { model: 'claude-sonnet-4-5', max_tokens: 64_000, messages: [{ role: 'user', content: 'go' }] },
  })),
});

describe.each(WIRES)('redteam (%s): endpoints other than the one metered', (wire, model) => {
  const plain = (): Answer => ({ outputTokens: 3, inputTokens: 5, model });

  it('CONTROL: the prefix allowlist forwards the batch / stored-response endpoints with the real key', async () => {
    const upstream = await upstreamFor(wire, plain);
    const socket = await bareFor(wire, upstream.origin);
    const targets =
      wire === 'anthropic-messages'
        ? ['/v1/messages/batches', '/v1/messages/batches?beta=true']
        : ['/v1/responses/resp_bg/cancel', '/v1/responses/input_tokens'];
    for (const target of targets) await send(socket, target, BATCH_BODY, { headers: { host: 'localhost' } });
    expect(upstream.billed.map((request) => request.url)).toEqual(targets);
    const keyHeader = wire === 'anthropic-messages' ? 'x-api-key' : 'authorization';
    expect(upstream.billed.every((request) => String(request.headers[keyHeader]).includes(TEST_API_KEY))).toBe(true);
    if (wire === 'anthropic-messages') {
      const queued = upstream.billed.map(
        (request) => (JSON.parse(request.body) as { requests: unknown[] }).requests.length,
      );
      expect(queued).toEqual([100, 100]);
    }
  });

  it('only the exact endpoint is reachable: every other path, query and method is refused before upstream', async () => {
    const upstream = await upstreamFor(wire, plain);
    const proxy = await proxyFor({
      wire,
      upstream: upstream.origin,
      budget: boundedModelBudget({ maxTokens: 10_000_000 }),
    });
    for (const [method, target] of OFF_ENDPOINT[wire]) {
      const answer = await send(proxy.socketPath, target, BATCH_BODY, { method });
      expect(answer.status, `${method} ${target}`).toBeGreaterThanOrEqual(400);
      if (method !== 'HEAD') expect(isProviderShapedError(answer), `${method} ${target}`).toBe(true);
    }
    expect(upstream.billed).toHaveLength(0);
    // The exact endpoint itself still works (so the refusals above are not everything refused).
    const fine = await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, model, 100));
    expect(fine.status).toBe(200);
    expect(upstream.billed).toHaveLength(1);
  });
});

/** Body shapes that bill outside the answer, or that mean different things to different parsers. */
const OFF_SHAPE: Readonly<Record<ModelWire, readonly (readonly [string, string, string?])[]>> = {
  'openai-responses': [
    ['background', '{"model":"gpt-5","input":"x","background":true}'],
    ['escaped key', '{"model":"gpt-5","input":"x","backgr\\u006fund":true}'],
    ['duplicate key', '{"model":"gpt-5","input":"x","background":false,"background":true}'],
    ['background as text', '{"model":"gpt-5","input":"x","background":"true"}'],
    ['store', '{"model":"gpt-5","input":"x","store":true}'],
    ['previous response', '{"model":"gpt-5","input":"x","previous_response_id":"resp_bg"}'],
    ['conversation', '{"model":"gpt-5","input":"x","conversation":"conv_1"}'],
    ['hosted search', '{"model":"gpt-5","input":"x","tools":[{"type":"web_search"}]}'],
    ['hosted code', '{"model":"gpt-5","input":"x","tools":[{"type":"code_interpreter","container":{"type":"auto"}}]}'],
    ['remote mcp', '{"model":"gpt-5","input":"x","tools":[{"type":"mcp","server_url":"https://example.com"}]}'],
    [
      'image tool',
      '{"model":"gpt-5","input":"x","tools":[{"type":"function","name":"f"},{"type":"image_generation"}]}',
    ],
    ['negative cap', '{"model":"gpt-5","input":"x","max_output_tokens":-1}'],
    ['fractional cap', '{"model":"gpt-5","input":"x","max_output_tokens":1.5}'],
    ['cap as text', '{"model":"gpt-5","input":"x","max_output_tokens":"100"}'],
    ['no model', '{"input":"x"}'],
    ['array body', '[{"model":"gpt-5","input":"x"}]'],
    ['not json', 'model=gpt-5&input=x'],
    [
      'file upload',
      '--b\r\nContent-Disposition: form-data; name="file"\r\n\r\nx\r\n--b--',
      'multipart/form-data; boundary=b',
    ],
  ],
  'anthropic-messages': [
    [
      'server search',
      '{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[],"tools":[{"type":"web_search_20250305","name":"web_search"}]}',
    ],
    [
      'server fetch',
      '{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[],"tools":[{"name":"Bash"},{"type":"web_fetch_20250910","name":"f"}]}',
    ],
    [
      'code execution',
      '{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[],"tools":[{"type":"code_execution_20250825","name":"c"}]}',
    ],
    [
      'remote mcp',
      '{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[],"mcp_servers":[{"type":"url","url":"https://example.com"}]}',
    ],
    ['container', '{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[],"container":"cntr_1"}'],
    ['no cap', '{"model":"claude-sonnet-4-5","messages":[]}'],
    ['cap as text', '{"model":"claude-sonnet-4-5","max_tokens":"10","messages":[]}'],
    ['zero cap', '{"model":"claude-sonnet-4-5","max_tokens":0,"messages":[]}'],
    ['messages not a list', '{"model":"claude-sonnet-4-5","max_tokens":10,"messages":"hi"}'],
    ['odd model name', '{"model":"claude sonnet","max_tokens":10,"messages":[]}'],
    ['not json', '{"model":"claude-sonnet-4-5",'],
    [
      'file upload',
      '--b\r\nContent-Disposition: form-data; name="file"\r\n\r\nx\r\n--b--',
      'multipart/form-data; boundary=b',
    ],
  ],
};

describe.each(WIRES)('redteam (%s): request shapes', (wire, model) => {
  const plan = (parsed: Record<string, unknown>): Answer => ({
    outputTokens: 3,
    inputTokens: 5,
    model,
    background: parsed.background === true,
  });

  it('refuses every shape that bills outside the metered answer, before upstream', async () => {
    const upstream = await upstreamFor(wire, plan);
    const proxy = await proxyFor({
      wire,
      upstream: upstream.origin,
      budget: boundedModelBudget({ maxTokens: 10_000_000 }),
    });
    for (const [label, body, contentType] of OFF_SHAPE[wire]) {
      const answer = await send(proxy.socketPath, ENDPOINT[wire], body, {
        headers: contentType === undefined ? {} : { 'content-type': contentType },
      });
      expect(isProviderShapedError(answer), label).toBe(true);
    }
    expect(upstream.billed).toHaveLength(0);
    expect(upstream.backgroundJobs()).toBe(0);
  });

  it('a duplicated cap means one thing: the value reserved is the only one forwarded', async () => {
    const upstream = await upstreamFor(wire, plan);
    const proxy = await proxyFor({
      wire,
      upstream: upstream.origin,
      budget: boundedModelBudget({ maxTokens: 10_000_000 }),
    });
    const field = wire === 'openai-responses' ? 'max_output_tokens' : 'max_tokens';
    const base = bodyFor(wire, model, 10);
    const duplicated = `${base.slice(0, -1)},"${field}":5000}`;
    expect(occurrences(duplicated, `"${field}"`)).toBe(2);
    const answer = await send(proxy.socketPath, ENDPOINT[wire], duplicated);
    expect(answer.status).toBe(200);
    const forwarded = upstream.billed[0]?.body ?? '';
    expect(occurrences(forwarded, `"${field}"`)).toBe(1);
    expect((JSON.parse(forwarded) as Record<string, unknown>)[field]).toBe(5000);
    await proxy.recorded(1);
    expect(proxy.records[0]?.reserved?.tokens).toBe(reservedTokens(duplicated, 5000));
  });
});

describe('redteam (openai-responses): background runs and absent caps', () => {
  const wire: ModelWire = 'openai-responses';
  const model = 'gpt-5';
  const plan = (parsed: Record<string, unknown>): Answer => ({
    outputTokens: 3,
    inputTokens: 5,
    model,
    background: parsed.background === true,
  });

  it('CONTROL: a background response returns at once with no usage while the job is billed', async () => {
    const upstream = await upstreamFor(wire, plan);
    const socket = await bareFor(wire, upstream.origin);
    const answer = await send(socket, ENDPOINT[wire], bodyFor(wire, model, 64_000, { background: true }), {
      headers: { host: 'localhost' },
    });
    expect(answer.status).toBe(200);
    expect(upstream.backgroundJobs()).toBe(1);
    const meter = new UsageMeter(wire, 'application/json');
    meter.push(Buffer.from(answer.body));
    expect(meter.finish(undefined)).toMatchObject({ inputTokens: 0, outputTokens: 0 });
  });

  it('an absent OpenAI cap is inserted, so the reservation bounds the answer', async () => {
    const upstream = await upstreamFor(wire, plan);
    const proxy = await proxyFor({
      wire,
      upstream: upstream.origin,
      budget: boundedModelBudget({ maxTokens: 10_000_000 }),
      policy: { defaultMaxOutputTokens: 1234 },
    });
    expect((await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, model, undefined))).status).toBe(200);
    expect((JSON.parse(upstream.billed[0]?.body ?? '{}') as { max_output_tokens?: number }).max_output_tokens).toBe(
      1234,
    );
  });
});

/** Names a worker could pick to be priced as something cheaper, or not at all. */
const OFF_TABLE: Readonly<Record<ModelWire, readonly string[]>> = {
  'openai-responses': [
    'gpt-5-pro',
    'gpt-5-codex',
    'gpt-5-2025-08-07-pro',
    'gpt-5-20250807x',
    'GPT-5',
    'gpt-5.1',
    'gpt-4o',
    'gpt-5-mini-high',
  ],
  'anthropic-messages': [
    'claude-opus-4-1-20250805-thinking',
    'claude-sonnet-4-5-latest',
    'claude-sonnet-4-5-2025092',
    'claude-sonnet-4',
    'claude-opus-4',
    'Claude-Sonnet-4-5',
  ],
};
const SNAPSHOTS: Readonly<Record<ModelWire, string>> = {
  'openai-responses': 'gpt-5-2025-08-07',
  'anthropic-messages': 'claude-sonnet-4-5-20250929',
};

describe.each(WIRES)('redteam (%s): the worker chooses the model', (wire, model) => {
  it('CONTROL: a pass-through forwards a model no price is known for', async () => {
    const upstream = await upstreamFor(wire, () => ({ outputTokens: 3, inputTokens: 5, model: 'x' }));
    const socket = await bareFor(wire, upstream.origin);
    for (const name of OFF_TABLE[wire])
      await send(socket, ENDPOINT[wire], bodyFor(wire, name, 100), { headers: { host: 'localhost' } });
    expect(upstream.billed).toHaveLength(OFF_TABLE[wire].length);
  });

  it('refuses models the price table does not know; admits exact ids and dated snapshots', async () => {
    const upstream = await upstreamFor(wire, (parsed) => ({
      outputTokens: 3,
      inputTokens: 5,
      model: String(parsed.model),
    }));
    const proxy = await proxyFor({
      wire,
      upstream: upstream.origin,
      budget: boundedModelBudget({ maxCostUsd: 100 }),
      pricing: TABLE,
    });
    for (const name of OFF_TABLE[wire]) {
      const answer = await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, name, 100));
      expect(answer.status, name).toBe(400);
      expect(isProviderShapedError(answer), name).toBe(true);
    }
    expect(upstream.billed).toHaveLength(0);
    for (const name of [model, SNAPSHOTS[wire]]) {
      expect((await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, name, 100))).status, name).toBe(200);
    }
    expect(upstream.billed.map((request) => (JSON.parse(request.body) as { model: string }).model)).toEqual([
      model,
      SNAPSHOTS[wire],
    ]);
    await proxy.recorded(OFF_TABLE[wire].length + 2);
    const price = PRICES[model] as ModelPricing;
    const charged = proxy.records.filter((record) => record.usage !== null);
    for (const record of charged) {
      expect(record.usage?.costUsd).toBeCloseTo(
        priceUsage({ inputTokens: 5, cachedInputTokens: 0, outputTokens: 3 }, price),
        12,
      );
    }
  });

  it('an answer naming a model the table does not know is charged at the highest known price', async () => {
    const cheap = wire === 'openai-responses' ? 'gpt-5-mini' : 'claude-sonnet-4-5';
    const upstream = await upstreamFor(wire, () => ({
      outputTokens: 1000,
      inputTokens: 1000,
      model: 'something-else-entirely',
    }));
    const budget = boundedModelBudget({ maxCostUsd: 100 });
    const proxy = await proxyFor({ wire, upstream: upstream.origin, budget, pricing: TABLE });
    expect((await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, cheap, 1000))).status).toBe(200);
    await proxy.recorded(1);
    const tokens = { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 1000 };
    // Opus prices are the table's highest on both axes.
    expect(budget.spent().costUsd).toBeCloseTo(priceUsage(tokens, PRICES['claude-opus-4-1']), 12);
    expect(budget.spent().costUsd).toBeGreaterThan(priceUsage(tokens, PRICES[cheap]));
  });

  it('a cost limit without any prices refuses instead of counting $0', async () => {
    const upstream = await upstreamFor(wire, () => ({ outputTokens: 3, inputTokens: 5, model }));
    const proxy = await proxyFor({ wire, upstream: upstream.origin, budget: boundedModelBudget({ maxCostUsd: 1 }) });
    const answer = await send(proxy.socketPath, ENDPOINT[wire], bodyFor(wire, model, 100));
    expect(isProviderShapedError(answer)).toBe(true);
    expect(upstream.billed).toHaveLength(0);
  });
});
