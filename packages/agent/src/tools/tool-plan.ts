/**
 * A tool call, planned: the kernel operation it amounts to, what it reads or
 * writes (for context bookkeeping), and the function the runtime runs only
 * if the kernel allows it.
 */
import type { Operation } from '@crustcore/kernel';
import type { ToolExecution } from '../tool-gate.js';

export interface ToolPlan {
  readonly operation: Operation;
  /** Worktree path whose content the result shows (read_file), for stale-read tombstones. */
  readonly reads: string | null;
  /** Worktree path the call changes when it succeeds (write_file, edit_file). */
  readonly writes: string | null;
  /** True when the call may change the worktree (writes, commands). */
  readonly mutates: boolean;
  readonly execute: (signal: AbortSignal) => Promise<ToolExecution>;
}

/** A tool execution result from text the model may see. */
export const execution = (text: string, ok: boolean): ToolExecution => ({
  text,
  ok,
  outputBytes: Buffer.byteLength(text),
});
