/**
 * Folds one turn's events into the provider-neutral assistant message that
 * goes into history, so the next request — to this provider or another —
 * carries exactly what the model produced. Deltas are merged into parts;
 * Anthropic's thinking signature attaches to the thinking it closes.
 */
import type { DoneEvent, ErrorEvent, StreamEvent, ToolCallErrorEvent, UsageEvent } from './events.js';
import type { AssistantMessage, AssistantPart } from './request.js';

export interface AssembledTurn {
  readonly message: AssistantMessage;
  /** Calls whose arguments were not a JSON object: not in `message`; the agent answers them with an error result. */
  readonly toolCallErrors: readonly ToolCallErrorEvent[];
  readonly usage?: UsageEvent;
  /** Undefined only if the events were cut short before any terminal event. */
  readonly terminal?: DoneEvent | ErrorEvent;
}

export function assembleTurn(events: Iterable<StreamEvent>): AssembledTurn {
  const parts: AssistantPart[] = [];
  const toolCallErrors: ToolCallErrorEvent[] = [];
  let usage: UsageEvent | undefined;
  let terminal: DoneEvent | ErrorEvent | undefined;
  for (const event of events) {
    const last = parts[parts.length - 1];
    switch (event.type) {
      case 'text_delta':
        if (last?.type === 'text') parts[parts.length - 1] = { type: 'text', text: last.text + event.text };
        else parts.push({ type: 'text', text: event.text });
        break;
      case 'thinking_delta':
        if (last?.type === 'thinking' && last.signature === undefined) {
          parts[parts.length - 1] = { type: 'thinking', text: last.text + event.text };
        } else parts.push({ type: 'thinking', text: event.text });
        break;
      case 'thinking_signature': {
        for (let index = parts.length - 1; index >= 0; index -= 1) {
          const part = parts[index];
          if (part?.type === 'thinking' && part.signature === undefined) {
            parts[index] = { ...part, signature: event.signature };
            break;
          }
        }
        break;
      }
      case 'tool_call':
        parts.push({
          type: 'tool_call',
          id: event.id,
          name: event.name,
          arguments: event.arguments,
          ...(event.signature === undefined ? {} : { signature: event.signature }),
        });
        break;
      case 'tool_call_error':
        toolCallErrors.push(event);
        break;
      case 'usage':
        usage = event;
        break;
      case 'done':
      case 'error':
        terminal = event;
        break;
      case 'retry':
        break;
    }
  }
  return {
    message: { role: 'assistant', content: parts },
    toolCallErrors,
    ...(usage === undefined ? {} : { usage }),
    ...(terminal === undefined ? {} : { terminal }),
  };
}

/** Drains a stream and assembles it. Bounded by the provider's own limits (it always terminates). */
export async function collectTurn(
  stream: AsyncIterable<StreamEvent>,
): Promise<{ readonly events: StreamEvent[]; readonly turn: AssembledTurn }> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, turn: assembleTurn(events) };
}
