/**
 * The one event vocabulary every provider speaks. A stream yields zero or more
 * content events, at most one `usage`, and then exactly one terminal event
 * (`done` or `error`). Providers never throw: every failure is an `error`
 * event whose `error._tag` is stable and documented in docs/providers.md.
 */
import type { Json } from '@crustcore/kernel';

// ─── model ────────────────────────────────────────────────────────────────

/** Arguments of a tool call: always a JSON object once parsed. */
export type JsonObject = { readonly [key: string]: Json };

/** Why the model stopped, normalized across providers. `raw` keeps the wire value. */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'content_filter' | 'stop_sequence' | 'other';

export type ProviderError =
  | {
      readonly _tag: 'rate_limited';
      readonly provider: string;
      readonly message: string;
      readonly retryAfterMs?: number;
    }
  | { readonly _tag: 'server_error'; readonly provider: string; readonly message: string; readonly status: number }
  /** No response headers within the first-byte timeout, or the whole request exceeded its total timeout. */
  | {
      readonly _tag: 'timeout';
      readonly provider: string;
      readonly message: string;
      readonly phase: 'first_byte' | 'total';
      readonly timeoutMs: number;
    }
  /** Headers arrived, then no byte at all for `idleMs`. */
  | { readonly _tag: 'stalled'; readonly provider: string; readonly message: string; readonly idleMs: number }
  /** The byte stream ended cleanly but without the protocol's terminal event. */
  | { readonly _tag: 'truncated'; readonly provider: string; readonly message: string }
  | { readonly _tag: 'auth'; readonly provider: string; readonly message: string; readonly status?: number }
  | { readonly _tag: 'bad_request'; readonly provider: string; readonly message: string; readonly status?: number }
  | { readonly _tag: 'network'; readonly provider: string; readonly message: string }
  /** The server sent bytes we could not decode (bad JSON, oversize event, unknown shape). */
  | { readonly _tag: 'protocol'; readonly provider: string; readonly message: string }
  /** The caller's AbortSignal fired. */
  | { readonly _tag: 'aborted'; readonly provider: string; readonly message: string }
  | {
      readonly _tag: 'budget_exhausted';
      readonly provider: string;
      readonly message: string;
      readonly spentMicroDollars: number;
      readonly ceilingMicroDollars: number;
    }
  | {
      readonly _tag: 'replay_divergence';
      readonly provider: string;
      readonly message: string;
      readonly turn: number;
      readonly expectedHash?: string;
      readonly actualHash?: string;
    }
  /** A bug in this package, caught at the stream boundary instead of thrown. */
  | { readonly _tag: 'internal'; readonly provider: string; readonly message: string };

export type ProviderErrorTag = ProviderError['_tag'];

export interface TextDeltaEvent {
  readonly type: 'text_delta';
  readonly text: string;
}
export interface ThinkingDeltaEvent {
  readonly type: 'thinking_delta';
  readonly text: string;
}
/** Closes a thinking block with the provider's opaque signature (Anthropic), to echo back in history. */
export interface ThinkingSignatureEvent {
  readonly type: 'thinking_signature';
  readonly signature: string;
}
export interface ToolCallEvent {
  readonly type: 'tool_call';
  readonly id: string;
  readonly name: string;
  readonly arguments: JsonObject;
  /** Opaque provider signature to echo back with this call (Gemini thoughtSignature). */
  readonly signature?: string;
}
/** The model asked for a tool but its arguments are not a JSON object; `raw` is what it sent. */
export interface ToolCallErrorEvent {
  readonly type: 'tool_call_error';
  readonly id: string;
  readonly name: string;
  readonly raw: string;
  readonly message: string;
}
/**
 * Tokens of one model turn. `inputTokens` excludes cached tokens on every
 * provider (OpenAI and Gemini count them inside the prompt total; we subtract).
 * Cost is in micro-dollars (1e-6 USD), rounded up, from the registry's price
 * table; `priced` is false when no price was known and the cost is 0.
 */
export interface UsageEvent {
  readonly type: 'usage';
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly costMicroDollars: number;
  readonly priced: boolean;
}
/** A meta-provider is about to try again (same or another provider) after `cause`. */
export interface RetryEvent {
  readonly type: 'retry';
  readonly attempt: number;
  readonly delayMs: number;
  readonly from: { readonly provider: string; readonly model: string };
  readonly to: { readonly provider: string; readonly model: string };
  readonly cause: ProviderError;
}
export interface DoneEvent {
  readonly type: 'done';
  readonly stopReason: StopReason;
  readonly rawStopReason?: string;
}
export interface ErrorEvent {
  readonly type: 'error';
  readonly error: ProviderError;
}

export type StreamEvent =
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | ThinkingSignatureEvent
  | ToolCallEvent
  | ToolCallErrorEvent
  | UsageEvent
  | RetryEvent
  | DoneEvent
  | ErrorEvent;

export type StreamEventType = StreamEvent['type'];

// ─── constructors ─────────────────────────────────────────────────────────

export const errorEvent = (error: ProviderError): ErrorEvent => ({ type: 'error', error });

// ─── guards ───────────────────────────────────────────────────────────────

export const isTerminalEvent = (event: StreamEvent): event is DoneEvent | ErrorEvent =>
  event.type === 'done' || event.type === 'error';

/**
 * Events that carry model output. Once one of these reached the consumer, a
 * meta-provider can no longer retry transparently: the consumer has seen it.
 */
export const isContentEvent = (event: StreamEvent): boolean =>
  event.type === 'text_delta' ||
  event.type === 'thinking_delta' ||
  event.type === 'thinking_signature' ||
  event.type === 'tool_call' ||
  event.type === 'tool_call_error';
