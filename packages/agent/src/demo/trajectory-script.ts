/**
 * Builds trajectories (net's recorded-turn format) from a short script of
 * model turns: what the "model" says and which tools it calls. Used for the
 * demo's embedded recording and by tests that need a scripted model.
 */
import type { JsonObject, ProviderError, StreamEvent, Trajectory, TrajectoryTurn } from '@crustcore/net';

export interface ScriptedTurn {
  readonly text?: string;
  readonly thinking?: string;
  readonly calls?: readonly { readonly name: string; readonly arguments: JsonObject }[];
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly costMicroDollars?: number };
  /** Ends the turn with a provider error instead of `done`. */
  readonly error?: { readonly _tag: 'server_error' | 'auth'; readonly message: string };
}

export function scriptedTrajectory(turns: readonly ScriptedTurn[], model = 'scripted-model'): Trajectory {
  let callNumber = 0;
  const built: TrajectoryTurn[] = turns.map((turn) => {
    const events: StreamEvent[] = [];
    if (turn.thinking !== undefined) events.push({ type: 'thinking_delta', text: turn.thinking });
    if (turn.text !== undefined) events.push({ type: 'text_delta', text: turn.text });
    for (const call of turn.calls ?? []) {
      callNumber += 1;
      events.push({ type: 'tool_call', id: `call_${callNumber}`, name: call.name, arguments: call.arguments });
    }
    const usage = turn.usage ?? { inputTokens: 1_000, outputTokens: 100 };
    events.push({
      type: 'usage',
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costMicroDollars: usage.costMicroDollars ?? 0,
      priced: usage.costMicroDollars !== undefined,
    });
    if (turn.error !== undefined) {
      const error: ProviderError =
        turn.error._tag === 'server_error'
          ? { _tag: 'server_error', provider: 'scripted', message: turn.error.message, status: 500 }
          : { _tag: 'auth', provider: 'scripted', message: turn.error.message };
      events.push({ type: 'error', error });
    } else {
      events.push({ type: 'done', stopReason: (turn.calls ?? []).length > 0 ? 'tool_use' : 'end_turn' });
    }
    return { model, events };
  });
  return { version: 1, turns: built };
}
