/**
 * The provider contract, and the boundary guard every implementation runs its
 * stream through so the contract holds even when an implementation has a bug:
 * nothing is thrown, exactly one terminal event ends the stream, and nothing
 * follows it.
 */
import { errorEvent, isTerminalEvent, type StreamEvent } from './events.js';
import type { ModelRequest } from './request.js';

export interface ModelProvider {
  /** Registry id (`anthropic`, `local`) or a meta-provider's composed name. */
  readonly id: string;
  /**
   * Streams one model turn. Never throws and never rejects: failures are
   * `error` events. The iterable ends right after its one terminal event.
   */
  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent>;
}

const describe = (thrown: unknown): string => (thrown instanceof Error ? thrown.message : String(thrown));

/**
 * Wraps a raw event source: converts a throw into an `internal` error event,
 * stops after the first terminal event (closing the source), and reports a
 * source that ends without a terminal event as `truncated`.
 */
export async function* guardStream(
  provider: string,
  source: () => AsyncIterable<StreamEvent>,
): AsyncGenerator<StreamEvent, void, undefined> {
  try {
    for await (const event of source()) {
      yield event;
      if (isTerminalEvent(event)) return;
    }
  } catch (thrown) {
    yield errorEvent({ _tag: 'internal', provider, message: `provider stream threw: ${describe(thrown)}` });
    return;
  }
  yield errorEvent({ _tag: 'truncated', provider, message: 'provider stream ended without a terminal event' });
}
