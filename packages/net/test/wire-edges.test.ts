/**
 * Protocol corners: failures reported inside a 200 stream, vendor-specific
 * terminal states, garbage bytes, and oversize events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAnthropicProvider,
  createGeminiProvider,
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  createOpenRouterProvider,
  type ModelProvider,
  type StreamEvent,
} from '../src/index.js';
import { API_KEY, drain, last, request, textOf } from './harnesses.js';
import { type Frame, type ScriptedServer, sse, startServer } from './scripted-server.js';

const key = { expose: () => API_KEY };
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(frames: Frame[], make: (origin: string) => ModelProvider): Promise<StreamEvent[]> {
  server = await startServer(sse(frames));
  return drain(make(server.origin).stream(request()));
}

const anthropic = (origin: string) => createAnthropicProvider({ id: 'a', baseUrl: `${origin}/v1`, key });
const responses = (origin: string) => createOpenAIResponsesProvider({ id: 'o', baseUrl: `${origin}/v1`, key });
const chat = (origin: string) => createOpenAIChatProvider({ id: 'c', baseUrl: `${origin}/v1`, key });
const gemini = (origin: string) => createGeminiProvider({ id: 'g', baseUrl: `${origin}/v1beta`, key });
const openrouter = (origin: string) => createOpenRouterProvider({ id: 'or', baseUrl: `${origin}/v1`, key });

describe('anthropic', () => {
  it('maps an overloaded error event mid-stream to server_error 529, after the text already sent', async () => {
    const events = await run(
      [
        {
          event: 'message_start',
          data: { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 0 } } },
        },
        {
          event: 'content_block_start',
          data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        },
        {
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
        },
        { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      ],
      anthropic,
    );
    expect(textOf(events)).toBe('Hi');
    expect(last(events)).toMatchObject({
      type: 'error',
      error: { _tag: 'server_error', status: 529, message: 'overloaded_error: Overloaded' },
    });
  });

  it('treats a tool_use with no input deltas as its start input, and max_tokens as the stop reason', async () => {
    const events = await run(
      [
        {
          event: 'message_start',
          data: { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 0 } } },
        },
        {
          event: 'content_block_start',
          data: {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'tool_use', id: 'toolu_9', name: 'list', input: {} },
          },
        },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        {
          event: 'message_delta',
          data: { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 9 } },
        },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
      anthropic,
    );
    expect(events.find((event) => event.type === 'tool_call')).toEqual({
      type: 'tool_call',
      id: 'toolu_9',
      name: 'list',
      arguments: {},
    });
    expect(events.find((event) => event.type === 'usage')).toMatchObject({
      inputTokens: 5,
      outputTokens: 9,
      priced: false,
      costMicroDollars: 0,
    });
    expect(last(events)).toEqual({ type: 'done', stopReason: 'max_tokens', rawStopReason: 'max_tokens' });
  });

  it('reports a non-JSON data line as a protocol error', async () => {
    const events = await run([{ event: 'message_start', data: 'this is not json' }], anthropic);
    expect(events).toEqual([{ type: 'error', error: expect.objectContaining({ _tag: 'protocol', provider: 'a' }) }]);
  });
});

describe('openai responses', () => {
  it('maps response.incomplete to done with max_tokens, and response.failed to a typed error', async () => {
    const incomplete = await run(
      [
        {
          event: 'response.output_text.delta',
          data: { type: 'response.output_text.delta', output_index: 0, delta: 'par' },
        },
        {
          event: 'response.incomplete',
          data: {
            type: 'response.incomplete',
            response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
          },
        },
      ],
      responses,
    );
    expect(last(incomplete)).toEqual({ type: 'done', stopReason: 'max_tokens', rawStopReason: 'max_output_tokens' });
    await server?.close();
    const failed = await run(
      [
        {
          event: 'response.failed',
          data: {
            type: 'response.failed',
            response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow' } },
          },
        },
      ],
      responses,
    );
    expect(failed).toEqual([
      { type: 'error', error: { _tag: 'rate_limited', provider: 'o', message: 'rate_limit_exceeded: slow' } },
    ]);
  });
});

describe('openai chat and openrouter', () => {
  it('accepts [DONE] without finish_reason as a finished turn', async () => {
    const events = await run(
      [{ data: { choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] } }, { data: '[DONE]' }],
      chat,
    );
    expect(last(events)).toEqual({ type: 'done', stopReason: 'end_turn', rawStopReason: '[DONE]' });
  });

  it('maps an OpenRouter error chunk, and ignores its keep-alive comments', async () => {
    server = await startServer(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(': OPENROUTER PROCESSING\n\n');
      response.write(
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] })}\n\n`,
      );
      response.write(': OPENROUTER PROCESSING\n\n');
      response.end(
        `data: ${JSON.stringify({ error: { code: 502, message: 'Provider returned error' }, choices: [{ index: 0, delta: {}, finish_reason: 'error' }] })}\n\n`,
      );
    });
    const events = await drain(openrouter(server.origin).stream(request()));
    expect(events).toEqual([
      { type: 'text_delta', text: 'a' },
      {
        type: 'error',
        error: { _tag: 'server_error', provider: 'or', message: 'Provider returned error', status: 502 },
      },
    ]);
  });

  it('bounds a single event: an endless data line is a protocol error, not unbounded memory', async () => {
    server = await startServer(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: ');
      for (let index = 0; index < 64; index += 1) response.write('x'.repeat(1024));
      response.end();
    });
    const provider = createOpenAIChatProvider({
      id: 'c',
      baseUrl: `${server.origin}/v1`,
      key,
      maxEventLength: 16 * 1024,
    });
    const events = await drain(provider.stream(request()));
    expect(events).toEqual([
      {
        type: 'error',
        error: { _tag: 'protocol', provider: 'c', message: 'a server-sent event exceeded the size bound' },
      },
    ]);
  });
});

describe('gemini', () => {
  it('turns finishReason MALFORMED_FUNCTION_CALL into a tool_call_error with the model’s attempt', async () => {
    const events = await run(
      [
        {
          data: {
            candidates: [
              {
                content: { role: 'model', parts: [] },
                finishReason: 'MALFORMED_FUNCTION_CALL',
                finishMessage: 'Malformed function call: read_file(path=',
              },
            ],
            responseId: 'r9',
          },
        },
      ],
      gemini,
    );
    expect(events).toEqual([
      {
        type: 'tool_call_error',
        id: 'r9_0',
        name: '',
        raw: 'Malformed function call: read_file(path=',
        message: 'the model produced a malformed function call',
      },
      { type: 'done', stopReason: 'other', rawStopReason: 'MALFORMED_FUNCTION_CALL' },
    ]);
  });

  it('maps a safety stop and a blocked prompt to content_filter', async () => {
    const safety = await run(
      [{ data: { candidates: [{ content: { parts: [{ text: 'no' }] }, finishReason: 'SAFETY' }] } }],
      gemini,
    );
    expect(last(safety)).toMatchObject({ type: 'done', stopReason: 'content_filter' });
    await server?.close();
    const blocked = await run([{ data: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } } }], gemini);
    expect(blocked).toEqual([
      { type: 'done', stopReason: 'content_filter', rawStopReason: 'PROMPT_PROHIBITED_CONTENT' },
    ]);
  });

  it('reads RetryInfo from a 429 body when there is no Retry-After header', async () => {
    server = await startServer((_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: {
            code: 429,
            status: 'RESOURCE_EXHAUSTED',
            message: 'Quota exceeded',
            details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }],
          },
        }),
      );
    });
    const events = await drain(gemini(server.origin).stream(request()));
    expect(events).toEqual([
      {
        type: 'error',
        error: {
          _tag: 'rate_limited',
          provider: 'g',
          message: 'HTTP 429: RESOURCE_EXHAUSTED: Quota exceeded',
          retryAfterMs: 37_000,
        },
      },
    ]);
  });
});
