/**
 * One sandboxed run of the verify argv in a worktree: its environment is
 * worked out for the tree there (dependency binds, toolchain PATH), then the
 * run starts under the verify profile.
 *
 * `runAhead` starts that run before the patch is applied, held at a start
 * gate (see StartGate in @crustcore/sandbox): the sandbox's cgroups,
 * namespaces and mounts, ~40 ms, are then made while the patch is applied and
 * checked instead of after. It goes only when the environment worked out on
 * the patched tree is exactly the one it was set up with; otherwise it is
 * withdrawn and a run is started as usual.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import { runSandboxed, type SandboxExecCap, type SandboxedResult } from '@crustcore/sandbox';
import type { Argv } from './argv.js';
import { changesEnvironmentInputs } from './environment/environment-inputs.js';
import { environmentForWorktree } from './environment/run-environment.js';
import { crustcoreHome } from './home.js';
import type { UnverifiedPatch } from './patch.js';
import { parseTestCounts } from './test-counts.js';
import type { VerifyError, VerifyRequest, VerifyRun } from './verify-types.js';
import type { TaskWorktree } from './worktree.js';

/** What a run needs from the request. */
export type RunRequest = Pick<
  VerifyRequest,
  'argv' | 'env' | 'timeoutMs' | 'maxOutputBytes' | 'signal' | 'observer' | 'environment' | 'home'
>;

export interface RanInWorktree {
  readonly run: VerifyRun;
  readonly result: SandboxedResult;
  readonly environmentHash: string | null;
}

/** A run's capability (with its environment's binds) and variables, as worked out for one tree. */
interface RunSetup {
  readonly cap: SandboxExecCap;
  readonly env: Readonly<Record<string, string>> | undefined;
  readonly environmentHash: string | null;
  /** The dependency binds' worktree paths (a patch touching one could move a mount point). */
  readonly boundPaths: readonly string[];
  /** Equal for two setups exactly when a run started from either would be the same. */
  readonly identity: string;
}

function toRun(argv: Argv, result: SandboxedResult): VerifyRun {
  return {
    argv,
    profile: result.profile,
    backend: result.backend,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    stdoutSha256: result.stdout.sha256,
    stderrSha256: result.stderr.sha256,
    stdoutText: result.stdout.text,
    stderrText: result.stderr.text,
    testCounts: parseTestCounts(result.stdout.text, result.stderr.text),
  };
}

/** Works the run's environment out for the tree in the worktree; `copyFiles` false leaves the extra files out. */
async function setUpRun(
  baseCap: SandboxExecCap,
  worktree: TaskWorktree,
  request: RunRequest,
  copyFiles = true,
): Promise<Result<VerifyError, RunSetup>> {
  if (request.environment === undefined) {
    const env = request.env;
    return ok({ cap: baseCap, env, environmentHash: null, boundPaths: [], identity: JSON.stringify([env ?? null]) });
  }
  const home = request.home ?? crustcoreHome();
  const prepared = await environmentForWorktree(
    baseCap,
    request.environment,
    worktree.path,
    home,
    request.signal,
    copyFiles,
  );
  if (prepared._tag === 'Left')
    return err({ _tag: 'EnvironmentFailed', message: prepared.left.message, output: prepared.left.output });
  const { cap } = prepared.right;
  // The caller's PATH wins; otherwise the environment's (dependency bins, then the user's tools).
  const env = { PATH: prepared.right.path, ...(request.env ?? {}) };
  const environmentHash = prepared.right.prepared.hash;
  const boundPaths = cap.environment.worktree.map((bind) => bind.path);
  const identity = JSON.stringify([env, environmentHash, cap.environment]);
  return ok({ cap, env, environmentHash, boundPaths, identity });
}

function startRun(
  setup: RunSetup,
  worktree: TaskWorktree,
  request: RunRequest,
  startGate?: Promise<boolean>,
): Promise<Result<VerifyError, RanInWorktree>> {
  const running = runSandboxed(setup.cap, {
    argv: request.argv,
    worktreeRoot: worktree.path,
    cwd: worktree.path,
    ...(setup.env === undefined ? {} : { env: setup.env }),
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    ...(request.maxOutputBytes === undefined ? {} : { maxOutputBytes: request.maxOutputBytes }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.observer === undefined ? {} : { observer: request.observer }),
    ...(startGate === undefined ? {} : { startGate }),
  });
  return running.then((outcome) =>
    outcome._tag === 'Left'
      ? err({ _tag: 'SandboxRefused', message: outcome.left.message, fix: outcome.left.fix })
      : ok({ run: toRun(request.argv, outcome.right), result: outcome.right, environmentHash: setup.environmentHash }),
  );
}

/** Works the environment out for the worktree as it is now, then runs the argv there. */
export async function runInWorktree(
  baseCap: SandboxExecCap,
  worktree: TaskWorktree,
  request: RunRequest,
): Promise<Result<VerifyError, RanInWorktree>> {
  const setup = await setUpRun(baseCap, worktree, request);
  return setup._tag === 'Left' ? setup : startRun(setup.right, worktree, request);
}

/** A run set up ahead of the patch; exactly one of `runNow` and `withdraw` decides it, `withdraw` may follow. */
export interface RunAhead {
  /** Runs the argv in the worktree as it is now: the run set up ahead when it fits, else a new one. */
  runNow(): Promise<Result<VerifyError, RanInWorktree>>;
  /** Stops the run set up ahead if it has not gone, and waits until it is gone. */
  withdraw(): Promise<void>;
}

const overlapsPath = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** Whether a patch path is, contains or lies under a dependency bind's mount point. */
function touchesBinds(patch: UnverifiedPatch, boundPaths: readonly string[]): boolean {
  return patch.files.some((file) =>
    [file.path, file.oldPath].some(
      (path) => path !== null && path !== undefined && boundPaths.some((bound) => overlapsPath(path, bound)),
    ),
  );
}

/**
 * Sets the run up in the worktree before `patch` is applied there, when the patch changes
 * nothing the environment is made from or mounted at; null otherwise (the caller runs as usual).
 */
export async function runAhead(
  baseCap: SandboxExecCap,
  worktree: TaskWorktree,
  request: RunRequest,
  patch: UnverifiedPatch,
): Promise<RunAhead | null> {
  // Nano, the smallest trusted build, verifies the plain way: this is speed, not safety (the bundler drops the rest).
  if ((globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO === true) return null;
  if (changesEnvironmentInputs(patch)) return null;
  const early = await setUpRun(baseCap, worktree, request, false);
  // A setup that fails here fails again after the patch, where it is reported.
  if (early._tag === 'Left' || touchesBinds(patch, early.right.boundPaths)) return null;
  let decide: (go: boolean) => void = () => {};
  const gate = new Promise<boolean>((resolve) => {
    decide = resolve;
  });
  const held = startRun(early.right, worktree, request, gate);
  const withdraw = async (): Promise<void> => {
    decide(false);
    await held;
  };
  return {
    withdraw,
    runNow: async () => {
      const now = await setUpRun(baseCap, worktree, request);
      if (now._tag === 'Right' && now.right.identity === early.right.identity) {
        decide(true);
        return held;
      }
      await withdraw();
      return now._tag === 'Left' ? now : startRun(now.right, worktree, request);
    },
  };
}
