/**
 * OpenAI Responses API (`POST {base}/responses`, `stream: true`). Events are
 * typed by name (`response.output_text.delta`, …); function calls are output
 * items whose arguments stream as deltas and are final at
 * `response.output_item.done`; `response.completed` / `.incomplete` /
 * `.failed` end the stream (there is no `[DONE]`).
 * We send `store: false`: history lives in our ledger, not on the vendor.
 */

import * as t from 'io-ts';
import type { ResponseCreateParamsStreaming, ResponseInputItem } from 'openai/resources/responses/responses';
import { decode, parseJson } from '../decode.js';
import type { DecoderContext, Dialect, StreamDecoder } from '../dialect.js';
import { joinUrl, nullable, protocolEvent, truncatedEvent } from '../dialect.js';
import type { ProviderError, StopReason, StreamEvent } from '../events.js';
import { clip } from '../http-errors.js';
import { tokenCounts, usageEvent } from '../pricing.js';
import type { Message, ModelRequest } from '../request.js';
import { toolCallFromText } from '../tool-arguments.js';

// ─── request ──────────────────────────────────────────────────────────────

export function responsesInput(messages: readonly Message[]): ResponseInputItem[] {
  const out: ResponseInputItem[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else if (message.role === 'tool') {
      const output = message.isError === true ? `[tool error] ${message.content}` : message.content;
      out.push({ type: 'function_call_output', call_id: message.toolCallId, output });
    } else {
      // Reasoning items are not replayed: with store=false they would need encrypted content we do not keep.
      let text = '';
      const flushText = (): void => {
        if (text !== '') out.push({ role: 'assistant', content: text });
        text = '';
      };
      for (const part of message.content) {
        if (part.type === 'text') text += part.text;
        else if (part.type === 'tool_call') {
          flushText();
          out.push({
            type: 'function_call',
            call_id: part.id,
            name: part.name,
            arguments: JSON.stringify(part.arguments),
          });
        }
      }
      flushText();
    }
  }
  return out;
}

function responsesBody(request: ModelRequest): ResponseCreateParamsStreaming {
  const body: ResponseCreateParamsStreaming = {
    model: request.model,
    input: responsesInput(request.messages),
    stream: true,
    store: false,
    max_output_tokens: request.maxTokens,
  };
  if (request.system !== '') body.instructions = request.system;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.thinking !== undefined && request.thinking !== 'off') {
    body.reasoning = { effort: request.thinking, summary: 'auto' };
  }
  if (request.cache?.key !== undefined) body.prompt_cache_key = request.cache.key;
  return body;
}

// ─── response ─────────────────────────────────────────────────────────────

const Envelope = t.type({ type: t.string });
const Delta = t.type({ delta: t.string });
const Item = t.partial({
  type: t.string,
  id: nullable(t.string),
  call_id: nullable(t.string),
  name: nullable(t.string),
  arguments: nullable(t.string),
});
const ItemEvent = t.type({ output_index: t.number, item: Item });
const ArgumentsDelta = t.intersection([
  t.type({ delta: t.string }),
  t.partial({ output_index: t.number, item_id: t.string }),
]);
const Usage = t.partial({
  input_tokens: t.number,
  output_tokens: t.number,
  input_tokens_details: nullable(t.partial({ cached_tokens: nullable(t.number) })),
});
const Final = t.type({
  response: t.partial({
    status: nullable(t.string),
    usage: nullable(Usage),
    incomplete_details: nullable(t.partial({ reason: nullable(t.string) })),
    error: nullable(t.partial({ code: nullable(t.string), message: nullable(t.string) })),
  }),
});
const StreamError = t.partial({ code: nullable(t.string), message: nullable(t.string) });

function failureFromCode(provider: string, code: string | null | undefined, message: string): ProviderError {
  const text = clip(code == null ? message : `${code}: ${message}`);
  if (code === 'rate_limit_exceeded' || code === 'insufficient_quota')
    return { _tag: 'rate_limited', provider, message: text };
  if (code === 'invalid_prompt' || code === 'context_length_exceeded' || code === 'invalid_request_error') {
    return { _tag: 'bad_request', provider, message: text };
  }
  return { _tag: 'server_error', provider, message: text, status: 500 };
}

interface PendingCall {
  callId: string;
  name: string;
  arguments: string;
}

class ResponsesDecoder implements StreamDecoder {
  readonly #context: DecoderContext;
  readonly #calls = new Map<number, PendingCall>();
  #sawToolCall = false;

  constructor(context: DecoderContext) {
    this.#context = context;
  }

  push(message: { readonly event: string; readonly data: string }): readonly StreamEvent[] {
    const provider = this.#context.provider;
    const parsed = parseJson(message.data);
    const envelope = parsed._tag === 'Left' ? parsed : decode(Envelope, parsed.right);
    if (envelope._tag === 'Left' || parsed._tag === 'Left') {
      const reason = envelope._tag === 'Left' ? envelope.left.message : 'invalid JSON';
      return [protocolEvent(provider, `undecodable responses event: ${reason}`)];
    }
    const type = envelope.right.type;
    const payload = parsed.right;
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const delta = Delta.decode(payload);
        if (delta._tag === 'Left') return [protocolEvent(provider, `${type} without a delta`)];
        if (delta.right.delta === '') return [];
        const isThinking = type.startsWith('response.reasoning');
        return [{ type: isThinking ? 'thinking_delta' : 'text_delta', text: delta.right.delta }];
      }
      case 'response.output_item.added': {
        const added = ItemEvent.decode(payload);
        if (added._tag === 'Left') return [protocolEvent(provider, 'output_item.added without an item')];
        const item = added.right.item;
        if (item.type === 'function_call') {
          this.#calls.set(added.right.output_index, {
            callId: item.call_id ?? item.id ?? `call_${added.right.output_index}`,
            name: item.name ?? '',
            arguments: item.arguments ?? '',
          });
        }
        return [];
      }
      case 'response.function_call_arguments.delta': {
        const delta = ArgumentsDelta.decode(payload);
        if (delta._tag === 'Left') return [protocolEvent(provider, 'function_call_arguments.delta without a delta')];
        const index = delta.right.output_index;
        const call = index === undefined ? undefined : this.#calls.get(index);
        if (call !== undefined) call.arguments += delta.right.delta;
        return [];
      }
      case 'response.output_item.done': {
        const done = ItemEvent.decode(payload);
        if (done._tag === 'Left') return [protocolEvent(provider, 'output_item.done without an item')];
        const item = done.right.item;
        if (item.type !== 'function_call') return [];
        const pending = this.#calls.get(done.right.output_index);
        this.#calls.delete(done.right.output_index);
        this.#sawToolCall = true;
        const callId = item.call_id ?? pending?.callId ?? `call_${done.right.output_index}`;
        const name = item.name ?? pending?.name ?? '';
        return [toolCallFromText(callId, name, item.arguments ?? pending?.arguments ?? '')];
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        return this.#final(type, payload);
      case 'error': {
        const error = StreamError.decode(payload);
        const body = error._tag === 'Right' ? error.right : {};
        return [
          { type: 'error', error: failureFromCode(provider, body.code, body.message ?? 'error event in stream') },
        ];
      }
      default:
        // created, in_progress, content_part.*, *.done echoes, annotations: nothing new for us.
        return [];
    }
  }

  end(): readonly StreamEvent[] {
    return [truncatedEvent(this.#context.provider, 'response.completed')];
  }

  #final(type: string, payload: unknown): readonly StreamEvent[] {
    const provider = this.#context.provider;
    const final = Final.decode(payload);
    if (final._tag === 'Left') return [protocolEvent(provider, `${type} without a response`)];
    const response = final.right.response;
    if (type === 'response.failed') {
      const error = response.error;
      return [{ type: 'error', error: failureFromCode(provider, error?.code, error?.message ?? 'response failed') }];
    }
    const out: StreamEvent[] = [];
    // Calls still open at the end were never closed by output_item.done; finish them from their deltas.
    for (const [index, call] of this.#calls) {
      this.#calls.delete(index);
      this.#sawToolCall = true;
      out.push(toolCallFromText(call.callId, call.name, call.arguments));
    }
    const usage = response.usage;
    if (usage != null) {
      const cached = usage.input_tokens_details?.cached_tokens ?? 0;
      const counts = tokenCounts({
        inputTokens: (usage.input_tokens ?? 0) - cached,
        outputTokens: usage.output_tokens ?? 0,
        cacheReadTokens: cached,
      });
      out.push(usageEvent(counts, this.#context.prices));
    }
    if (type === 'response.incomplete') {
      const reason = response.incomplete_details?.reason ?? 'incomplete';
      const stopReason: StopReason =
        reason === 'max_output_tokens' ? 'max_tokens' : reason === 'content_filter' ? 'content_filter' : 'other';
      out.push({ type: 'done', stopReason, rawStopReason: reason });
    } else {
      out.push({
        type: 'done',
        stopReason: this.#sawToolCall ? 'tool_use' : 'end_turn',
        rawStopReason: response.status ?? 'completed',
      });
    }
    return out;
  }
}

export function openAIResponsesDialect(): Dialect {
  return {
    name: 'openai-responses',
    buildExchange(baseUrl, request, key) {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
      if (key !== undefined) headers.authorization = `Bearer ${key}`;
      return {
        url: joinUrl(baseUrl, 'responses'),
        method: 'POST',
        headers,
        body: JSON.stringify(responsesBody(request)),
      };
    },
    createDecoder: (context) => new ResponsesDecoder(context),
  };
}
