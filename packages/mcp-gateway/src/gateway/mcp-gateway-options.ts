/** How a gateway is set up for one task. */
import type { ToolExecution, ToolGate } from '@crustcore/agent';
import type { SandboxExecCap } from '@crustcore/sandbox';
import type { Redactor, SecretStore } from '@crustcore/secrets';
import type { RegistryFile } from '../registry/server-record.js';

/** The bounds a gateway applies when its options name none. */
export const GATEWAY_DEFAULTS = { maxResultChars: 16_000, maxArgumentBytes: 64 * 1024 } as const;

/** A tool's answer as plain text (a refusal, a listing, a note): what the model sees, and its size. */
export const textExecution = (text: string, ok: boolean): ToolExecution => ({
  text,
  ok,
  outputBytes: Buffer.byteLength(text),
});

export interface GatewayOptions {
  /** Read on every use, so a person's approval takes effect in a running task. */
  readonly registry: () => RegistryFile;
  /** The repository the task belongs to (records list the repositories allowed to use them). */
  readonly repository: string;
  /** The task worktree: bound read-write into stdio servers' sandboxes. */
  readonly worktree: string;
  readonly secrets: Pick<SecretStore, 'get'> | null;
  readonly redactor: Redactor;
  readonly wrap: (source: string, text: string) => string;
  readonly maxResultChars?: number;
  readonly maxArgumentBytes?: number;
  /** Told each time a server is started (diagnostics, tests, the benchmark). */
  readonly onStart?: (server: string) => void;
  /**
   * False: a server that stopped (a timeout, a crash) is not started again. For a worker's run: the
   * worktree a server would start from again is the worker's by then, and could hold its code.
   */
  readonly restart?: boolean;
  /** Code mode (`mcp_code`): offered only when given, because its calls need the task's gate and sandbox. */
  readonly codeMode?: CodeModeOptions;
}

/** What code mode needs of the task: its kernel gate (each inner call) and its sandbox (the script). */
export interface CodeModeOptions {
  /** The task's gate: every call a script makes is a kernel tool call through it. */
  readonly gate: ToolGate;
  /** The task's worker capability; scripts run only where it is bubblewrap. */
  readonly workerCap: () => SandboxExecCap;
  /** A script's wall-clock bound (default 120 s; a person's approval of an inner call counts). */
  readonly timeoutMs?: number;
  /** Told the endpoint's socket path when a script's endpoint is served (tests, diagnostics). */
  readonly onServe?: (socketPath: string) => void;
}
