/**
 * Tool-call arguments arrive as JSON text streamed in fragments. A model can
 * emit broken JSON; that is the model's mistake for the agent to handle, so it
 * becomes a `tool_call_error` event carrying the raw text — never a throw.
 */
import type { Json } from '@crustcore/kernel';
import type { JsonObject, ToolCallErrorEvent, ToolCallEvent } from './events.js';

const isJsonObject = (value: Json): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function toolCallFromText(
  id: string,
  name: string,
  raw: string,
  signature?: string,
): ToolCallEvent | ToolCallErrorEvent {
  // Some endpoints send "" for a tool without parameters.
  if (raw.trim() === '') return withSignature({ type: 'tool_call', id, name, arguments: {} }, signature);
  let parsed: Json;
  try {
    parsed = JSON.parse(raw) as Json;
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message : 'invalid JSON';
    return { type: 'tool_call_error', id, name, raw, message: `arguments are not valid JSON: ${reason}` };
  }
  if (!isJsonObject(parsed)) {
    return { type: 'tool_call_error', id, name, raw, message: 'arguments are not a JSON object' };
  }
  return withSignature({ type: 'tool_call', id, name, arguments: parsed }, signature);
}

/** For wire formats that send arguments already parsed (Anthropic's `input` start value, Gemini's `args`). */
export function toolCallFromValue(
  id: string,
  name: string,
  value: unknown,
  signature?: string,
): ToolCallEvent | ToolCallErrorEvent {
  if (value === undefined || value === null)
    return withSignature({ type: 'tool_call', id, name, arguments: {} }, signature);
  if (typeof value === 'object' && !Array.isArray(value)) {
    return withSignature({ type: 'tool_call', id, name, arguments: value as JsonObject }, signature);
  }
  const raw = typeof value === 'string' ? value : JSON.stringify(value);
  return { type: 'tool_call_error', id, name, raw, message: 'arguments are not a JSON object' };
}

const withSignature = (event: ToolCallEvent, signature: string | undefined): ToolCallEvent =>
  signature === undefined ? event : { ...event, signature };
