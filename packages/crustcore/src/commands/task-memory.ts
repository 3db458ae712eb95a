/**
 * Repository memory around one task (`crustcore run`, the first request of a
 * `crustcore chat` session): before it, the memories ranked for the goal and
 * the repository capsule's code related to it, selected into a bounded bundle
 * of prior observations; after it, the failures the verifier classified (with
 * the fix when the task verified) recorded as failure memories.
 *
 * Full build only: run.ts imports this module behind the nano define, so the
 * memory and index packs never enter crustcore-nano.
 *
 * Three rules:
 * - no store is ever created here: memory is used only when the repository's
 *   embedded store already exists or a database URL is configured;
 * - memory never makes a task fail: a busy or broken store, or an index
 *   error, is one narrated line and the task goes on without it;
 * - memory is never authority: the bundle is only data for the prompt
 *   builders, which fence it as untrusted; nothing here touches approvals,
 *   policy, the sandbox or secrets.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenedMemory } from '@crustcore/memory';
import { projectDirOf, sanitizeForTerminal } from '@crustcore/runtime';
import { openRepository, type PriorObservation } from '@crustcore/verify';
import type { Io } from '../cli/output.js';
import { writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { memoryDataDir } from './memory.js';

export interface MemoryReport {
  readonly observations?: number;
  readonly bytes?: number;
  readonly dropped?: number;
  /** Failure memories written after the task (new or refreshed); null when learning failed. */
  readonly learned?: number | null;
  /** Why memory was not used (no store, --no-memory, busy, broken). */
  readonly skipped?: string;
}

export interface TaskMemory {
  /** Spread into `runTask`'s options. */
  readonly taskOptions: { readonly priorObservations?: readonly PriorObservation[] };
  /** Learns from the task (when the store was opened), closes the store, and gives the `--json` part. Idempotent. */
  finish(taskId: string | null): Promise<{ readonly memory: MemoryReport }>;
}

export interface TaskMemoryRequest {
  readonly io: Io;
  readonly dir: string;
  readonly goal: string;
  readonly off: boolean;
  readonly databaseUrl: string | undefined;
  /**
   * Whether to select a bundle for this goal. A chat's later requests continue
   * a session that already holds the bundle of its first, so they only learn.
   */
  readonly select?: boolean;
  /** One narrated line; `warn` for a skip. */
  readonly say: (line: string, warn: boolean) => void;
  /** The repository the command already opened for `dir` (each open costs a git process). */
  readonly opened?: ReturnType<typeof openRepository>;
}

const SILENCE = 'use --no-memory to silence';
const reasonOf = (error: unknown): string =>
  sanitizeForTerminal((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '').slice(0, 300);

const NO_BUNDLE = { observations: [], bytes: 0, dropped: 0 } as const;

function unused(report: MemoryReport): TaskMemory {
  const done = Promise.resolve({ memory: report });
  return { taskOptions: {}, finish: () => done };
}

/** The capsule for the goal from the incremental index, or null (and a narrated line) when it cannot be built. */
async function goalCapsule(request: TaskMemoryRequest, home: string) {
  try {
    const index = await import('@crustcore/index');
    const built = await index.buildIndex({
      dir: request.dir,
      cacheDirFor: (r) => join(projectDirOf(home, r), 'index'),
    });
    if (built._tag === 'Right') return index.capsuleForGoal(built.right.capsule, request.goal);
    request.say(`memory: capsule skipped — ${sanitizeForTerminal(built.left.message)}; ${SILENCE}`, true);
  } catch (error) {
    request.say(`memory: capsule skipped — ${reasonOf(error)}; ${SILENCE}`, true);
  }
  return null;
}

async function learnTask(opened: OpenedMemory, logPath: string, repoId: string, taskId: string): Promise<number> {
  const pack = await import('@crustcore/memory');
  const frames = existsSync(logPath) ? pack.readLedgerFrames(logPath).filter((f) => f.taskId === taskId) : [];
  const report = await pack.learnFromLedger(opened.store, repoId, frames);
  return report.added + report.refreshed;
}

/** Opens the store (or says why not), selects the bundle for the goal; never throws. */
export async function startTaskMemory(request: TaskMemoryRequest): Promise<TaskMemory> {
  if (request.off) return unused({ skipped: '--no-memory' });
  const home = crustcoreHome(request.io.env);
  const found = await (request.opened ?? openRepository(request.dir));
  if (found._tag === 'Left') return unused({ skipped: 'not a git repository' });
  const repo = found.right;
  const dataDir = memoryDataDir(home, repo.repoId);
  // Never create a store nobody asked for: `crustcore memory add` (or a database URL) opts in.
  if (request.databaseUrl === undefined && !existsSync(dataDir))
    return unused({ skipped: 'no memory store for this repository (crustcore memory add TEXT starts one)' });
  let opened: OpenedMemory | null = null;
  try {
    const pack = await import('@crustcore/memory');
    const [store, capsule] = await Promise.all([
      pack.openMemoryStore({
        clock: () => Date.now(),
        ...(request.databaseUrl === undefined ? { dataDir } : { databaseUrl: request.databaseUrl }),
      }),
      request.select === false ? null : goalCapsule(request, home),
    ]);
    if (store._tag === 'Left') {
      const reason = sanitizeForTerminal(store.left.reason);
      request.say(`memory: skipped — ${reason}; ${SILENCE}`, true);
      return unused({ skipped: reason });
    }
    opened = store.right;
    if (request.select === false)
      return used(opened, NO_BUNDLE, join(projectDirOf(home, repo), 'events.log'), repo.repoId, request);
    const nowMs = Date.now();
    const memories = await opened.store.search(repo.repoId, request.goal, { limit: 20 });
    const bundle = pack.selectContext({ capsule, memories, nowMs });
    request.say(`memory: ${bundle.observations.length} observations, ${bundle.bytes} bytes for this goal`, false);
    return used(opened, bundle, join(projectDirOf(home, repo), 'events.log'), repo.repoId, request);
  } catch (error) {
    const reason = reasonOf(error);
    request.say(`memory: skipped — ${reason}; ${SILENCE}`, true);
    await opened?.db.close().catch(() => undefined);
    return unused({ skipped: reason });
  }
}

function used(
  opened: OpenedMemory,
  bundle: { readonly observations: readonly PriorObservation[]; readonly bytes: number; readonly dropped: number },
  logPath: string,
  repoId: string,
  request: TaskMemoryRequest,
): TaskMemory {
  let finished: Promise<{ readonly memory: MemoryReport }> | null = null;
  const finish = async (taskId: string | null): Promise<{ readonly memory: MemoryReport }> => {
    let learned: number | null = 0;
    try {
      if (taskId !== null) learned = await learnTask(opened, logPath, repoId, taskId);
    } catch (error) {
      learned = null;
      request.say(`memory: nothing learned — ${reasonOf(error)}`, true);
    } finally {
      await opened.db.close().catch(() => undefined);
    }
    return {
      memory: { observations: bundle.observations.length, bytes: bundle.bytes, dropped: bundle.dropped, learned },
    };
  };
  return {
    taskOptions: bundle.observations.length === 0 ? {} : { priorObservations: bundle.observations },
    finish: (taskId) => {
      finished ??= finish(taskId);
      return finished;
    },
  };
}

/** `crustcore run`'s memory: its flags, narrated the way its output format narrates. */
export function runTaskMemory(
  io: Io,
  dir: string,
  goal: string,
  values: { readonly 'no-memory'?: boolean; readonly 'database-url'?: string },
  format: string,
  /** The task id: stream-json lines carry it as `session_id` (docs/headless.md). */
  sessionId?: string,
  opened?: ReturnType<typeof openRepository>,
): Promise<TaskMemory> {
  return startTaskMemory({
    io,
    dir,
    goal,
    ...(opened === undefined ? {} : { opened }),
    off: values['no-memory'] === true,
    databaseUrl: values['database-url'] ?? (io.env.CRUSTCORE_DATABASE_URL || undefined),
    say: (line, warn) => {
      if (format === 'text') writeLine(io.stdout, warn ? io.out.yellow(line) : io.out.dim(line));
      else if (format === 'stream-json')
        writeLine(io.stdout, JSON.stringify({ type: 'memory', text: line, session_id: sessionId }));
    },
  });
}

/** `crustcore chat`'s memory for one request: the first of a session selects, every one learns; skips are dim lines. */
export function chatTaskMemory(
  io: Io,
  dir: string,
  goal: string,
  values: { readonly 'no-memory'?: boolean; readonly 'database-url'?: string },
  firstOfSession: boolean,
): Promise<TaskMemory> {
  return startTaskMemory({
    io,
    dir,
    goal,
    off: values['no-memory'] === true,
    databaseUrl: values['database-url'] ?? (io.env.CRUSTCORE_DATABASE_URL || undefined),
    select: firstOfSession,
    say: (line, warn) => {
      // A chat's later requests say only what went wrong: the bundle was narrated with the first.
      if (firstOfSession || warn) writeLine(io.stdout, warn ? io.out.yellow(line) : io.out.dim(line));
    },
  });
}
