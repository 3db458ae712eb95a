/**
 * Runs one claimed task job through the verified task runtime (`runTask`):
 * the user's repository, a sandboxed worker (an external command, or a pack
 * backend: Codex CLI, Claude Code, the native agent), sandboxed verify in a
 * fresh worktree, the daemon's approval desk, the apply journal and the
 * ledger under this daemon's $CRUSTCORE_HOME.
 *
 * Attempt 1 runs under the queued task id; a retry (after a lost lease or a
 * crash) runs as `<task>-a<attempt>`, so its ledger records and worktrees
 * never collide with a dead attempt's leftovers.
 */
import { type JobId, makeId, type TaskId } from '@crustcore/kernel';
import type { Narrator, RunTaskOptions, RunTaskResult, TaskOutcomeKind } from '@crustcore/runtime';
import { randomIds, runTask, SetupError } from '@crustcore/runtime';
import { type Argv, type CodingBackend, detectVerifyCommand, ExternalCommandBackend } from '@crustcore/verify';
import { jobStopSignal } from './job-stop-signal.js';
import type { JobRunResult, RunningJob } from './supervisor.js';
import type { PackBackendName, TaskJobResult } from './task-job.js';

/** What a pack backend is built from; the surface that hosts the daemon (the CLI) knows how. */
export interface BackendRequest {
  readonly name: PackBackendName;
  readonly goal: string;
  readonly model: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  /** The runtime's worker capability, ledger note and kernel-mediated tool gate for this task. */
  readonly runtime: Parameters<RunTaskOptions['makeBackend']>[0];
}

export type BackendLoader = (request: BackendRequest) => Promise<CodingBackend>;

export interface TaskJobContext {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly owner: string;
  /** Builds a pack backend (Codex CLI, Claude Code, the native agent) for a job that names one. */
  readonly loadBackend: BackendLoader;
  /** True for errors that fail the same way on every retry (bad options, a missing CLI or key). */
  readonly isSetupError?: (error: unknown) => boolean;
  /** Called with the project's ledger after the task ran (mirrors it into the state plane). */
  readonly afterRun?: (logPath: string) => Promise<void>;
}

/** A daemon task has no terminal: its story is the ledger and the daemon's own log. */
const silentNarrator: Narrator = { event() {}, note() {} };

const RETRYABLE: ReadonlySet<TaskOutcomeKind> = new Set(['internal']);

export function runtimeTaskId(queuedTaskId: string | null, attempt: number): TaskId {
  if (queuedTaskId === null) return randomIds.taskId();
  return attempt <= 1 ? (queuedTaskId as TaskId) : makeId('TaskId', `${queuedTaskId.slice(2)}-a${attempt}`);
}

/**
 * The worker also stops when the daemon stops the job (cancel, kill, lost
 * lease, shutdown), not only when the task loop does: the sandbox runner
 * kills the worker's process group as soon as either signal fires.
 */
export function stoppableBackend(backend: CodingBackend, stop: AbortSignal): CodingBackend {
  return {
    name: backend.name,
    // The rest of the backend's contract passes through: a wrapper that dropped `close` would keep a
    // pack backend's task-long holdings (a worker's MCP servers) running after the job, and the daemon
    // with them; one that dropped `worksBeforeRun` would change when the baseline starts.
    ...(backend.worksBeforeRun === undefined ? {} : { worksBeforeRun: backend.worksBeforeRun }),
    ...(backend.close === undefined ? {} : { close: () => backend.close?.() ?? Promise.resolve() }),
    run: (input, context) =>
      backend.run(input, {
        ...context,
        signal: context.signal === undefined ? stop : AbortSignal.any([context.signal, stop]),
      }),
  };
}

/** Who writes the patch: the job's worker command, or the pack backend it names (built by the host). */
function jobBackend(job: RunningJob, context: TaskJobContext, signal: AbortSignal): RunTaskOptions['makeBackend'] {
  const { payload } = job;
  return async (runtime) => {
    if (payload.worker !== null)
      return stoppableBackend(
        new ExternalCommandBackend(runtime.workerCap(), { argv: payload.worker, pathFor: runtime.workerPathFor }),
        signal,
      );
    // The codec guarantees a backend when there is no worker command.
    const backend = await context.loadBackend({
      name: payload.backend ?? 'native',
      goal: payload.goal,
      model: payload.model,
      env: context.env,
      home: context.home,
      runtime,
    });
    return stoppableBackend(backend, signal);
  };
}

/** How the run ended, as the job row records it. */
function settled(
  job: RunningJob,
  context: TaskJobContext,
  taskId: TaskId,
  run: RunTaskResult,
  signal: AbortSignal,
): JobRunResult {
  const outcome = run.outcome;
  const result: TaskJobResult = {
    taskId,
    outcome: outcome.kind,
    reason: outcome.reason.slice(0, 2_000),
    attempts: outcome.attempts,
    patchHash: outcome.patchHash,
    applied: outcome.journalId,
    owner: context.owner,
    stateDir: run.projectDir,
  };
  if (outcome.kind === 'completed') return { kind: 'succeeded', result };
  const timedOut = !job.signal.aborted && signal.aborted;
  return {
    kind: 'failed',
    result,
    error: `${outcome.kind}: ${timedOut ? `timed out after ${job.payload.timeoutSeconds} s` : result.reason}`,
    retryable: RETRYABLE.has(outcome.kind),
  };
}

export async function runTaskJob(job: RunningJob, context: TaskJobContext): Promise<JobRunResult> {
  const { payload, lease } = job;
  const taskId = runtimeTaskId(lease.taskId, lease.attempt);
  const failed = (error: string, retryable: boolean): JobRunResult => ({
    kind: 'failed',
    result: null,
    error,
    retryable,
  });
  let verifyArgv: Argv;
  if (payload.verify !== null) verifyArgv = payload.verify;
  else {
    const detected = await detectVerifyCommand(payload.dir);
    if (detected === null) return failed(`no test command found in ${payload.dir}; enqueue with --verify`, false);
    verifyArgv = detected.argv;
  }
  // The task's own wall-clock bound, on top of the daemon's stop signal.
  const stop = jobStopSignal(job.signal, payload.timeoutSeconds * 1_000);
  const signal = stop.signal;
  try {
    const run = await runTask({
      dir: payload.dir,
      goal: payload.goal,
      home: context.home,
      env: context.env,
      verifyArgv,
      verifyArgvFromUser: payload.verify !== null && payload.verifyFromUser,
      makeBackend: jobBackend(job, context, signal),
      approvals: job.approvals,
      approvalMode: payload.approve,
      // The approval desk is the person who can be asked.
      canAsk: payload.approve === 'ask',
      narrator: silentNarrator,
      ids: { ...randomIds, jobId: () => lease.jobId as JobId },
      taskId,
      maxRevisits: payload.maxRevisits,
      signal,
    });
    await context.afterRun?.(run.logPath);
    return settled(job, context, taskId, run, signal);
  } catch (error) {
    // A setup problem (sandbox, missing CLI or API key) fails the same way on every retry.
    if (error instanceof SetupError || context.isSetupError?.(error) === true)
      return failed(error instanceof Error ? error.message : String(error), false);
    return failed(`internal: ${error instanceof Error ? error.message : String(error)}`, true);
  } finally {
    stop.dispose();
  }
}
