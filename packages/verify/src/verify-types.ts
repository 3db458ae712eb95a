/**
 * The shapes verification speaks in: what it is asked (VerifyRequest), what a
 * sandboxed run of the verify argv reports (VerifyRun), how it ends
 * (VerifyOutcome) and why it could not be carried out (VerifyError).
 */
import type { RunObserver } from '@crustcore/sandbox';
import type { Argv } from './argv.js';
import type { Diagnosis } from './diagnosis.js';
import type { EnvironmentContext } from './environment/run-environment.js';
import type { GitFailure } from './git.js';
import type { UnverifiedPatch } from './patch.js';
import type { TestCounts } from './test-counts.js';
import type { VerifiedPatch } from './verified-patch.js';
import type { Repository, TaskWorktree } from './worktree.js';

/** What a verify run produced, success or not (bounded: output is summarized by hashes and a diagnosis). */
export interface VerifyRun {
  readonly argv: Argv;
  readonly profile: string;
  readonly backend: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  readonly stdoutSha256: string;
  readonly stderrSha256: string;
  /** Bounded tails of the logs (the sandbox's head+tail capture), for people. */
  readonly stdoutText: string;
  readonly stderrText: string;
  readonly testCounts: TestCounts | null;
}

export type VerifyOutcome =
  | { readonly _tag: 'Verified'; readonly verified: VerifiedPatch; readonly run: VerifyRun }
  | { readonly _tag: 'Failed'; readonly diagnosis: Diagnosis; readonly run: VerifyRun };

export type VerifyError =
  | { readonly _tag: 'WrongProfile'; readonly profile: string; readonly message: string }
  | { readonly _tag: 'CommandNeedsApproval'; readonly argvHash: string; readonly message: string }
  | { readonly _tag: 'CommandDenied'; readonly message: string }
  | { readonly _tag: 'PatchHashMismatch'; readonly message: string }
  | { readonly _tag: 'PatchDoesNotApply'; readonly message: string; readonly stderr: string }
  | { readonly _tag: 'TreeMismatch'; readonly expected: string; readonly actual: string; readonly message: string }
  | { readonly _tag: 'SandboxRefused'; readonly message: string; readonly fix: string | null }
  | { readonly _tag: 'WorktreeFailed'; readonly message: string }
  | { readonly _tag: 'EnvironmentFailed'; readonly message: string; readonly output: string }
  | GitFailure;

export interface VerifyRequest {
  readonly repo: Repository;
  readonly taskId: string;
  readonly patch: UnverifiedPatch;
  readonly argv: Argv;
  /** Caller's clock: stamped into the evidence (the verify package never picks the time). */
  readonly nowMs: number;
  /** From `runBaselineVerify` on the base; enables the test-count comparison. */
  readonly baseline?: BaselineRun | null;
  /** Argv hashes the user approved for commands the verify profile does not recognize. */
  readonly approvedArgvHashes?: ReadonlySet<string>;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
  readonly signal?: AbortSignal;
  /** Live events of the sandboxed run (it started, output totals); see RunObserver. */
  readonly observer?: RunObserver;
  readonly home?: string;
  /** Save the patch and evidence under $CRUSTCORE_HOME/patches/<taskId> (default true). */
  readonly save?: boolean;
  /** Dependencies and toolchain for the run (prepared for the patched tree); none without it. */
  readonly environment?: EnvironmentContext;
  /** Take the worktree from the warm pool (reset to the base) instead of a fresh checkout. */
  readonly pool?: boolean;
  /**
   * A verify worktree the caller made ready beforehand (while the worker ran). Used only when it
   * is a verify worktree of this task and repository at the patch's base; verification then owns
   * it and removes (or releases) it like one of its own.
   */
  readonly prepared?: TaskWorktree | null;
}

export interface BaselineRun {
  readonly baseCommit: string;
  readonly run: VerifyRun;
}
