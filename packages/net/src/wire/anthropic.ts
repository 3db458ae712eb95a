/**
 * Anthropic Messages (`POST {base}/messages`, `stream: true`). Content comes
 * as indexed blocks (text, thinking, tool_use) opened, filled by deltas and
 * closed; `message_stop` ends the stream. Prompt caching is explicit: we put a
 * `cache_control` breakpoint on the system prompt (which also covers the tool
 * definitions before it) and on the last stable message, so each turn reads
 * the previous turn's prefix from cache.
 */
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import * as t from 'io-ts';
import { decode, parseJson } from '../decode.js';
import type { DecoderContext, Dialect, StreamDecoder } from '../dialect.js';
import { joinUrl, nullable, protocolEvent, truncatedEvent } from '../dialect.js';
import type { ProviderError, StopReason, StreamEvent } from '../events.js';
import { clip } from '../http-errors.js';
import { tokenCounts, usageEvent } from '../pricing.js';
import type { Message, ModelRequest, ThinkingLevel } from '../request.js';
import { toolCallFromText, toolCallFromValue } from '../tool-arguments.js';

export const ANTHROPIC_VERSION = '2023-06-01';

// ─── request ──────────────────────────────────────────────────────────────

/** Anthropic accepts tool ids matching [A-Za-z0-9_-]+; ids minted by other vendors may not. */
export const anthropicToolId = (id: string): string => {
  const cleaned = id.replace(/[^A-Za-z0-9_-]/g, '_');
  return cleaned === '' ? 'call' : cleaned;
};

const THINKING_BUDGET_TOKENS: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  low: 2_048,
  medium: 8_192,
  high: 24_576,
};
/** Anthropic's minimum thinking budget. */
const MIN_THINKING_BUDGET_TOKENS = 1_024;

interface Converted {
  readonly messages: MessageParam[];
  /** For each neutral message, where its last cacheable block landed: [message, block]. */
  readonly lastBlockOf: ReadonlyArray<readonly [number, number] | undefined>;
}

export function anthropicMessages(messages: readonly Message[]): Converted {
  const out: { role: 'user' | 'assistant'; content: ContentBlockParam[] }[] = [];
  const lastBlockOf: (readonly [number, number] | undefined)[] = [];
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks: ContentBlockParam[] = [];
    if (message.role === 'user') {
      if (message.content !== '') blocks.push({ type: 'text', text: message.content });
    } else if (message.role === 'tool') {
      blocks.push({
        type: 'tool_result',
        tool_use_id: anthropicToolId(message.toolCallId),
        content: message.content,
        ...(message.isError === true ? { is_error: true } : {}),
      });
    } else {
      for (const part of message.content) {
        if (part.type === 'text') {
          if (part.text !== '') blocks.push({ type: 'text', text: part.text });
        } else if (part.type === 'thinking') {
          // Unsigned thinking (another vendor's, or a lost signature) cannot be sent back.
          if (part.signature !== undefined)
            blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
        } else {
          blocks.push({ type: 'tool_use', id: anthropicToolId(part.id), name: part.name, input: part.arguments });
        }
      }
    }
    if (blocks.length === 0) {
      lastBlockOf.push(undefined);
      continue;
    }
    const previous = out[out.length - 1];
    // Anthropic wants alternating roles: consecutive tool results and user text share one user message.
    const target: (typeof out)[number] =
      previous !== undefined && previous.role === role ? previous : { role, content: [] };
    if (target !== previous) out.push(target);
    const firstNew = target.content.length;
    target.content.push(...blocks);
    let cacheable: number | undefined;
    for (let index = target.content.length - 1; index >= firstNew; index -= 1) {
      if (target.content[index]?.type !== 'thinking') {
        cacheable = index;
        break;
      }
    }
    lastBlockOf.push(cacheable === undefined ? undefined : [out.length - 1, cacheable]);
  }
  return { messages: out, lastBlockOf };
}

function anthropicBody(request: ModelRequest): MessageCreateParamsStreaming {
  const { messages, lastBlockOf } = anthropicMessages(request.messages);
  const cache = request.cache ?? {};
  const stableIndex = cache.lastStableMessageIndex ?? request.messages.length - 1;
  const breakpoint = stableIndex >= 0 ? lastBlockOf[stableIndex] : undefined;
  if (breakpoint !== undefined) {
    const [messageIndex, blockIndex] = breakpoint;
    const block = messages[messageIndex]?.content[blockIndex];
    if (
      block !== undefined &&
      typeof block !== 'string' &&
      block.type !== 'thinking' &&
      block.type !== 'redacted_thinking'
    ) {
      (block as TextBlockParam).cache_control = { type: 'ephemeral' };
    }
  }
  const body: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages,
    stream: true,
  };
  if (request.system !== '') {
    const system: TextBlockParam = { type: 'text', text: request.system };
    if (cache.system !== false) system.cache_control = { type: 'ephemeral' };
    body.system = [system];
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: { type: 'object', ...tool.parameters },
    }));
  }
  const level = request.thinking;
  const budget =
    level === undefined || level === 'off' ? 0 : Math.min(THINKING_BUDGET_TOKENS[level], request.maxTokens - 1);
  if (budget >= MIN_THINKING_BUDGET_TOKENS) body.thinking = { type: 'enabled', budget_tokens: budget };
  // `temperature` is not sent: the Messages API revision the vendor SDK (1.14) describes has retired it.
  return body;
}

// ─── response ─────────────────────────────────────────────────────────────

const Envelope = t.type({ type: t.string });
const UsageCodec = t.partial({
  input_tokens: nullable(t.number),
  output_tokens: nullable(t.number),
  cache_creation_input_tokens: nullable(t.number),
  cache_read_input_tokens: nullable(t.number),
});
const MessageStart = t.type({ message: t.partial({ usage: nullable(UsageCodec) }) });
const BlockStart = t.type({
  index: t.number,
  content_block: t.intersection([
    t.type({ type: t.string }),
    t.partial({
      id: nullable(t.string),
      name: nullable(t.string),
      input: t.unknown,
      text: nullable(t.string),
      thinking: nullable(t.string),
    }),
  ]),
});
const BlockDelta = t.type({
  index: t.number,
  delta: t.intersection([
    t.type({ type: t.string }),
    t.partial({
      text: nullable(t.string),
      partial_json: nullable(t.string),
      thinking: nullable(t.string),
      signature: nullable(t.string),
    }),
  ]),
});
const BlockStop = t.type({ index: t.number });
const MessageDelta = t.type({
  delta: t.partial({ stop_reason: nullable(t.string) }),
  usage: nullable(UsageCodec),
});
const StreamErrorCodec = t.type({ error: t.partial({ type: t.string, message: t.string }) });

const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'content_filter',
};

function streamError(provider: string, type: string | undefined, message: string): ProviderError {
  const text = clip(type === undefined ? message : `${type}: ${message}`);
  switch (type) {
    case 'rate_limit_error':
      return { _tag: 'rate_limited', provider, message: text };
    case 'overloaded_error':
      return { _tag: 'server_error', provider, message: text, status: 529 };
    case 'authentication_error':
    case 'permission_error':
      return { _tag: 'auth', provider, message: text };
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
      return { _tag: 'bad_request', provider, message: text };
    default:
      return { _tag: 'server_error', provider, message: text, status: 500 };
  }
}

type OpenBlock =
  | {
      readonly kind: 'tool';
      readonly id: string;
      readonly name: string;
      readonly start: unknown;
      json: string;
      sawJson: boolean;
    }
  | { readonly kind: 'thinking'; signature: string }
  | { readonly kind: 'other' };

class AnthropicDecoder implements StreamDecoder {
  readonly #context: DecoderContext;
  readonly #blocks = new Map<number, OpenBlock>();
  #inputTokens = 0;
  #outputTokens = 0;
  #cacheReadTokens = 0;
  #cacheWriteTokens = 0;
  #sawUsage = false;
  #stopReason: string | undefined;

  constructor(context: DecoderContext) {
    this.#context = context;
  }

  push(message: { readonly data: string }): readonly StreamEvent[] {
    const provider = this.#context.provider;
    const parsed = parseJson(message.data);
    if (parsed._tag === 'Left') return [protocolEvent(provider, `undecodable anthropic event: ${parsed.left.message}`)];
    const payload = parsed.right;
    const envelope = decode(Envelope, payload);
    if (envelope._tag === 'Left') return [protocolEvent(provider, 'anthropic event without a type')];
    const bad = (what: string): readonly StreamEvent[] => [protocolEvent(provider, `malformed ${what} event`)];
    switch (envelope.right.type) {
      case 'message_start': {
        const start = decode(MessageStart, payload);
        if (start._tag === 'Left') return bad('message_start');
        this.#addUsage(start.right.message.usage);
        return [];
      }
      case 'content_block_start': {
        const start = decode(BlockStart, payload);
        if (start._tag === 'Left') return bad('content_block_start');
        const block = start.right.content_block;
        if (block.type === 'tool_use' || block.type === 'server_tool_use') {
          this.#blocks.set(start.right.index, {
            kind: 'tool',
            id: block.id ?? `toolu_${start.right.index}`,
            name: block.name ?? '',
            start: block.input,
            json: '',
            sawJson: false,
          });
          return [];
        }
        if (block.type === 'thinking') {
          this.#blocks.set(start.right.index, { kind: 'thinking', signature: '' });
          return block.thinking != null && block.thinking !== ''
            ? [{ type: 'thinking_delta', text: block.thinking }]
            : [];
        }
        this.#blocks.set(start.right.index, { kind: 'other' });
        return block.type === 'text' && block.text != null && block.text !== ''
          ? [{ type: 'text_delta', text: block.text }]
          : [];
      }
      case 'content_block_delta': {
        const delta = decode(BlockDelta, payload);
        if (delta._tag === 'Left') return bad('content_block_delta');
        const { index } = delta.right;
        const body = delta.right.delta;
        const block = this.#blocks.get(index);
        if (body.type === 'text_delta' && body.text != null && body.text !== '')
          return [{ type: 'text_delta', text: body.text }];
        if (body.type === 'thinking_delta' && body.thinking != null && body.thinking !== '') {
          return [{ type: 'thinking_delta', text: body.thinking }];
        }
        if (body.type === 'signature_delta' && block?.kind === 'thinking') block.signature += body.signature ?? '';
        if (body.type === 'input_json_delta' && block?.kind === 'tool') {
          block.json += body.partial_json ?? '';
          block.sawJson = true;
        }
        return [];
      }
      case 'content_block_stop': {
        const stop = decode(BlockStop, payload);
        if (stop._tag === 'Left') return bad('content_block_stop');
        const block = this.#blocks.get(stop.right.index);
        this.#blocks.delete(stop.right.index);
        if (block?.kind === 'tool') {
          return [
            block.sawJson && block.json.trim() !== ''
              ? toolCallFromText(block.id, block.name, block.json)
              : toolCallFromValue(block.id, block.name, block.start),
          ];
        }
        if (block?.kind === 'thinking' && block.signature !== '')
          return [{ type: 'thinking_signature', signature: block.signature }];
        return [];
      }
      case 'message_delta': {
        const delta = decode(MessageDelta, payload);
        if (delta._tag === 'Left') return bad('message_delta');
        if (delta.right.delta.stop_reason != null) this.#stopReason = delta.right.delta.stop_reason;
        this.#addUsage(delta.right.usage);
        return [];
      }
      case 'message_stop': {
        const out: StreamEvent[] = [];
        if (this.#sawUsage) {
          const counts = tokenCounts({
            inputTokens: this.#inputTokens,
            outputTokens: this.#outputTokens,
            cacheReadTokens: this.#cacheReadTokens,
            cacheWriteTokens: this.#cacheWriteTokens,
          });
          out.push(usageEvent(counts, this.#context.prices));
        }
        const raw = this.#stopReason ?? 'unknown';
        out.push({ type: 'done', stopReason: STOP_REASONS[raw] ?? 'other', rawStopReason: raw });
        return out;
      }
      case 'error': {
        const error = decode(StreamErrorCodec, payload);
        const body = error._tag === 'Right' ? error.right.error : {};
        return [{ type: 'error', error: streamError(provider, body.type, body.message ?? 'error event in stream') }];
      }
      default:
        // ping, and event types added after this was written.
        return [];
    }
  }

  end(): readonly StreamEvent[] {
    return [truncatedEvent(this.#context.provider, 'message_stop')];
  }

  /** message_start carries input usage, message_delta the running output count (both cumulative). */
  #addUsage(usage: t.TypeOf<typeof UsageCodec> | null | undefined): void {
    if (usage == null) return;
    this.#sawUsage = true;
    if (usage.input_tokens != null) this.#inputTokens = usage.input_tokens;
    if (usage.output_tokens != null) this.#outputTokens = usage.output_tokens;
    if (usage.cache_read_input_tokens != null) this.#cacheReadTokens = usage.cache_read_input_tokens;
    if (usage.cache_creation_input_tokens != null) this.#cacheWriteTokens = usage.cache_creation_input_tokens;
  }
}

export function anthropicDialect(): Dialect {
  return {
    name: 'anthropic',
    buildExchange(baseUrl, request, key) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'anthropic-version': ANTHROPIC_VERSION,
      };
      if (key !== undefined) headers['x-api-key'] = key;
      return {
        url: joinUrl(baseUrl, 'messages'),
        method: 'POST',
        headers,
        body: JSON.stringify(anthropicBody(request)),
      };
    },
    createDecoder: (context) => new AnthropicDecoder(context),
  };
}
