/**
 * A provider switch in the middle of a session: turn 1 runs on Anthropic and
 * ends in a tool call; the agent appends the tool result; turn 2 runs on
 * OpenAI (and, for good measure, on Chat Completions and Gemini) with the
 * same neutral history. Each second server must receive the call and its
 * result in its own protocol, correctly paired.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  assembleTurn,
  createAnthropicProvider,
  createGeminiProvider,
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  type Message,
  type ModelProvider,
} from '../src/index.js';
import { API_KEY, drain, request, textOf } from './harnesses.js';
import { type ScriptedServer, sse, startServer } from './scripted-server.js';
import { anthropicFrames, chatFrames, geminiFrames, responsesFrames } from './wire-scripts.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const key = { expose: () => API_KEY };

async function turnOneOnAnthropic(): Promise<Message[]> {
  const anthropic = await startServer(
    sse(
      anthropicFrames({
        thinking: 'Need the file.',
        text: ['Let me look.'],
        calls: [{ id: 'toolu_01A', name: 'read_file', argumentsText: '{"path":"src/a.ts"}' }],
      }),
    ),
  );
  servers.push(anthropic);
  const provider = createAnthropicProvider({ id: 'anthropic', baseUrl: `${anthropic.origin}/v1`, key });
  const history: Message[] = [{ role: 'user', content: 'What does src/a.ts export?' }];
  const turn = assembleTurn(await drain(provider.stream(request({ model: 'claude-test', messages: history }))));
  expect(turn.terminal).toMatchObject({ type: 'done', stopReason: 'tool_use' });
  expect(turn.message.content).toEqual([
    { type: 'thinking', text: 'Need the file.', signature: 'sig-anthropic-1' },
    { type: 'text', text: 'Let me look.' },
    { type: 'tool_call', id: 'toolu_01A', name: 'read_file', arguments: { path: 'src/a.ts' } },
  ]);
  return [
    ...history,
    turn.message,
    { role: 'tool', toolCallId: 'toolu_01A', toolName: 'read_file', content: 'export const a = 1;' },
  ];
}

async function turnTwo(provider: ModelProvider, history: Message[]): Promise<string> {
  const events = await drain(provider.stream(request({ model: 'second-model', messages: history })));
  expect(events[events.length - 1]).toMatchObject({ type: 'done', stopReason: 'end_turn' });
  return textOf(events);
}

const ANSWER = { text: ['It exports ', '`a`.'], calls: [] };

describe('switching provider between turns', () => {
  it('Anthropic → OpenAI Responses: function_call and function_call_output carry the same call id', async () => {
    const history = await turnOneOnAnthropic();
    const openai = await startServer(sse(responsesFrames(ANSWER)));
    servers.push(openai);
    const text = await turnTwo(
      createOpenAIResponsesProvider({ id: 'openai', baseUrl: `${openai.origin}/v1`, key }),
      history,
    );
    expect(text).toBe('It exports `a`.');
    const body = openai.requests[0]!.json as { input: unknown[]; instructions: string; store: boolean };
    expect(body.store).toBe(false);
    expect(body.instructions).toBe('You are a careful coding agent.');
    expect(body.input).toEqual([
      { role: 'user', content: 'What does src/a.ts export?' },
      { role: 'assistant', content: 'Let me look.' },
      { type: 'function_call', call_id: 'toolu_01A', name: 'read_file', arguments: '{"path":"src/a.ts"}' },
      { type: 'function_call_output', call_id: 'toolu_01A', output: 'export const a = 1;' },
    ]);
  });

  it('Anthropic → OpenAI Chat Completions: assistant tool_calls then a tool message', async () => {
    const history = await turnOneOnAnthropic();
    const openai = await startServer(sse(chatFrames(ANSWER)));
    servers.push(openai);
    const text = await turnTwo(
      createOpenAIChatProvider({ id: 'openai-chat', baseUrl: `${openai.origin}/v1`, key }),
      history,
    );
    expect(text).toBe('It exports `a`.');
    const body = openai.requests[0]!.json as { messages: unknown[] };
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a careful coding agent.' },
      { role: 'user', content: 'What does src/a.ts export?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'toolu_01A', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/a.ts"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01A', content: 'export const a = 1;' },
    ]);
  });

  it('Anthropic → Gemini: functionCall then functionResponse by name, with the Gemini 3 signature placeholder', async () => {
    const history = await turnOneOnAnthropic();
    const gemini = await startServer(sse(geminiFrames(ANSWER)));
    servers.push(gemini);
    const text = await turnTwo(
      createGeminiProvider({ id: 'gemini', baseUrl: `${gemini.origin}/v1beta`, key }),
      history,
    );
    expect(text).toBe('It exports `a`.');
    const body = gemini.requests[0]!.json as { contents: unknown[] };
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'What does src/a.ts export?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me look.' },
          {
            functionCall: { name: 'read_file', args: { path: 'src/a.ts' } },
            thoughtSignature: 'skip_thought_signature_validator',
          },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'read_file', response: { output: 'export const a = 1;' } } }],
      },
    ]);
  });

  it('OpenAI → Anthropic: foreign call ids are made Anthropic-safe on both tool_use and tool_result', async () => {
    const openai = await startServer(
      sse(chatFrames({ text: [], calls: [{ id: 'call:42/x', name: 'read_file', argumentsText: '{"path":"b.ts"}' }] })),
    );
    servers.push(openai);
    const first = assembleTurn(
      await drain(createOpenAIChatProvider({ id: 'openai', baseUrl: `${openai.origin}/v1`, key }).stream(request())),
    );
    const history: Message[] = [
      { role: 'user', content: 'Read b.ts' },
      first.message,
      { role: 'tool', toolCallId: 'call:42/x', toolName: 'read_file', content: 'no such file', isError: true },
    ];
    const anthropic = await startServer(sse(anthropicFrames(ANSWER)));
    servers.push(anthropic);
    await turnTwo(createAnthropicProvider({ id: 'anthropic', baseUrl: `${anthropic.origin}/v1`, key }), history);
    const body = anthropic.requests[0]!.json as { messages: { role: string; content: { type: string }[] }[] };
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_42_x', name: 'read_file', input: { path: 'b.ts' } }],
    });
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'call_42_x',
          content: 'no such file',
          is_error: true,
          cache_control: { type: 'ephemeral' },
        },
      ],
    });
  });
});
