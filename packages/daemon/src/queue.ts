/**
 * The task queue as the daemon and the CLI see it: enqueue a task (a state
 * plane task row plus its job), list the newest task jobs, count them by
 * status, find a job by job or task id. Works on any `Db` (the daemon's own,
 * or a PostgreSQL URL given to the CLI directly).
 */
import type { Json, TaskId } from '@crustcore/kernel';
import { randomIds } from '@crustcore/runtime';
import type { Db, JobRecord } from '@crustcore/state';
import type { StatePlane } from './supervisor.js';
import { decodeTaskJobPayload, TASK_JOB_KIND, type TaskJobPayload, taskJobPayloadJson } from './task-job.js';

/** Retries for task jobs: a dead daemon's job runs again, at most twice more. */
export const TASK_RETRY_POLICY = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 30_000 } as const;

export interface Enqueued {
  readonly taskId: string;
  readonly jobId: string;
}

export async function enqueueTaskJob(
  state: StatePlane,
  db: Db,
  payload: TaskJobPayload,
): Promise<{ readonly _tag: 'Right'; readonly right: Enqueued } | { readonly _tag: 'Left'; readonly left: string }> {
  const taskId = randomIds.taskId();
  const jobId = randomIds.jobId();
  const task = await state.createTask(db, {
    id: taskId,
    title: payload.goal.slice(0, 4_000),
    maxRevisits: payload.maxRevisits,
  });
  if (task._tag === 'Left') return { _tag: 'Left', left: `cannot create the task: ${JSON.stringify(task.left)}` };
  const job = await state.enqueueJob(db, {
    id: jobId,
    kind: TASK_JOB_KIND,
    taskId,
    payload: taskJobPayloadJson(payload),
    retry: TASK_RETRY_POLICY,
  });
  if (job._tag === 'Left') {
    // Leave no task without a job behind.
    await state.transitionTask(db, taskId, 'ABORTED').catch(() => undefined);
    return { _tag: 'Left', left: `cannot enqueue the job: ${JSON.stringify(job.left)}` };
  }
  return { _tag: 'Right', right: { taskId, jobId } };
}

/**
 * The newest task jobs. (The state API lists oldest first; the ids are picked
 * here newest first and each row is read through the API's decoder.)
 */
export async function newestTaskJobs(state: StatePlane, db: Db, limit: number): Promise<readonly JobRecord[]> {
  const ids = await db.query<{ id: string }>(
    'SELECT id FROM crust_jobs WHERE kind = $1::text ORDER BY seq DESC LIMIT $2::int4',
    [TASK_JOB_KIND, Math.max(1, Math.min(limit, 1_000))],
  );
  const jobs: JobRecord[] = [];
  for (const row of ids.rows) {
    const job = await state.getJob(db, row.id as JobRecord['id']);
    if (job !== null) jobs.push(job);
  }
  return jobs;
}

export async function countTaskJobs(db: Db): Promise<Record<string, number>> {
  const rows = await db.query<{ status: string; n: string }>(
    'SELECT status, count(*)::text AS n FROM crust_jobs WHERE kind = $1::text GROUP BY status',
    [TASK_JOB_KIND],
  );
  const counts: Record<string, number> = {};
  for (const row of rows.rows) counts[row.status] = Number(row.n);
  return counts;
}

/** Jobs named by a job id (`j_…`) or a task id (`t_…`). */
export async function findJobs(state: StatePlane, db: Db, id: string): Promise<readonly JobRecord[]> {
  if (id.startsWith('j_')) {
    const job = await state.getJob(db, id as JobRecord['id']);
    return job === null ? [] : [job];
  }
  if (id.startsWith('t_')) return state.listJobs(db, { taskId: id as TaskId, limit: 100 });
  return [];
}

export function describeJob(job: JobRecord, pendingApproval: boolean): Json {
  const payload = decodeTaskJobPayload(job.payload);
  const result =
    job.result !== null && typeof job.result === 'object' && !Array.isArray(job.result)
      ? (job.result as { readonly [key: string]: Json | undefined })
      : null;
  return {
    jobId: job.id,
    taskId: job.taskId,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.retryPolicy.maxAttempts,
    owner: job.owner,
    fenceToken: job.fenceToken === null ? null : job.fenceToken.toString(),
    cancelRequested: job.cancelRequested,
    goal: payload._tag === 'Right' ? payload.right.goal.slice(0, 500) : null,
    dir: payload._tag === 'Right' ? payload.right.dir : null,
    approve: payload._tag === 'Right' ? payload.right.approve : null,
    outcome: result === null ? null : (result.outcome ?? null),
    runtimeTaskId: result === null ? null : (result.taskId ?? null),
    /** The project's ledger directory on the host that ran it (for `crustcore inspect --dir`). */
    stateDir: result === null ? null : (result.stateDir ?? null),
    lastError: job.lastError,
    pendingApproval,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
  };
}
