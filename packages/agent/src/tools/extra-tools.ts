/**
 * Tools that come from outside the agent (the MCP gateway's), offered to the
 * model next to the native ones. They are planned like native tools — an
 * operation for the kernel and an `execute` the runtime runs only when the
 * kernel allows — and go through the same `ToolGate`: no extra tool has a
 * door of its own. The set may grow during a run (a described MCP tool joins
 * the definitions), so the loop asks for the definitions before every turn.
 */
import type { Operation } from '@crustcore/kernel';
import type { ToolDefinition } from '@crustcore/net';
import type { ToolExecution } from '../tool-gate.js';

export interface ExtraToolPlan {
  readonly operation: Operation;
  /** True when the call changes nothing (it may run beside other read-only calls). */
  readonly readOnly: boolean;
  readonly execute: (signal: AbortSignal) => Promise<ToolExecution>;
}

export type ExtraToolPlanned =
  | { readonly kind: 'plan'; readonly plan: ExtraToolPlan }
  | { readonly kind: 'invalid'; readonly message: string };

export interface ExtraTools {
  /** The definitions to offer the model now. */
  definitions(): readonly ToolDefinition[];
  /** Plans a call to one of these tools; null when `name` is not one of them. */
  plan(name: string, args: unknown): ExtraToolPlanned | null;
  /** Ends what the tools started (servers); called after each attempt. */
  close?(): Promise<void>;
}

/** Builds the extra tools for one task worktree (the path the tools may work in). */
export type ExtraToolsFactory = (worktree: string) => ExtraTools;
