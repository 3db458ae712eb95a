/**
 * The agent's only way to make anything happen. The native agent proposes a
 * tool call; the runtime (crustcore) records it as a `ToolCallRequested`
 * event, the kernel's policy allows, asks or denies it, an approval (if
 * needed) comes from a human channel, and only then does `execute` run.
 * The result comes back as a `ReceiptedToolOutput` (a MAC'd receipt is the
 * only way to build one), and a denial comes back as a reason to tell the
 * model. The runtime implements this interface; the agent never sees the
 * kernel, the ledger or an approval token.
 */
import type { Json, Operation } from '@crustcore/kernel';
import type { ReceiptedToolOutput } from '@crustcore/ledger';

/** What running a tool produced, before the runtime receipts it. */
export interface ToolExecution {
  /** Text the model may see (the runtime redacts it before receipting). */
  readonly text: string;
  readonly ok: boolean;
  /** Bytes the tool produced in total (budgeted by the kernel). */
  readonly outputBytes: number;
  /** Optional large payloads stored as artifacts (hashes go in the receipt). */
  readonly artifacts?: readonly Uint8Array[];
}

export interface ToolCallRequest {
  /** The tool's name as the model called it. */
  readonly tool: string;
  /** The model's arguments (hashed into the receipt). */
  readonly args: Json;
  /** What the call would do, as the kernel's policy understands it. */
  readonly operation: Operation;
  readonly actor: 'agent' | 'subagent';
  /** Runs the tool. Called only when the kernel said ExecuteTool. */
  readonly execute: (signal: AbortSignal) => Promise<ToolExecution>;
}

export type ToolCallOutcome =
  | { readonly kind: 'result'; readonly output: ReceiptedToolOutput }
  | { readonly kind: 'denied'; readonly reason: string }
  /** The task was stopped (killed, cancelled, budget spent): end the turn. */
  | { readonly kind: 'stopped'; readonly reason: string };

export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costMicros: number;
}

export interface ToolGate {
  call(request: ToolCallRequest): Promise<ToolCallOutcome>;
  /** Reports a model turn's usage; `stop: true` means a budget ran out. */
  modelTurn(usage: ModelUsage): Promise<{ readonly stop: boolean; readonly reason: string | null }>;
  /** Asks for a subagent; the kernel carves its budget from the parent's. */
  spawnSubagent(
    role: string,
  ): Promise<{ readonly allowed: boolean; readonly reason: string | null; readonly subagentId: string }>;
  /**
   * A person's steering line, before the agent reads it: the runtime records it as a kernel
   * `UserSteered` event. `accepted: false` means the task is no longer working (drop the line).
   */
  steered(text: string): Promise<{ readonly accepted: boolean }>;
}
