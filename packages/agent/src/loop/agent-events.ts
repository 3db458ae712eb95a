/**
 * What the loop reports while it works, for a REPL, `--output-format
 * stream-json` or a test. Text fields carry model output and tool summaries;
 * they are for display (sanitize before printing to a terminal), never input
 * to anything with authority.
 */
export type AgentEvent =
  | { readonly type: 'attempt_start'; readonly attempt: number; readonly sessionId: string | null }
  | { readonly type: 'turn_start'; readonly turn: number; readonly actor: 'agent' | 'subagent' }
  | { readonly type: 'text_delta'; readonly text: string; readonly actor: 'agent' | 'subagent' }
  | { readonly type: 'thinking_delta'; readonly text: string; readonly actor: 'agent' | 'subagent' }
  | {
      readonly type: 'tool_call';
      readonly id: string;
      readonly tool: string;
      readonly summary: string;
      readonly actor: 'agent' | 'subagent';
    }
  | {
      readonly type: 'tool_result';
      readonly id: string;
      readonly tool: string;
      readonly status: 'ok' | 'failed' | 'denied' | 'invalid' | 'skipped' | 'stopped';
      readonly summary: string;
      readonly actor: 'agent' | 'subagent';
    }
  | {
      readonly type: 'usage';
      readonly inputTokens: number;
      readonly outputTokens: number;
      readonly costMicros: number;
      /** False when the model's price was unknown and `costMicros` is 0 for that reason, not because it was free. */
      readonly priced: boolean;
      readonly totalTokens: number;
      readonly totalCostMicros: number;
      readonly contextTokens: number;
    }
  | {
      readonly type: 'compaction';
      readonly outcome: 'compacted' | 'no-gain';
      readonly tokensBefore: number;
      readonly tokensAfter: number;
    }
  | { readonly type: 'steered'; readonly text: string }
  | { readonly type: 'retry'; readonly detail: string }
  | { readonly type: 'model_error'; readonly tag: string; readonly message: string }
  | {
      readonly type: 'attempt_end';
      readonly outcome: string;
      readonly selfClaimedDone: boolean;
      readonly turns: number;
      readonly reason: string;
    };

export type AgentEventSink = (event: AgentEvent) => void;

/** Calls `sink` and swallows its failures: a broken display must not break the loop. */
export function safeEmit(sink: AgentEventSink | undefined, event: AgentEvent): void {
  if (sink === undefined) return;
  try {
    sink(event);
  } catch {
    // The display is not the agent's problem.
  }
}
