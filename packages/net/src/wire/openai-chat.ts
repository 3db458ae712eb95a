/**
 * OpenAI Chat Completions (`POST {base}/chat/completions`, `stream: true`),
 * also spoken by OpenRouter, Ollama, vLLM and LM Studio. Chunks carry
 * `choices[0].delta` fragments; tool calls arrive as per-index argument
 * fragments; `finish_reason` ends the answer and `data: [DONE]` the stream.
 */

import * as t from 'io-ts';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions/completions';
import { decodeJson } from '../decode.js';
import type { DecoderContext, Dialect, StreamDecoder } from '../dialect.js';
import { joinUrl, nullable, protocolEvent, truncatedEvent } from '../dialect.js';
import type { ProviderError, StopReason, StreamEvent } from '../events.js';
import { clip } from '../http-errors.js';
import { type TokenCounts, tokenCounts, usageEvent } from '../pricing.js';
import type { Message, ModelRequest } from '../request.js';
import { toolCallFromText } from '../tool-arguments.js';

// ─── request ──────────────────────────────────────────────────────────────

export interface ChatDialectOptions {
  /** OpenAI wants `max_completion_tokens`; Ollama, vLLM, LM Studio and OpenRouter read `max_tokens`. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** How the thinking level is expressed: OpenAI's `reasoning_effort`, OpenRouter's `reasoning`, or not at all. */
  readonly reasoning: 'openai' | 'openrouter' | 'none';
  /** Send `prompt_cache_key` from the cache hints (OpenAI only; others may reject unknown fields). */
  readonly promptCacheKey: boolean;
}

type ChatMessage = ChatCompletionCreateParamsStreaming['messages'][number];
type ChatBody = ChatCompletionCreateParamsStreaming & {
  max_tokens?: number;
  reasoning?: { effort: 'low' | 'medium' | 'high' };
};

export function chatMessages(system: string, messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (system !== '') out.push({ role: 'system', content: system });
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else if (message.role === 'tool') {
      const content = message.isError === true ? `[tool error] ${message.content}` : message.content;
      out.push({ role: 'tool', tool_call_id: message.toolCallId, content });
    } else {
      const text = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      const calls = message.content.flatMap((part) =>
        part.type === 'tool_call'
          ? [
              {
                id: part.id,
                type: 'function' as const,
                function: { name: part.name, arguments: JSON.stringify(part.arguments) },
              },
            ]
          : [],
      );
      out.push(
        calls.length > 0
          ? { role: 'assistant', content: text === '' ? null : text, tool_calls: calls }
          : { role: 'assistant', content: text },
      );
    }
  }
  return out;
}

function chatBody(request: ModelRequest, options: ChatDialectOptions): ChatBody {
  const body: ChatBody = {
    model: request.model,
    messages: chatMessages(request.system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (options.maxTokensField === 'max_tokens') body.max_tokens = request.maxTokens;
  else body.max_completion_tokens = request.maxTokens;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  const level = request.thinking;
  if (level !== undefined && level !== 'off') {
    if (options.reasoning === 'openai') body.reasoning_effort = level;
    else if (options.reasoning === 'openrouter') body.reasoning = { effort: level };
  }
  if (options.promptCacheKey && request.cache?.key !== undefined) body.prompt_cache_key = request.cache.key;
  return body;
}

// ─── response ─────────────────────────────────────────────────────────────

const ToolCallDelta = t.partial({
  index: t.number,
  id: nullable(t.string),
  function: nullable(t.partial({ name: nullable(t.string), arguments: nullable(t.string) })),
});

const Chunk = t.partial({
  id: t.string,
  choices: nullable(
    t.array(
      t.partial({
        delta: nullable(
          t.partial({
            content: nullable(t.string),
            refusal: nullable(t.string),
            // vLLM / DeepSeek name it reasoning_content; OpenRouter and Ollama name it reasoning.
            reasoning_content: nullable(t.string),
            reasoning: nullable(t.string),
            tool_calls: nullable(t.array(ToolCallDelta)),
          }),
        ),
        finish_reason: nullable(t.string),
      }),
    ),
  ),
  usage: nullable(
    t.partial({
      prompt_tokens: t.number,
      completion_tokens: t.number,
      prompt_tokens_details: nullable(t.partial({ cached_tokens: nullable(t.number) })),
      /** OpenRouter: the request's cost in USD. */
      cost: nullable(t.number),
    }),
  ),
  /** OpenRouter and some proxies report a failure mid-stream as a chunk with `error`. */
  error: nullable(t.partial({ message: t.string, code: nullable(t.union([t.number, t.string])) })),
});

const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'content_filter',
};

export function inStreamError(
  provider: string,
  code: number | string | null | undefined,
  message: string,
): ProviderError {
  const text = clip(message);
  if (code === 429 || code === 'rate_limit_exceeded') return { _tag: 'rate_limited', provider, message: text };
  if (code === 401 || code === 403) return { _tag: 'auth', provider, message: text, status: code };
  if (typeof code === 'number' && code >= 400 && code < 500)
    return { _tag: 'bad_request', provider, message: text, status: code };
  return {
    _tag: 'server_error',
    provider,
    message: text,
    status: typeof code === 'number' && code >= 500 ? code : 500,
  };
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

class ChatDecoder implements StreamDecoder {
  readonly #context: DecoderContext;
  readonly #calls: PendingCall[] = [];
  readonly #positionByIndex = new Map<number, number>();
  #finishReason: string | undefined;
  #callsEmitted = false;
  #counts: TokenCounts | undefined;
  #reportedCost: number | undefined;
  #responseId = '';

  constructor(context: DecoderContext) {
    this.#context = context;
  }

  push(message: { readonly data: string }): readonly StreamEvent[] {
    if (message.data === '[DONE]') return this.#finish('[DONE]');
    const decoded = decodeJson(Chunk, message.data);
    if (decoded._tag === 'Left') {
      return [protocolEvent(this.#context.provider, `undecodable chat chunk: ${decoded.left.message}`)];
    }
    const chunk = decoded.right;
    if (chunk.error != null) {
      const error = inStreamError(this.#context.provider, chunk.error.code, chunk.error.message ?? 'error in stream');
      return [{ type: 'error', error }];
    }
    if (chunk.id !== undefined) this.#responseId = chunk.id;
    const out: StreamEvent[] = [];
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    if (delta != null) {
      const thinking = delta.reasoning_content ?? delta.reasoning;
      if (thinking != null && thinking !== '') out.push({ type: 'thinking_delta', text: thinking });
      if (delta.content != null && delta.content !== '') out.push({ type: 'text_delta', text: delta.content });
      if (delta.refusal != null && delta.refusal !== '') out.push({ type: 'text_delta', text: delta.refusal });
      for (const call of delta.tool_calls ?? []) this.#accumulate(call);
    }
    if (chunk.usage != null) {
      const usage = chunk.usage;
      const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
      this.#counts = tokenCounts({
        inputTokens: (usage.prompt_tokens ?? 0) - cached,
        outputTokens: usage.completion_tokens ?? 0,
        cacheReadTokens: cached,
      });
      if (usage.cost != null) this.#reportedCost = usage.cost * 1_000_000;
    }
    if (choice?.finish_reason != null && choice.finish_reason !== '') {
      this.#finishReason = choice.finish_reason;
      out.push(...this.#emitCalls());
    }
    return out;
  }

  end(): readonly StreamEvent[] {
    // Some compatible servers close after finish_reason without [DONE]; the answer is complete.
    if (this.#finishReason !== undefined) return this.#finish(undefined);
    return [truncatedEvent(this.#context.provider, 'finish_reason')];
  }

  #accumulate(delta: t.TypeOf<typeof ToolCallDelta>): void {
    const id = delta.id ?? undefined;
    let position =
      delta.index === undefined
        ? id === undefined
          ? this.#calls.length - 1
          : undefined
        : this.#positionByIndex.get(delta.index);
    const existing = position === undefined ? undefined : this.#calls[position];
    // A new id at a known index means the server reuses indexes (seen with some local servers).
    if (existing !== undefined && id !== undefined && id !== '' && existing.id !== '' && existing.id !== id)
      position = undefined;
    let call = position === undefined ? undefined : this.#calls[position];
    if (call === undefined) {
      call = { id: '', name: '', arguments: '' };
      this.#calls.push(call);
      if (delta.index !== undefined) this.#positionByIndex.set(delta.index, this.#calls.length - 1);
    }
    if (id !== undefined && id !== '' && call.id === '') call.id = id;
    const name = delta.function?.name;
    if (name != null && name !== '' && call.name === '') call.name = name;
    const fragment = delta.function?.arguments;
    if (fragment != null) call.arguments += fragment;
  }

  #emitCalls(): StreamEvent[] {
    if (this.#callsEmitted) return [];
    this.#callsEmitted = true;
    return this.#calls.map((call, position) =>
      toolCallFromText(
        call.id === '' ? `${this.#responseId || 'call'}_${position}` : call.id,
        call.name,
        call.arguments,
      ),
    );
  }

  #finish(marker: string | undefined): readonly StreamEvent[] {
    const out: StreamEvent[] = [...this.#emitCalls()];
    if (this.#counts !== undefined) out.push(usageEvent(this.#counts, this.#context.prices, this.#reportedCost));
    const raw = this.#finishReason ?? marker ?? 'unknown';
    let stopReason = STOP_REASONS[raw] ?? 'other';
    // Ollama reports "stop" even when the turn ends in tool calls.
    if (this.#calls.length > 0 && stopReason === 'end_turn') stopReason = 'tool_use';
    if (this.#finishReason === undefined && this.#calls.length === 0) stopReason = 'end_turn';
    out.push({ type: 'done', stopReason, rawStopReason: raw });
    return out;
  }
}

export function openAIChatDialect(options: ChatDialectOptions): Dialect {
  return {
    name: 'openai-chat',
    buildExchange(baseUrl, request, key) {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
      if (key !== undefined) headers.authorization = `Bearer ${key}`;
      return {
        url: joinUrl(baseUrl, 'chat/completions'),
        method: 'POST',
        headers,
        body: JSON.stringify(chatBody(request, options)),
      };
    },
    createDecoder: (context) => new ChatDecoder(context),
  };
}
