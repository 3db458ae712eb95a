/** An in-memory provider that plays one scripted event list per call and records the requests. */
import type { ModelProvider, ModelRequest, StreamEvent } from '../src/index.js';

export interface FakeProvider extends ModelProvider {
  readonly requests: ModelRequest[];
}

export function fakeProvider(id: string, ...turns: (readonly StreamEvent[])[]): FakeProvider {
  const requests: ModelRequest[] = [];
  let call = 0;
  return {
    id,
    requests,
    async *stream(request) {
      requests.push(request);
      const turn = turns[Math.min(call, turns.length - 1)] ?? [];
      call += 1;
      yield* turn;
    },
  };
}

export const ok = (text: string): StreamEvent[] => [
  { type: 'text_delta', text },
  {
    type: 'usage',
    inputTokens: 100,
    outputTokens: 10,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costMicroDollars: 450,
    priced: true,
  },
  { type: 'done', stopReason: 'end_turn', rawStopReason: 'end_turn' },
];

export const fail = (provider: string, error: Record<string, unknown> & { _tag: string }): StreamEvent[] => [
  { type: 'error', error: { provider, message: error._tag, ...error } as never },
];
