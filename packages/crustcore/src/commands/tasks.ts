/**
 * `crustcore tasks`: the daemon's task queue.
 *
 *   crustcore tasks [list] [--limit N]                       newest task jobs
 *   crustcore tasks add --dir DIR --goal TEXT (--worker ARGV | --backend codex|claude|native [--model M])
 *                 [--verify ARGV] [--approve auto|ask|deny] [--max-revisits N] [--timeout SECONDS]
 *                                                            queue a task (also: crustcore enqueue …)
 *
 * Both talk to the running daemon through its admin socket; with
 * `--database-url` they go straight to a shared PostgreSQL instead (no daemon
 * needs to run here: any daemon on any host sharing it picks the task up).
 */

import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  daemonStateDir,
  decodeTaskJobPayload,
  describeJob,
  enqueueTaskJob,
  newestTaskJobs,
  openState,
  PackBackendC,
  StateOpenError,
  type TaskJobPayload,
} from '@crustcore/daemon';
import type { Json } from '@crustcore/kernel';
import { type Argv, splitArgv } from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { type AdminAnswer, askDaemon, asList, asRecord, CLIENT_OPTIONS, socketOf, text } from '../cli/daemon-client.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { enqueueSpec, tasksSpec } from './pack-specs.js';

function argvOption(name: string, value: string): Argv {
  const split = splitArgv(value);
  if (split._tag === 'Left') throw new UsageError(`--${name}: ${split.left.message}`);
  return split.right;
}

/** Runs `work` on a state plane opened straight from a PostgreSQL URL. */
async function withDatabase<T>(
  io: Io,
  databaseUrl: string,
  work: (opened: Awaited<ReturnType<typeof openState>>) => Promise<T>,
): Promise<T | ExitCode> {
  let opened: Awaited<ReturnType<typeof openState>>;
  try {
    opened = await openState({ databaseUrl, stateDir: daemonStateDir(crustcoreHome(io.env), undefined, io.cwd) });
  } catch (error) {
    if (error instanceof StateOpenError) {
      writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
      return ExitCode.internal;
    }
    throw error;
  }
  try {
    return await work(opened);
  } finally {
    await opened.db.close();
  }
}

async function addTask(args: readonly string[], io: Io): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      ...CLIENT_OPTIONS,
      dir: { type: 'string' },
      goal: { type: 'string' },
      worker: { type: 'string' },
      backend: { type: 'string' },
      model: { type: 'string' },
      verify: { type: 'string' },
      approve: { type: 'string' },
      'max-revisits': { type: 'string' },
      timeout: { type: 'string' },
      'database-url': { type: 'string' },
    },
    strict: true,
  });
  if (values.goal === undefined || values.goal.trim() === '') throw new UsageError('--goal is required');
  // The daemon's environment (API keys, CLIs on PATH) serves the backend, as for `crustcore run`.
  const backendNames = Object.keys(PackBackendC.keys).join('|');
  if ((values.worker === undefined) === (values.backend === undefined))
    throw new UsageError(`say who writes the patch: --worker "<command>" or --backend ${backendNames}, one of them`);
  if (values.backend !== undefined && !PackBackendC.is(values.backend))
    throw new UsageError(`unknown backend "${values.backend}"; choose ${backendNames}`);
  if (values.model !== undefined && values.backend === undefined) throw new UsageError('--model goes with --backend');
  const approve = values.approve ?? 'ask';
  if (approve !== 'auto' && approve !== 'ask' && approve !== 'deny')
    throw new UsageError('--approve takes auto, ask or deny');
  const maxRevisits = values['max-revisits'] === undefined ? 3 : Number(values['max-revisits']);
  if (!Number.isSafeInteger(maxRevisits) || maxRevisits < 0 || maxRevisits > 20)
    throw new UsageError('--max-revisits takes 0–20');
  const timeoutSeconds = values.timeout === undefined ? 1_800 : Number(values.timeout);
  if (!Number.isSafeInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 86_400)
    throw new UsageError('--timeout takes 1–86400 seconds');
  let dir: string;
  try {
    dir = realpathSync(resolve(io.cwd, values.dir ?? '.'));
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new UsageError(`--dir ${values.dir ?? '.'}: no such directory`);
  }
  const candidate: TaskJobPayload = {
    v: 1,
    dir,
    goal: values.goal,
    verify: values.verify === undefined ? null : argvOption('verify', values.verify),
    verifyFromUser: values.verify !== undefined,
    worker: values.worker === undefined ? null : argvOption('worker', values.worker),
    ...(PackBackendC.is(values.backend) ? { backend: values.backend } : {}),
    ...(values.model === undefined ? {} : { model: values.model }),
    approve,
    maxRevisits,
    timeoutSeconds,
  };
  // The same codec the daemon decodes with: refuse here what it would refuse there.
  const checked = decodeTaskJobPayload(candidate);
  if (checked._tag === 'Left') throw new UsageError(checked.left.problems.join('; '));
  const payload = checked.right;
  const json = values.json === true;
  let answer: AdminAnswer;
  const databaseUrl = values['database-url'];
  if (databaseUrl !== undefined) {
    const done = await withDatabase(io, databaseUrl, async ({ state, db }) => enqueueTaskJob(state, db, payload));
    if (typeof done === 'number') return done;
    if (done._tag === 'Left') {
      writeLine(io.stderr, `${io.err.red('error:')} ${done.left}`);
      return ExitCode.denied;
    }
    answer = { _tag: 'Right', right: { ...done.right } };
  } else {
    answer = await askDaemon(io, socketOf(io, values), { op: 'enqueue', task: payload }, json);
    if (answer._tag === 'Left') return answer.left;
  }
  const result = asRecord(answer.right);
  if (json) writeLine(io.stdout, JSON.stringify({ ok: true, ...result }));
  else
    writeLine(
      io.stdout,
      `queued task ${io.out.cyan(text(result.taskId))} (job ${text(result.jobId)}); watch it with "crustcore tasks"`,
    );
  return ExitCode.ok;
}

function printTasks(io: Io, tasks: readonly Json[]): void {
  if (tasks.length === 0) {
    writeLine(io.stdout, 'no tasks');
    return;
  }
  for (const entry of tasks) {
    const t = asRecord(entry);
    const status = text(t.status);
    const colored =
      status === 'Completed'
        ? io.out.green(status)
        : status === 'Failed' || status === 'Killed'
          ? io.out.red(status)
          : io.out.yellow(status);
    const approval =
      t.pendingApproval === true
        ? io.out.yellow(' (waiting for approval: crustcore approve ' + text(t.taskId) + ')')
        : '';
    writeLine(
      io.stdout,
      `${io.out.cyan(text(t.taskId))} ${text(t.jobId)} ${colored} attempt ${text(t.attempt)}/${text(t.maxAttempts)} ${io.out.dim(text(t.owner))}${approval}`,
    );
    writeLine(
      io.stdout,
      `  ${text(t.goal)}${t.outcome === null ? '' : io.out.dim(` → ${text(t.outcome)}`)}${t.lastError === null ? '' : io.out.dim(` (${text(t.lastError)})`)}`,
    );
  }
}

async function listTasks(args: readonly string[], io: Io): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: { ...CLIENT_OPTIONS, limit: { type: 'string' }, 'database-url': { type: 'string' } },
    strict: true,
  });
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1_000) throw new UsageError('--limit takes 1–1000');
  const json = values.json === true;
  let tasks: readonly Json[];
  const databaseUrl = values['database-url'];
  if (databaseUrl !== undefined) {
    const listed = await withDatabase(io, databaseUrl, async ({ state, db }) =>
      (await newestTaskJobs(state, db, limit)).map((job) => describeJob(job, false)),
    );
    if (typeof listed === 'number') return listed;
    tasks = listed;
  } else {
    const answer = await askDaemon(io, socketOf(io, values), { op: 'tasks', limit }, json);
    if (answer._tag === 'Left') return answer.left;
    tasks = asList(asRecord(answer.right).tasks);
  }
  if (json) writeLine(io.stdout, JSON.stringify({ ok: true, tasks }));
  else printTasks(io, tasks);
  return ExitCode.ok;
}

export const tasksCommand: Command = {
  ...tasksSpec,
  run(args, io) {
    const [sub, ...rest] = args;
    if (sub === 'add') return addTask(rest, io);
    if (sub === 'list') return listTasks(rest, io);
    return listTasks(args, io);
  },
};

export const enqueueCommand: Command = {
  ...enqueueSpec,
  run: (args, io) => addTask(args, io),
};
