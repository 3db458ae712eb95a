/**
 * Provider-neutral request and message shapes. History is kept in this form
 * and converted per provider on every request, which is what lets a session
 * switch provider between turns (Anthropic on turn 1, OpenAI on turn 2).
 */
import type { Json } from '@crustcore/kernel';
import type { JsonObject } from './events.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface UserMessage {
  readonly role: 'user';
  readonly content: string;
}

export interface TextPart {
  readonly type: 'text';
  readonly text: string;
}
/** Model reasoning. Only Anthropic accepts it back, and only with its signature. */
export interface ThinkingPart {
  readonly type: 'thinking';
  readonly text: string;
  readonly signature?: string;
}
export interface ToolCallPart {
  readonly type: 'tool_call';
  readonly id: string;
  readonly name: string;
  readonly arguments: JsonObject;
  /** Gemini's thoughtSignature for this call; other providers ignore it. */
  readonly signature?: string;
}
export type AssistantPart = TextPart | ThinkingPart | ToolCallPart;

export interface AssistantMessage {
  readonly role: 'assistant';
  readonly content: readonly AssistantPart[];
}

/** The result of one tool call. `toolName` is required because Gemini matches results by name. */
export interface ToolResultMessage {
  readonly role: 'tool';
  readonly toolCallId: string;
  readonly toolName: string;
  readonly content: string;
  readonly isError?: boolean;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object (`type: "object"`). */
  readonly parameters: { readonly [key: string]: Json };
}

export type ThinkingLevel = 'off' | 'low' | 'medium' | 'high';

export interface CacheHints {
  /** Mark the system prompt (and the tool definitions before it) cacheable. Default true. */
  readonly system?: boolean;
  /**
   * Index in `messages` of the last message whose content later requests will
   * repeat unchanged. Default: the last message. -1 places no message breakpoint.
   */
  readonly lastStableMessageIndex?: number;
  /** Sticky key for providers with automatic prefix caching (OpenAI `prompt_cache_key`). */
  readonly key?: string;
}

/** Routing hints read by RouterProvider; plain providers ignore them. */
export interface RouteHints {
  readonly role?: string;
}

export interface ModelRequest {
  readonly model: string;
  readonly system: string;
  readonly messages: readonly Message[];
  readonly tools: readonly ToolDefinition[];
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly thinking?: ThinkingLevel;
  readonly cache?: CacheHints;
  readonly route?: RouteHints;
}

// ─── combinators ──────────────────────────────────────────────────────────

/** The last user or tool message: what a turn is "about", used to fingerprint requests for replay. */
export function lastInputMessage(request: ModelRequest): UserMessage | ToolResultMessage | undefined {
  for (let index = request.messages.length - 1; index >= 0; index -= 1) {
    const message = request.messages[index];
    if (message !== undefined && message.role !== 'assistant') return message;
  }
  return undefined;
}

/** Same request, other model: what a fallback chain does when it moves to the next candidate. */
export const withModel = (request: ModelRequest, model: string): ModelRequest =>
  request.model === model ? request : { ...request, model };
