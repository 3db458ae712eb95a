import { afterEach, describe, expect, it } from 'vitest';
import {
  buildModelStack,
  type Clock,
  decodeRegistry,
  defaultRegistry,
  type KeySource,
  type ModelRegistry,
  parseRegistry,
  probeRegistry,
  reservedInputTokens,
  worstCase,
} from '../src/index.js';
import { drain, request, textOf } from './harnesses.js';
import { httpError, type ScriptedServer, sequence, sse, startServer } from './scripted-server.js';
import { anthropicFrames, chatFrames, responsesFrames } from './wire-scripts.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
async function serve(...handlers: Parameters<typeof sequence>): Promise<ScriptedServer> {
  const server = await startServer(sequence(...handlers));
  servers.push(server);
  return server;
}

const KEYS: Record<string, string> = {
  ANTHROPIC_KEY: 'sk-ant-test-aaaaaaaaaaaa',
  OPENAI_KEY: 'sk-oai-test-bbbbbbbbbbbb',
};
const resolveKey = (name: string): KeySource | undefined => {
  const value = KEYS[name];
  return value === undefined ? undefined : { expose: () => value };
};
const instantClock: Clock = { now: () => 0, sleep: async () => undefined };

const unwrap = (result: ReturnType<typeof decodeRegistry>): ModelRegistry => {
  if (result._tag === 'Left') throw new Error(result.left.problems.join('\n'));
  return result.right;
};

describe('registry file', () => {
  it('ships a default registry that decodes, with documented example roles', () => {
    const registry = unwrap(defaultRegistry());
    expect(registry.defaultRole).toBe('implement');
    const roles = new Set(registry.providers.flatMap((provider) => provider.models.flatMap((model) => model.roles)));
    expect([...roles].sort()).toEqual(['implement', 'local', 'review', 'summarize']);
    expect(registry.providers.find((provider) => provider.id === 'anthropic')?.keyName).toBe('ANTHROPIC_API_KEY');
    expect(registry.providers.find((provider) => provider.id === 'ollama')?.keyName).toBeUndefined();
  });

  it('rejects what a codec alone would let through, listing every problem', () => {
    const result = decodeRegistry({
      version: 1,
      defaultRole: 'implement',
      providers: [
        { id: 'a', kind: 'anthropic', key: 'sk-ant-raw-key-in-the-file', models: [] },
        { id: 'a', kind: 'openai-chat', baseUrl: 'http://10.0.0.5/v1', key: 'secret://K', models: [] },
        {
          id: 'c',
          kind: 'gemini',
          baseUrl: 'https://user:pw@example.com/v1beta',
          headers: { 'X-Api-Key': 'k' },
          models: [],
        },
        {
          id: 'd',
          kind: 'ollama',
          models: [
            { id: 'm', roles: ['Implement!'], contextWindow: -5, prices: { inputPerMillion: -1, outputPerMillion: 1 } },
            { id: 'm' },
          ],
        },
      ],
    });
    expect(result._tag).toBe('Left');
    const problems = result._tag === 'Left' ? result.left.problems.join('\n') : '';
    for (const expected of [
      'key must be a handle "secret://NAME"',
      'provider "a" listed twice',
      'must use https unless it is on loopback',
      'must not embed credentials',
      'header "X-Api-Key" carries credentials',
      'role "Implement!"',
      'contextWindow must be a positive integer',
      'prices.inputPerMillion must be a non-negative number',
      'model "m" listed twice',
      'defaultRole "implement" is not the role of any model',
    ]) {
      expect(problems).toContain(expected);
    }
  });

  it('rejects unknown kinds and non-JSON through the io-ts boundary', () => {
    expect(decodeRegistry({ version: 1, providers: [{ id: 'x', kind: 'carrier-pigeon', models: [] }] })._tag).toBe(
      'Left',
    );
    expect(parseRegistry('{ nope')).toMatchObject({
      _tag: 'Left',
      left: { problems: [expect.stringContaining('not JSON')] },
    });
  });
});

function stackRegistry(anthropic: string, openai: string, local: string, budget?: number): ModelRegistry {
  return unwrap(
    decodeRegistry({
      version: 1,
      defaultRole: 'implement',
      ...(budget === undefined ? {} : { budget: { ceilingMicroDollars: budget } }),
      retry: { maxAttemptsPerCandidate: 2 },
      providers: [
        {
          id: 'anthropic',
          kind: 'anthropic',
          baseUrl: `${anthropic}/v1`,
          key: 'secret://ANTHROPIC_KEY',
          models: [
            {
              id: 'claude-x',
              tools: true,
              prices: { inputPerMillion: 3, outputPerMillion: 15, cacheReadPerMillion: 0.3 },
              roles: ['implement'],
            },
          ],
        },
        {
          id: 'openai',
          kind: 'openai-responses',
          baseUrl: `${openai}/v1`,
          key: 'secret://OPENAI_KEY',
          models: [
            {
              id: 'gpt-x',
              tools: true,
              prices: { inputPerMillion: 1.25, outputPerMillion: 10 },
              roles: ['implement', 'review'],
            },
          ],
        },
        { id: 'ollama', kind: 'ollama', baseUrl: `${local}/v1`, models: [{ id: 'qwen-local', roles: ['local'] }] },
      ],
    }),
  );
}

describe('buildModelStack', () => {
  it('routes a role through retries and fallback, each provider with its own key, degrading to local last', async () => {
    const anthropic = await serve(httpError(500, { error: { message: 'down' } }));
    const openai = await serve(httpError(401, { error: { message: 'bad key' } }));
    const local = await serve(sse(chatFrames({ text: ['local ok'], calls: [] }, { ollama: true })));
    const stack = buildModelStack(stackRegistry(anthropic.origin, openai.origin, local.origin), {
      resolveKey,
      clock: instantClock,
    });
    const events = await drain(stack.router.stream(request({ route: { role: 'implement' } })));
    expect(textOf(events)).toBe('local ok');
    expect(anthropic.requests).toHaveLength(2);
    expect(anthropic.requests[0]!.headers['x-api-key']).toBe(KEYS.ANTHROPIC_KEY);
    expect(openai.requests[0]!.headers.authorization).toBe(`Bearer ${KEYS.OPENAI_KEY}`);
    expect(local.requests[0]!.headers.authorization).toBeUndefined();
    expect((local.requests[0]!.json as { model: string }).model).toBe('qwen-local');
    expect(
      events.filter((event) => event.type === 'retry').map((event) => event.type === 'retry' && event.to.provider),
    ).toEqual(['anthropic', 'openai', 'ollama']);
  });

  it('meters remote spend against the registry ceiling, then degrades to local', async () => {
    const anthropic = await serve(sse(anthropicFrames({ text: ['paid'], calls: [] })));
    const openai = await serve(sse(responsesFrames({ text: ['unused'], calls: [] })));
    const local = await serve(sse(chatFrames({ text: ['free'], calls: [] }, { ollama: true })));
    // Room for one request's worst case (at the chain's dearest prices), not two.
    const worst = worstCase(request(), reservedInputTokens(request()), { inputPerMillion: 3, outputPerMillion: 15 });
    const ceiling = worst.costMicroDollars + 1;
    const stack = buildModelStack(stackRegistry(anthropic.origin, openai.origin, local.origin, ceiling), {
      resolveKey,
      clock: instantClock,
    });
    expect(textOf(await drain(stack.router.stream(request())))).toBe('paid');
    expect(stack.meter.spentMicroDollars).toBe(1_650);
    const second = await drain(stack.router.stream(request()));
    expect(textOf(second)).toBe('free');
    expect(second[0]).toMatchObject({ type: 'retry', cause: { _tag: 'budget_exhausted' } });
  });

  it('reports a missing secret as an auth error for that provider only', async () => {
    const anthropic = await serve(sse(anthropicFrames({ text: ['never'], calls: [] })));
    const openai = await serve(sse(responsesFrames({ text: ['openai answered'], calls: [] })));
    const local = await serve(sse(chatFrames({ text: ['local'], calls: [] })));
    const stack = buildModelStack(stackRegistry(anthropic.origin, openai.origin, local.origin), {
      resolveKey: (name) => (name === 'OPENAI_KEY' ? resolveKey(name) : undefined),
      clock: instantClock,
    });
    const events = await drain(stack.router.stream(request()));
    expect(anthropic.requests).toHaveLength(0);
    expect(events[0]).toMatchObject({ type: 'retry', cause: { _tag: 'auth', provider: 'anthropic' } });
    expect(textOf(events)).toBe('openai answered');
  });
});

describe('probeRegistry', () => {
  it('lists each endpoint’s models (following pages) and marks which configured models it serves', async () => {
    const anthropic = await serve(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ data: [{ id: 'claude-y', type: 'model' }], has_more: true, last_id: 'claude-y' }),
        );
      },
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ data: [{ id: 'claude-x', type: 'model' }], has_more: false, last_id: 'claude-x' }),
        );
      },
    );
    const openai = await serve(
      httpError(401, { error: { message: `Incorrect API key provided: ${KEYS.OPENAI_KEY}` } }),
    );
    const local = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ object: 'list', data: [{ id: 'qwen-local', object: 'model', owned_by: 'library' }] }),
      );
    });
    const registry = stackRegistry(anthropic.origin, openai.origin, local.origin);
    const reports = await probeRegistry(registry, resolveKey);

    expect(reports[0]).toMatchObject({
      provider: 'anthropic',
      ok: true,
      models: [{ id: 'claude-y' }, { id: 'claude-x' }],
      configured: [{ id: 'claude-x', listed: true }],
    });
    expect(anthropic.requests.map((seen) => seen.url)).toEqual([
      '/v1/models?limit=1000',
      '/v1/models?limit=1000&after_id=claude-y',
    ]);
    expect(anthropic.requests[0]!.headers['x-api-key']).toBe(KEYS.ANTHROPIC_KEY);
    expect(reports[1]).toMatchObject({
      provider: 'openai',
      ok: false,
      error: { _tag: 'auth' },
      configured: [{ id: 'gpt-x', listed: undefined }],
    });
    expect(JSON.stringify(reports)).not.toContain(KEYS.OPENAI_KEY);
    expect(reports[2]).toMatchObject({
      provider: 'ollama',
      ok: true,
      configured: [{ id: 'qwen-local', listed: true }],
    });
  });

  it('reads Gemini’s model list format and reports a missing key without any request', async () => {
    const gemini = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          models: [{ name: 'models/gemini-2.5-flash', inputTokenLimit: 1048576, outputTokenLimit: 65536 }],
        }),
      );
    });
    const registry = unwrap(
      decodeRegistry({
        version: 1,
        providers: [
          {
            id: 'gemini',
            kind: 'gemini',
            baseUrl: `${gemini.origin}/v1beta`,
            key: 'secret://GEMINI_KEY',
            models: [{ id: 'gemini-2.5-flash', roles: ['summarize'] }],
          },
        ],
      }),
    );
    const missing = await probeRegistry(registry, () => undefined);
    expect(missing[0]).toMatchObject({
      ok: false,
      error: { _tag: 'auth', message: 'no API key: secret "GEMINI_KEY" is not available' },
    });
    expect(gemini.requests).toHaveLength(0);
    const found = await probeRegistry(registry, () => ({ expose: () => 'gemini-test-key-123' }));
    expect(found[0]).toMatchObject({
      ok: true,
      models: [{ id: 'gemini-2.5-flash', contextWindow: 1048576, maxOutputTokens: 65536 }],
      configured: [{ id: 'gemini-2.5-flash', listed: true }],
    });
    expect(gemini.requests[0]!.url).toBe('/v1beta/models?pageSize=1000');
    expect(gemini.requests[0]!.headers['x-goog-api-key']).toBe('gemini-test-key-123');
  });
});
