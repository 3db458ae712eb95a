/**
 * What each dialect puts on the wire: bodies and headers as the scripted
 * servers receive them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAnthropicProvider,
  createGeminiProvider,
  createOllamaProvider,
  createOpenAIChatProvider,
  createOpenAICompatibleProvider,
  createOpenAIResponsesProvider,
  createOpenRouterProvider,
  type Message,
} from '../src/index.js';
import { API_KEY, drain, request } from './harnesses.js';
import { type ScriptedServer, sse, startServer } from './scripted-server.js';
import { anthropicFrames, chatFrames, geminiFrames, responsesFrames } from './wire-scripts.js';

const key = { expose: () => API_KEY };
const ANSWER = { text: ['ok'], calls: [] };
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const HISTORY: Message[] = [
  { role: 'user', content: 'first question' },
  { role: 'assistant', content: [{ type: 'text', text: 'first answer' }] },
  { role: 'user', content: 'second question' },
];

describe('anthropic request', () => {
  it('puts cache_control on the system prompt and the last stable message, and sends thinking as a budget', async () => {
    server = await startServer(sse(anthropicFrames(ANSWER)));
    const provider = createAnthropicProvider({
      id: 'a',
      baseUrl: `${server.origin}/v1`,
      key,
      headers: { 'x-trace': 't1' },
    });
    await drain(
      provider.stream(
        request({
          messages: HISTORY,
          thinking: 'medium',
          maxTokens: 16_000,
          temperature: 0.2,
          cache: { lastStableMessageIndex: 1 },
        }),
      ),
    );
    const seen = server.requests[0]!;
    expect(seen.headers['anthropic-version']).toBe('2023-06-01');
    expect(seen.headers['x-trace']).toBe('t1');
    expect(seen.json).toMatchObject({
      model: 'model-under-test',
      max_tokens: 16_000,
      stream: true,
      system: [{ type: 'text', text: 'You are a careful coding agent.', cache_control: { type: 'ephemeral' } }],
      thinking: { type: 'enabled', budget_tokens: 8_192 },
      tools: [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', required: ['path'] } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'first answer', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: [{ type: 'text', text: 'second question' }] },
      ],
    });
    expect((seen.json as Record<string, unknown>).temperature).toBeUndefined();
  });

  it('defaults the message breakpoint to the last message, and can turn both off', async () => {
    server = await startServer(sse(anthropicFrames(ANSWER)));
    const provider = createAnthropicProvider({ id: 'a', baseUrl: `${server.origin}/v1`, key });
    await drain(provider.stream(request({ messages: HISTORY })));
    await drain(provider.stream(request({ messages: HISTORY, cache: { system: false, lastStableMessageIndex: -1 } })));
    const [withCache, without] = server.requests.map((seen) => JSON.stringify(seen.json));
    expect(JSON.parse(withCache!).messages[2].content[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(without).not.toContain('cache_control');
  });

  it('replays signed thinking and drops unsigned thinking', async () => {
    server = await startServer(sse(anthropicFrames(ANSWER)));
    const provider = createAnthropicProvider({ id: 'a', baseUrl: `${server.origin}/v1`, key });
    const messages: Message[] = [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'signed', signature: 's1' },
          { type: 'thinking', text: 'from another vendor' },
          { type: 'text', text: 'a' },
        ],
      },
      { role: 'user', content: 'q2' },
    ];
    await drain(provider.stream(request({ messages })));
    const body = server.requests[0]!.json as { messages: { content: unknown[] }[] };
    expect(body.messages[1]!.content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 's1' },
      { type: 'text', text: 'a' },
    ]);
  });
});

describe('openai requests', () => {
  it('Responses: store=false, instructions, function tools, reasoning effort, prompt_cache_key', async () => {
    server = await startServer(sse(responsesFrames(ANSWER)));
    const provider = createOpenAIResponsesProvider({ id: 'o', baseUrl: `${server.origin}/v1`, key });
    await drain(provider.stream(request({ thinking: 'high', temperature: 0, cache: { key: 'session-7' } })));
    expect(server.requests[0]!.json).toMatchObject({
      model: 'model-under-test',
      stream: true,
      store: false,
      instructions: 'You are a careful coding agent.',
      max_output_tokens: 1024,
      temperature: 0,
      reasoning: { effort: 'high', summary: 'auto' },
      prompt_cache_key: 'session-7',
      tools: [{ type: 'function', name: 'read_file', strict: false, parameters: { type: 'object' } }],
      input: [{ role: 'user', content: 'Read src/a.ts please.' }],
    });
  });

  it('Chat: max_completion_tokens, stream usage, reasoning_effort; compatible servers get max_tokens and no reasoning field', async () => {
    server = await startServer(sse(chatFrames(ANSWER)));
    await drain(
      createOpenAIChatProvider({ id: 'o', baseUrl: `${server.origin}/v1`, key }).stream(request({ thinking: 'low' })),
    );
    await drain(
      createOpenAICompatibleProvider({ id: 'vllm', baseUrl: `${server.origin}/v1` }).stream(
        request({ thinking: 'low' }),
      ),
    );
    await drain(createOllamaProvider({ id: 'ollama', baseUrl: `${server.origin}/v1` }).stream(request()));
    const [openai, compatible, ollama] = server.requests.map((seen) => seen.json as Record<string, unknown>);
    expect(openai).toMatchObject({
      max_completion_tokens: 1024,
      stream_options: { include_usage: true },
      reasoning_effort: 'low',
    });
    expect(openai!.max_tokens).toBeUndefined();
    expect(compatible).toMatchObject({ max_tokens: 1024 });
    expect(compatible!.reasoning_effort).toBeUndefined();
    expect(compatible!.max_completion_tokens).toBeUndefined();
    expect(ollama).toMatchObject({ model: 'model-under-test', max_tokens: 1024 });
    expect(server.requests[1]!.headers.authorization).toBeUndefined();
  });

  it('OpenRouter: attribution headers and reasoning object; configured headers cannot override the key', async () => {
    server = await startServer(sse(chatFrames(ANSWER, { reportedCost: 0.00042 })));
    const provider = createOpenRouterProvider({
      id: 'or',
      baseUrl: `${server.origin}/v1`,
      key,
      appName: 'CrustCore',
      appUrl: 'https://crustcore.test',
      headers: { Authorization: 'Bearer stolen', 'X-Custom': 'yes' },
    });
    const events = await drain(provider.stream(request({ thinking: 'medium' })));
    const seen = server.requests[0]!;
    expect(seen.headers['http-referer']).toBe('https://crustcore.test');
    expect(seen.headers['x-title']).toBe('CrustCore');
    expect(seen.headers['x-custom']).toBe('yes');
    expect(seen.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen.json).toMatchObject({ max_tokens: 1024, reasoning: { effort: 'medium' } });
    // No registry price: OpenRouter's own reported cost (USD 0.00042) is used.
    expect(events.find((event) => event.type === 'usage')).toMatchObject({ costMicroDollars: 420, priced: true });
  });
});

describe('gemini request', () => {
  it('systemInstruction, functionDeclarations with JSON schema, thinking budget, key only in the header', async () => {
    server = await startServer(sse(geminiFrames(ANSWER)));
    const provider = createGeminiProvider({ id: 'g', baseUrl: `${server.origin}/v1beta`, key });
    await drain(provider.stream(request({ model: 'gemini-2.5-flash', thinking: 'low', temperature: 0.5 })));
    const seen = server.requests[0]!;
    expect(seen.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(seen.url).not.toContain(API_KEY);
    expect(seen.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Read src/a.ts please.' }] }],
      systemInstruction: { parts: [{ text: 'You are a careful coding agent.' }] },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'read_file',
              description: 'Read a file',
              parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
            },
          ],
        },
      ],
      generationConfig: {
        maxOutputTokens: 1024,
        temperature: 0.5,
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
      },
    });
  });

  it('echoes a Gemini call signature back, and adds no placeholder for Gemini 2.x', async () => {
    server = await startServer(sse(geminiFrames(ANSWER)));
    const provider = createGeminiProvider({ id: 'g', baseUrl: `${server.origin}/v1beta`, key });
    const messages: Message[] = [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'x1', name: 'read_file', arguments: { path: 'a' }, signature: 'sig-real' },
          { type: 'tool_call', id: 'x2', name: 'read_file', arguments: { path: 'b' } },
        ],
      },
      { role: 'tool', toolCallId: 'x1', toolName: 'read_file', content: 'A' },
      { role: 'tool', toolCallId: 'x2', toolName: 'read_file', content: 'B', isError: true },
    ];
    await drain(provider.stream(request({ model: 'gemini-3-pro', messages })));
    await drain(
      provider.stream(
        request({
          model: 'gemini-2.5-pro',
          messages: [messages[0]!, { role: 'assistant', content: [messages[1]!.content[1]!] as never }],
        }),
      ),
    );
    const first = server.requests[0]!.json as { contents: { parts: Record<string, unknown>[] }[] };
    expect(first.contents[1]!.parts).toEqual([
      { functionCall: { name: 'read_file', args: { path: 'a' } }, thoughtSignature: 'sig-real' },
      { functionCall: { name: 'read_file', args: { path: 'b' } } },
    ]);
    expect(first.contents[2]!.parts).toEqual([
      { functionResponse: { name: 'read_file', response: { output: 'A' } } },
      { functionResponse: { name: 'read_file', response: { error: 'B' } } },
    ]);
    const second = server.requests[1]!.json as { contents: { parts: Record<string, unknown>[] }[] };
    expect(second.contents[1]!.parts[0]!.thoughtSignature).toBeUndefined();
  });
});
