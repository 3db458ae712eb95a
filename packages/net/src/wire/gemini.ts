/**
 * Gemini (`POST {base}/models/{model}:streamGenerateContent?alt=sse`, key in
 * `x-goog-api-key`). Each SSE message is a whole GenerateContentResponse
 * chunk; function calls arrive complete with `args` as an object; the chunk
 * carrying `finishReason` is the last answer chunk, and the stream then closes
 * (a close without any finishReason is a truncation).
 */
import type { Content, FunctionDeclaration, Part } from '@google/genai';
import * as t from 'io-ts';
import { decodeJson } from '../decode.js';
import type { DecoderContext, Dialect, StreamDecoder } from '../dialect.js';
import { joinUrl, nullable, protocolEvent, truncatedEvent } from '../dialect.js';
import type { StopReason, StreamEvent, ToolCallErrorEvent } from '../events.js';
import { clip } from '../http-errors.js';
import { type TokenCounts, tokenCounts, usageEvent } from '../pricing.js';
import type { Message, ModelRequest, ThinkingLevel } from '../request.js';
import { toolCallFromValue } from '../tool-arguments.js';
import { inStreamError } from './openai-chat.js';

// ─── request ──────────────────────────────────────────────────────────────

/**
 * Google's documented placeholder for a replayed function call that has no
 * signature of its own (history from another vendor, or from before a
 * switch). Gemini 3 rejects unsigned calls; 1.x/2.x never needed one.
 */
export const GEMINI_SKIP_SIGNATURE = 'skip_thought_signature_validator';

const THINKING_BUDGET_TOKENS: Readonly<Record<ThinkingLevel, number>> = {
  off: 0,
  low: 1_024,
  medium: 8_192,
  high: 24_576,
};

interface GeminiBody {
  contents: Content[];
  systemInstruction?: Content;
  tools?: { functionDeclarations: FunctionDeclaration[] }[];
  generationConfig: {
    maxOutputTokens: number;
    temperature?: number;
    thinkingConfig?: { thinkingBudget: number; includeThoughts?: boolean };
  };
}

const needsSignature = (model: string): boolean => !/^(models\/)?gemini-[12][.-]/.test(model);

export function geminiContents(messages: readonly Message[], model: string): Content[] {
  const out: Content[] = [];
  const append = (role: 'user' | 'model', parts: Part[]): void => {
    if (parts.length === 0) return;
    const previous = out[out.length - 1];
    if (previous?.role === role) previous.parts = [...(previous.parts ?? []), ...parts];
    else out.push({ role, parts });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      if (message.content !== '') append('user', [{ text: message.content }]);
    } else if (message.role === 'tool') {
      const response = message.isError === true ? { error: message.content } : { output: message.content };
      append('user', [{ functionResponse: { name: message.toolName, response } }]);
    } else {
      const parts: Part[] = [];
      const signed = message.content.some((part) => part.type === 'tool_call' && part.signature !== undefined);
      let firstCall = true;
      for (const part of message.content) {
        // Thinking is never replayed to Gemini: its thought text is a summary Gemini does not read back.
        if (part.type === 'text' && part.text !== '') parts.push({ text: part.text });
        if (part.type !== 'tool_call') continue;
        const call: Part = { functionCall: { name: part.name, args: { ...part.arguments } } };
        if (part.signature !== undefined) call.thoughtSignature = part.signature;
        else if (!signed && firstCall && needsSignature(model)) call.thoughtSignature = GEMINI_SKIP_SIGNATURE;
        firstCall = false;
        parts.push(call);
      }
      append('model', parts);
    }
  }
  return out;
}

function geminiBody(request: ModelRequest): GeminiBody {
  const body: GeminiBody = {
    contents: geminiContents(request.messages, request.model),
    generationConfig: { maxOutputTokens: request.maxTokens },
  };
  if (request.system !== '') body.systemInstruction = { parts: [{ text: request.system }] };
  if (request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
  }
  if (request.temperature !== undefined) body.generationConfig.temperature = request.temperature;
  if (request.thinking !== undefined) {
    const thinkingBudget = THINKING_BUDGET_TOKENS[request.thinking];
    body.generationConfig.thinkingConfig =
      thinkingBudget === 0 ? { thinkingBudget } : { thinkingBudget, includeThoughts: true };
  }
  return body;
}

// ─── response ─────────────────────────────────────────────────────────────

const PartCodec = t.partial({
  text: nullable(t.string),
  thought: nullable(t.boolean),
  thoughtSignature: nullable(t.string),
  functionCall: nullable(t.partial({ name: t.string, args: t.unknown, id: nullable(t.string) })),
});
const Chunk = t.partial({
  candidates: nullable(
    t.array(
      t.partial({
        content: nullable(t.partial({ parts: nullable(t.array(PartCodec)) })),
        finishReason: nullable(t.string),
        finishMessage: nullable(t.string),
      }),
    ),
  ),
  usageMetadata: nullable(
    t.partial({
      promptTokenCount: nullable(t.number),
      candidatesTokenCount: nullable(t.number),
      cachedContentTokenCount: nullable(t.number),
      thoughtsTokenCount: nullable(t.number),
    }),
  ),
  promptFeedback: nullable(t.partial({ blockReason: nullable(t.string) })),
  responseId: nullable(t.string),
  error: nullable(t.partial({ code: t.number, message: t.string, status: t.string })),
});

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'LANGUAGE',
]);

class GeminiDecoder implements StreamDecoder {
  readonly #context: DecoderContext;
  #finishReason: string | undefined;
  #counts: TokenCounts | undefined;
  #callCount = 0;
  #responseId = 'gemini';

  constructor(context: DecoderContext) {
    this.#context = context;
  }

  push(message: { readonly data: string }): readonly StreamEvent[] {
    const provider = this.#context.provider;
    const decoded = decodeJson(Chunk, message.data);
    if (decoded._tag === 'Left') return [protocolEvent(provider, `undecodable gemini chunk: ${decoded.left.message}`)];
    const chunk = decoded.right;
    if (chunk.error != null) {
      const text = [chunk.error.status, chunk.error.message].filter((part) => part !== undefined).join(': ');
      return [{ type: 'error', error: inStreamError(provider, chunk.error.code, text || 'error in stream') }];
    }
    if (chunk.responseId != null) this.#responseId = chunk.responseId;
    if (chunk.usageMetadata != null) {
      const usage = chunk.usageMetadata;
      const cached = usage.cachedContentTokenCount ?? 0;
      // Gemini bills thoughts as output and counts cached tokens inside the prompt count.
      this.#counts = tokenCounts({
        inputTokens: (usage.promptTokenCount ?? 0) - cached,
        outputTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
        cacheReadTokens: cached,
      });
    }
    const out: StreamEvent[] = [];
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall != null) {
        const call = part.functionCall;
        const id = call.id ?? `${this.#responseId}_${this.#callCount}`;
        this.#callCount += 1;
        out.push(toolCallFromValue(id, call.name ?? '', call.args, part.thoughtSignature ?? undefined));
      } else if (part.text != null && part.text !== '') {
        out.push({ type: part.thought === true ? 'thinking_delta' : 'text_delta', text: part.text });
      }
    }
    if (candidate?.finishReason != null && candidate.finishReason !== 'FINISH_REASON_UNSPECIFIED') {
      this.#finishReason = candidate.finishReason;
      if (candidate.finishReason === 'MALFORMED_FUNCTION_CALL')
        out.push(this.#malformedCall(candidate.finishMessage ?? ''));
    }
    const blocked = chunk.promptFeedback?.blockReason;
    if (blocked != null && blocked !== '') this.#finishReason = `PROMPT_${blocked}`;
    return out;
  }

  end(): readonly StreamEvent[] {
    const raw = this.#finishReason;
    if (raw === undefined) return [truncatedEvent(this.#context.provider, 'a finishReason')];
    const out: StreamEvent[] = [];
    if (this.#counts !== undefined) out.push(usageEvent(this.#counts, this.#context.prices));
    let stopReason: StopReason = 'other';
    if (raw === 'STOP') stopReason = this.#callCount > 0 ? 'tool_use' : 'end_turn';
    else if (raw === 'MAX_TOKENS') stopReason = 'max_tokens';
    else if (FILTERED.has(raw) || raw.startsWith('PROMPT_')) stopReason = 'content_filter';
    out.push({ type: 'done', stopReason, rawStopReason: raw });
    return out;
  }

  /** Gemini reports a call it could not form as a finish reason, with the attempt in finishMessage. */
  #malformedCall(finishMessage: string): ToolCallErrorEvent {
    const id = `${this.#responseId}_${this.#callCount}`;
    this.#callCount += 1;
    return {
      type: 'tool_call_error',
      id,
      name: '',
      raw: clip(finishMessage, 4_000),
      message: 'the model produced a malformed function call',
    };
  }
}

export function geminiDialect(): Dialect {
  return {
    name: 'gemini',
    buildExchange(baseUrl, request, key) {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
      if (key !== undefined) headers['x-goog-api-key'] = key;
      const model = encodeURIComponent(request.model.replace(/^models\//, ''));
      return {
        url: joinUrl(baseUrl, `models/${model}:streamGenerateContent?alt=sse`),
        method: 'POST',
        headers,
        body: JSON.stringify(geminiBody(request)),
      };
    },
    createDecoder: (context) => new GeminiDecoder(context),
  };
}
