/**
 * One harness per wire dialect: how to build the provider against a scripted
 * server, which header must carry the key, and the protocol's frames.
 */
import {
  createAnthropicProvider,
  createGeminiProvider,
  createOllamaProvider,
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  createOpenRouterProvider,
  type HttpProviderOptions,
  type ModelPrices,
  type ModelProvider,
  type ModelRequest,
  type StreamEvent,
} from '../src/index.js';
import type { Frame, RecordedRequest } from './scripted-server.js';
import {
  ANTHROPIC_TERMINAL_FRAMES,
  anthropicFrames,
  CHAT_TERMINAL_FRAMES,
  chatFrames,
  GEMINI_TERMINAL_FRAMES,
  geminiFrames,
  RESPONSES_TERMINAL_FRAMES,
  responsesFrames,
  type Scenario,
} from './wire-scripts.js';

export const API_KEY = 'sk-test-3f9a1c7e5b2d4a6c8e0f';
export const MODEL = 'model-under-test';
export const PRICES: ModelPrices = {
  inputPerMillion: 3,
  outputPerMillion: 15,
  cacheReadPerMillion: 0.3,
  cacheWritePerMillion: 3.75,
};
/** 200·3 + 50·15 + 1000·0.3 micro-dollars. */
export const EXPECTED_COST = 1650;

export interface Harness {
  readonly name: string;
  readonly keyed: boolean;
  readonly path: (model: string) => string;
  readonly frames: (scenario: Scenario) => Frame[];
  readonly terminalFrames: number;
  /** The key as the server saw it, or undefined. */
  readonly seenKey: (request: RecordedRequest) => string | undefined;
  readonly make: (origin: string, options?: Partial<HttpProviderOptions>) => ModelProvider;
}

const bearer = (request: RecordedRequest): string | undefined => {
  const value = request.headers.authorization;
  return typeof value === 'string' && value.startsWith('Bearer ') ? value.slice('Bearer '.length) : undefined;
};
const header = (name: string) => (request: RecordedRequest) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

const base = (origin: string, keyed: boolean, options: Partial<HttpProviderOptions> = {}): HttpProviderOptions => ({
  id: 'under-test',
  baseUrl: `${origin}/v1`,
  prices: { [MODEL]: PRICES },
  ...(keyed ? { key: { expose: () => API_KEY } } : {}),
  ...options,
});

export const HARNESSES: readonly Harness[] = [
  {
    name: 'openai-responses',
    keyed: true,
    path: () => '/v1/responses',
    frames: responsesFrames,
    terminalFrames: RESPONSES_TERMINAL_FRAMES,
    seenKey: bearer,
    make: (origin, options) => createOpenAIResponsesProvider(base(origin, true, options)),
  },
  {
    name: 'openai-chat',
    keyed: true,
    path: () => '/v1/chat/completions',
    frames: (scenario) => chatFrames(scenario),
    terminalFrames: CHAT_TERMINAL_FRAMES,
    seenKey: bearer,
    make: (origin, options) => createOpenAIChatProvider(base(origin, true, options)),
  },
  {
    name: 'anthropic',
    keyed: true,
    path: () => '/v1/messages',
    frames: anthropicFrames,
    terminalFrames: ANTHROPIC_TERMINAL_FRAMES,
    seenKey: header('x-api-key'),
    make: (origin, options) => createAnthropicProvider(base(origin, true, options)),
  },
  {
    name: 'gemini',
    keyed: true,
    path: (model) => `/v1/models/${model}:streamGenerateContent?alt=sse`,
    frames: geminiFrames,
    terminalFrames: GEMINI_TERMINAL_FRAMES,
    seenKey: header('x-goog-api-key'),
    make: (origin, options) => createGeminiProvider(base(origin, true, options)),
  },
  {
    name: 'openrouter',
    keyed: true,
    path: () => '/v1/chat/completions',
    frames: (scenario) => chatFrames(scenario),
    terminalFrames: CHAT_TERMINAL_FRAMES,
    seenKey: bearer,
    make: (origin, options) =>
      createOpenRouterProvider({
        ...base(origin, true, options),
        appName: 'CrustCore',
        appUrl: 'https://crustcore.test',
      }),
  },
  {
    name: 'ollama (openai-compatible, keyless)',
    keyed: false,
    path: () => '/v1/chat/completions',
    frames: (scenario) => chatFrames(scenario, { ollama: true }),
    terminalFrames: CHAT_TERMINAL_FRAMES,
    seenKey: bearer,
    make: (origin, options) => createOllamaProvider(base(origin, false, options)),
  },
];

export const TOOLS = [
  {
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
] as const;

export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: MODEL,
    system: 'You are a careful coding agent.',
    messages: [{ role: 'user', content: 'Read src/a.ts please.' }],
    tools: TOOLS,
    maxTokens: 1024,
    ...overrides,
  };
}

export async function drain(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

export const textOf = (events: readonly StreamEvent[]): string =>
  events.flatMap((event) => (event.type === 'text_delta' ? [event.text] : [])).join('');

export const last = (events: readonly StreamEvent[]): StreamEvent | undefined => events[events.length - 1];
