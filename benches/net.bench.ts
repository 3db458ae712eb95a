/**
 * @crustcore/net overheads (issue: model-provider pack).
 * 1. Latency to the first text delta: from the server's first body byte to
 *    our first `text_delta`, against a raw `fetch` reader seeing the same
 *    bytes, per wire dialect, over real loopback HTTP (target: < 5 ms extra).
 * 2. Per-event parsing cost: our SSE parser, parser + protocol decoder, and
 *    the whole provider stack fed in memory, against raw SSE line splitting.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  anthropicDialect,
  createAnthropicProvider,
  createGeminiProvider,
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  type ModelProvider,
  type ModelRequest,
  openAIChatDialect,
  SseParser,
} from '@crustcore/net';
import { ratio, report, runCases } from './harness.js';

const KEY = { expose: () => 'sk-bench-0123456789abcdef' };
const REQUEST: ModelRequest = {
  model: 'bench-model',
  system: 'You are a benchmark.',
  messages: [{ role: 'user', content: 'Say something.' }],
  tools: [],
  maxTokens: 256,
};

// ─── wire frames ──────────────────────────────────────────────────────────

const frame = (event: string | undefined, data: unknown): string =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

interface Script {
  /** Everything up to and including the first text delta: written in one go at t0. */
  readonly head: string;
  readonly tail: string;
}

function anthropicScript(deltas: number): Script {
  const head =
    frame('message_start', { type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } }) +
    frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
    frame('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'Hello' },
    });
  let tail = '';
  for (let index = 1; index < deltas; index += 1) {
    tail += frame('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: ` word${index}` },
    });
  }
  tail +=
    frame('content_block_stop', { type: 'content_block_stop', index: 0 }) +
    frame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn' },
      usage: { output_tokens: deltas },
    }) +
    frame('message_stop', { type: 'message_stop' });
  return { head, tail };
}

function chatScript(deltas: number): Script {
  const chunk = (delta: object, finish: string | null = null) =>
    frame(undefined, {
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  const head = chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hello' });
  let tail = '';
  for (let index = 1; index < deltas; index += 1) tail += chunk({ content: ` word${index}` });
  tail +=
    chunk({}, 'stop') +
    frame(undefined, { choices: [], usage: { prompt_tokens: 10, completion_tokens: deltas } }) +
    frame(undefined, '[DONE]');
  return { head, tail };
}

function responsesScript(deltas: number): Script {
  const event = (type: string, body: object) => frame(type, { type, ...body });
  const head =
    event('response.created', { response: { id: 'r', status: 'in_progress' } }) +
    event('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'm' } }) +
    event('response.output_text.delta', { item_id: 'm', output_index: 0, content_index: 0, delta: 'Hello' });
  let tail = '';
  for (let index = 1; index < deltas; index += 1) {
    tail += event('response.output_text.delta', {
      item_id: 'm',
      output_index: 0,
      content_index: 0,
      delta: ` word${index}`,
    });
  }
  tail += event('response.completed', {
    response: { status: 'completed', usage: { input_tokens: 10, output_tokens: deltas } },
  });
  return { head, tail };
}

function geminiScript(deltas: number): Script {
  const chunk = (text: string, finish?: string) =>
    frame(undefined, {
      candidates: [
        { content: { role: 'model', parts: [{ text }] }, ...(finish === undefined ? {} : { finishReason: finish }) },
      ],
    });
  const head = chunk('Hello');
  let tail = '';
  for (let index = 1; index < deltas; index += 1) tail += chunk(` word${index}`);
  tail += chunk('.', 'STOP');
  return { head, tail };
}

// ─── 1. first-text-delta latency over loopback ────────────────────────────

interface Dialect {
  readonly name: string;
  readonly script: Script;
  readonly path: string;
  readonly make: (origin: string) => ModelProvider;
}

const LATENCY_ITERATIONS = 120;
let firstByteAt = 0;
let currentScript: Script = anthropicScript(20);

async function serveScript(response: ServerResponse): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.flushHeaders();
  // Let the client finish with the headers, so t0 marks only the body's first byte.
  await new Promise((resolve) => setTimeout(resolve, 3));
  firstByteAt = performance.now();
  response.write(currentScript.head);
  await new Promise((resolve) => setImmediate(resolve));
  response.end(currentScript.tail);
}

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? Number.NaN;
};

async function rawFirstChunk(url: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(REQUEST),
  });
  const reader = response.body!.getReader();
  await reader.read();
  const seenAt = performance.now();
  for (;;) if ((await reader.read()).done) break;
  return seenAt - firstByteAt;
}

async function oursFirstText(provider: ModelProvider): Promise<number> {
  let seenAt = 0;
  for await (const event of provider.stream(REQUEST)) {
    if (event.type === 'text_delta' && seenAt === 0) seenAt = performance.now();
  }
  return seenAt - firstByteAt;
}

async function latency(): Promise<void> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => void serveScript(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dialects: Dialect[] = [
    {
      name: 'anthropic',
      script: anthropicScript(20),
      path: '/v1/messages',
      make: (o) => createAnthropicProvider({ id: 'a', baseUrl: `${o}/v1`, key: KEY }),
    },
    {
      name: 'openai-chat',
      script: chatScript(20),
      path: '/v1/chat/completions',
      make: (o) => createOpenAIChatProvider({ id: 'c', baseUrl: `${o}/v1`, key: KEY }),
    },
    {
      name: 'openai-responses',
      script: responsesScript(20),
      path: '/v1/responses',
      make: (o) => createOpenAIResponsesProvider({ id: 'r', baseUrl: `${o}/v1`, key: KEY }),
    },
    {
      name: 'gemini',
      script: geminiScript(20),
      path: '/v1beta/models/m:streamGenerateContent?alt=sse',
      make: (o) => createGeminiProvider({ id: 'g', baseUrl: `${o}/v1beta`, key: KEY }),
    },
  ];
  const rows: Record<string, string>[] = [];
  const extras: [string, number][] = [];
  for (const dialect of dialects) {
    currentScript = dialect.script;
    const provider = dialect.make(origin);
    const raw: number[] = [];
    const ours: number[] = [];
    for (let warm = 0; warm < 10; warm += 1) {
      await rawFirstChunk(`${origin}${dialect.path}`);
      await oursFirstText(provider);
    }
    for (let index = 0; index < LATENCY_ITERATIONS; index += 1) {
      raw.push(await rawFirstChunk(`${origin}${dialect.path}`));
      ours.push(await oursFirstText(provider));
    }
    const extra = percentile(ours, 0.5) - percentile(raw, 0.5);
    extras.push([dialect.name, extra]);
    rows.push({
      dialect: dialect.name,
      'raw fetch p50 (ms)': percentile(raw, 0.5).toFixed(3),
      'raw fetch p95 (ms)': percentile(raw, 0.95).toFixed(3),
      'ours p50 (ms)': percentile(ours, 0.5).toFixed(3),
      'ours p95 (ms)': percentile(ours, 0.95).toFixed(3),
      'extra p50 (ms)': extra.toFixed(3),
    });
  }
  server.close();
  console.log('\n## first text delta after the server’s first body byte (loopback, same process)');
  console.table(rows);
  for (const [name, extra] of extras)
    report(`extra latency to first text_delta, ${name}`, `${extra.toFixed(3)} ms over raw fetch`, '< 5 ms');
}

// ─── 2. per-event parsing cost ────────────────────────────────────────────

const EVENTS = 2_000;
const encoder = new TextEncoder();
const chunksOf = (text: string): Uint8Array[] => {
  const bytes = encoder.encode(text);
  const out: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += 1024) out.push(bytes.subarray(offset, offset + 1024));
  return out;
};

async function parsing(): Promise<void> {
  const anthropic = anthropicScript(EVENTS);
  const anthropicChunks = chunksOf(anthropic.head + anthropic.tail);
  const chat = chatScript(EVENTS);
  const chatChunks = chunksOf(chat.head + chat.tail);
  let sink = 0;

  const rawSplit = (chunks: readonly Uint8Array[]): void => {
    const decoder = new TextDecoder();
    let pending = '';
    for (const chunk of chunks) {
      const lines = (pending + decoder.decode(chunk, { stream: true })).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('data:')) sink += 1;
    }
  };
  const rawSplitAndParse = (chunks: readonly Uint8Array[]): void => {
    const decoder = new TextDecoder();
    let pending = '';
    for (const chunk of chunks) {
      const lines = (pending + decoder.decode(chunk, { stream: true })).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('data:')) sink += JSON.parse(line.slice(5)) === null ? 0 : 1;
    }
  };
  const parserOnly = (chunks: readonly Uint8Array[]): void => {
    const parser = new SseParser();
    for (const chunk of chunks) sink += parser.push(chunk).length;
  };
  const decoded = (
    chunks: readonly Uint8Array[],
    dialect: typeof anthropicDialect | (() => ReturnType<typeof openAIChatDialect>),
  ): void => {
    const parser = new SseParser();
    const decoder = dialect().createDecoder({ provider: 'p', model: 'm', prices: undefined });
    for (const chunk of chunks) for (const message of parser.push(chunk)) sink += decoder.push(message).length;
  };
  const chatDialect = () =>
    openAIChatDialect({ maxTokensField: 'max_tokens', reasoning: 'none', promptCacheKey: false });
  // The whole provider (transport, guard, key redaction) fed from memory instead of a socket.
  const inMemoryFetch = (chunks: readonly Uint8Array[]) => async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream' } },
    );
  const stack = createAnthropicProvider({
    id: 'a',
    baseUrl: 'http://bench.invalid/v1',
    key: KEY,
    fetch: inMemoryFetch(anthropicChunks),
  });

  const rows = await runCases(`per-event cost, ${EVENTS} text deltas per stream`, [
    { name: 'raw SSE line split (baseline)', fn: () => rawSplit(anthropicChunks), itemsPerCall: EVENTS },
    { name: 'SseParser', fn: () => parserOnly(anthropicChunks), itemsPerCall: EVENTS },
    {
      name: 'raw line split + JSON.parse (floor for decoding)',
      fn: () => rawSplitAndParse(anthropicChunks),
      itemsPerCall: EVENTS,
    },
    {
      name: 'SseParser + anthropic decoder',
      fn: () => decoded(anthropicChunks, anthropicDialect),
      itemsPerCall: EVENTS,
    },
    { name: 'SseParser + chat decoder', fn: () => decoded(chatChunks, chatDialect), itemsPerCall: EVENTS },
    {
      name: 'anthropic provider, in-memory body',
      fn: async () => {
        for await (const event of stack.stream(REQUEST)) if (event.type === 'text_delta') sink += 1;
      },
      itemsPerCall: EVENTS,
    },
  ]);
  const [baseline, parser, jsonFloor, anthropicDecoder, chatDecoder, provider] = rows as [
    (typeof rows)[number],
    (typeof rows)[number],
    (typeof rows)[number],
    (typeof rows)[number],
    (typeof rows)[number],
    (typeof rows)[number],
  ];
  ratio('SseParser / raw line split', parser, baseline);
  ratio('parser + anthropic decoder / raw line split', anthropicDecoder, baseline);
  ratio('parser + anthropic decoder / raw split + JSON.parse', anthropicDecoder, jsonFloor);
  ratio('parser + chat decoder / raw line split', chatDecoder, baseline);
  ratio('whole anthropic provider / raw line split', provider, baseline);
  if (sink < 0) console.log(sink);
}

await latency();
await parsing();
