/**
 * The one backend contract. Native agent, external command, Codex and
 * Claude Code all take a `WorkerInput` and return a `BackendResult`. A
 * result is never "done": its patch is an `UnverifiedPatch` extracted from
 * the worktree by CrustCore, and only `verifyPatch` can make it verified.
 */
import * as t from 'io-ts';
import type { Diagnosis } from './diagnosis.js';
import type { PatchRejection, UnverifiedPatch } from './patch.js';
import type { Risk } from './risk.js';
import type { TaskWorktree } from './worktree.js';

/** What a backend is asked to do (the roadmap's worker input contract). */
export interface WorkerInput {
  readonly taskId: string;
  readonly goal: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Structured diagnosis of the previous failed verify, or null. */
  readonly previousDiagnosis: Diagnosis | null;
  /** Path prefixes relative to the worktree the patch may touch; [] = the whole worktree. */
  readonly allowedRoots: readonly string[];
  /** Path prefixes relative to the worktree the patch must not touch. */
  readonly forbiddenPaths: readonly string[];
  readonly maxSeconds: number;
  readonly maxOutputBytes: number;
  /**
   * Context from earlier work (repository memory, the repository capsule) for the first
   * attempt. Untrusted data: every prompt builder fences it and it changes no policy.
   */
  readonly priorObservations?: readonly PriorObservation[];
}

/** One piece of prior context: where it came from and its text (plain data, never instructions). */
export interface PriorObservation {
  readonly source: string;
  readonly text: string;
}

/** Host-side context: where to work. Not sent to the worker. */
export interface BackendContext {
  readonly worktree: TaskWorktree;
  readonly signal?: AbortSignal;
  /** $CRUSTCORE_HOME override (scratch files). */
  readonly home?: string;
  /**
   * Called once when the worker's process started (a backend without one: when it begins). The
   * caller then readies what verification needs beside it, so the worker's start waits for nothing.
   */
  readonly onStarted?: () => void;
}

export interface CommandRecord {
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  /** 'host': CrustCore ran it and saw the exit code. 'worker-claim': the worker says it ran it. */
  readonly source: 'host' | 'worker-claim';
}

export type PatchOutcome =
  | { readonly _tag: 'NoChanges' }
  | { readonly _tag: 'Patch'; readonly patch: UnverifiedPatch }
  | { readonly _tag: 'Rejected'; readonly rejection: PatchRejection }
  | { readonly _tag: 'ExtractFailed'; readonly message: string };

export interface Transcript {
  readonly stdoutText: string;
  readonly stderrText: string;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly stdoutSha256: string;
  readonly stderrSha256: string;
}

export interface BackendResult {
  readonly backend: string;
  /** The worker's own summary (≤ 4,000 chars); untrusted text. */
  readonly summary: string;
  readonly patch: PatchOutcome;
  /** What the worker claims; has no effect on verification. */
  readonly selfClaimedDone: boolean;
  readonly commandsRun: readonly CommandRecord[];
  /** Risks CrustCore found in the patch, then any the worker listed (as 'info', text only). */
  readonly risks: readonly Risk[];
  readonly workerRisks: readonly string[];
  readonly exit: {
    readonly exitCode: number | null;
    readonly signal: string | null;
    readonly timedOut: boolean;
    readonly cancelled: boolean;
    readonly durationMs: number;
  };
  /** Set when the worker never ran (sandbox refused it, or it could not start). */
  readonly failure: string | null;
  readonly transcript: Transcript;
}

/** A worker run's stop signal and, when the caller asked to hear of the start, the observer that tells it. */
export function workerRunHooks(
  context: BackendContext,
  signal: AbortSignal | undefined,
): { readonly signal?: AbortSignal; readonly observer?: { readonly started: () => void } } {
  return {
    ...(signal === undefined ? {} : { signal }),
    ...(context.onStarted === undefined ? {} : { observer: { started: context.onStarted } }),
  };
}

export interface CodingBackend {
  readonly name: string;
  /**
   * The work happens before `run` is called (an MCP client edits through tools for minutes, then
   * asks to verify): the baseline starts as soon as the workspace exists, not when `run` starts.
   */
  readonly worksBeforeRun?: boolean;
  run(input: WorkerInput, context: BackendContext): Promise<BackendResult>;
  /**
   * Releases what the backend holds for the task's whole life (a worker's MCP servers live across
   * attempts); called once when the task ends, however it ends. A process that still holds them
   * would never exit.
   */
  close?(): Promise<void>;
}

export const BACKEND_LIMITS = {
  summaryChars: 4000,
  claimBytes: 1024 * 1024,
  commands: 100,
  argvWords: 64,
  wordChars: 500,
  workerRisks: 20,
  riskChars: 500,
} as const;

/** What a worker may print as JSON (all optional). Everything else on stdout is transcript. */
export const WorkerClaimCodec = t.partial({
  summary: t.string,
  done: t.boolean,
  commands_run: t.array(t.union([t.string, t.array(t.string)])),
  risks: t.array(t.string),
});
export type WorkerClaim = t.TypeOf<typeof WorkerClaimCodec>;

function tryDecode(text: string): WorkerClaim | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const decoded = WorkerClaimCodec.decode(raw);
  return decoded._tag === 'Right' ? decoded.right : null;
}

/** The worker's JSON claim: the whole stdout, else its last line that parses. Null when there is none. */
export function decodeWorkerClaim(stdout: string): WorkerClaim | null {
  const trimmed = stdout.trim();
  if (trimmed === '' || trimmed.length > BACKEND_LIMITS.claimBytes) return null;
  const whole = tryDecode(trimmed);
  if (whole !== null) return whole;
  const lines = trimmed.split('\n');
  for (let i = lines.length - 1; i >= 0 && i >= lines.length - 200; i -= 1) {
    const line = (lines[i] as string).trim();
    if (!line.startsWith('{')) continue;
    const claim = tryDecode(line);
    if (claim !== null) return claim;
  }
  return null;
}
