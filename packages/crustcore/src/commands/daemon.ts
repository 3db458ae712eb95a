/**
 * `crustcore daemon`: a long-running supervisor over the state plane.
 *
 *   crustcore daemon [--database-url URL] [--state-dir DIR] [--workers N] [--owner NAME]
 *                    [--lease-ms N] [--poll-ms N] [--approval-timeout SECONDS] [--json]
 *
 * It claims queued task jobs, runs each through the verified task runtime,
 * heartbeats their leases, settles them, and requeues dead daemons' jobs once
 * their lease runs out. Several daemons (on several hosts) may share one
 * PostgreSQL (`--database-url`); fencing tokens keep any job from running
 * twice at once. Without a URL it uses embedded PGlite in the state directory
 * (one daemon per directory). Control it through its admin socket:
 * `crustcore status | tasks | pause | resume | cancel | kill | approve | deny`.
 */

import { mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  AdminSocketError,
  ApprovalDesk,
  adminSocketPath,
  type BackendLoader,
  daemonAdminHandler,
  daemonStateDir,
  defaultOwnerName,
  openState,
  runTaskJob,
  StateOpenError,
  Supervisor,
  type SupervisorLog,
  startAdminServer,
  syncLedgerMirror,
} from '@crustcore/daemon';
import { loadRuntimeRedactor } from '@crustcore/runtime';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { loadPackBackend } from './pack-backends.js';

/** The daemon builds pack backends as `crustcore run --backend` does. */
const loadDaemonBackend: BackendLoader = (request) =>
  loadPackBackend(request.name, {
    workerCap: request.runtime.workerCap,
    toolGate: request.runtime.toolGate,
    note: request.runtime.note,
    env: request.env,
    goal: request.goal,
    home: request.home,
    options: request.model === undefined ? {} : { model: request.model },
  });

const USAGE =
  'crustcore daemon [--database-url URL] [--state-dir DIR] [--workers N] [--owner NAME] [--lease-ms N] [--poll-ms N] [--approval-timeout SECONDS] [--json]';

function intOption(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max)
    throw new UsageError(`--${name} takes ${min}–${max}`);
  return parsed;
}

function daemonLog(io: Io, json: boolean, redact: (text: string) => string): SupervisorLog {
  const write = (line: string): void => writeLine(io.stdout, redact(line));
  return (kind, detail) => {
    const at = new Date().toISOString();
    if (json) {
      write(
        JSON.stringify({ at, event: kind, ...detail }, (_key, value: unknown) =>
          typeof value === 'bigint' ? value.toString() : value,
        ),
      );
      return;
    }
    const brief = Object.entries(detail)
      .filter(([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(' ');
    write(`${io.out.dim(at)} ${io.out.cyan(kind)} ${brief}`);
  };
}

function waitForStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

export const daemonCommand: Command = {
  name: 'daemon',
  summary: 'run the task supervisor: claim queued tasks from the state plane, run, heartbeat and settle them',
  usage: USAGE,
  async run(args, io) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        'database-url': { type: 'string' },
        'state-dir': { type: 'string' },
        workers: { type: 'string' },
        owner: { type: 'string' },
        'lease-ms': { type: 'string' },
        'poll-ms': { type: 'string' },
        'approval-timeout': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    const workers = intOption('workers', values.workers, 1, 1, 64);
    const leaseMs = intOption('lease-ms', values['lease-ms'], 30_000, 500, 3_600_000);
    const pollMs = intOption('poll-ms', values['poll-ms'], 500, 20, 60_000);
    const approvalTimeoutMs = intOption('approval-timeout', values['approval-timeout'], 600, 1, 86_400) * 1_000;
    const owner = values.owner ?? defaultOwnerName();
    if (owner.length === 0 || Buffer.byteLength(owner) > 200) throw new UsageError('--owner takes 1–200 bytes');
    const databaseUrl = values['database-url'] ?? (io.env.CRUSTCORE_DATABASE_URL || undefined);
    const home = crustcoreHome(io.env);
    const stateDir = daemonStateDir(home, values['state-dir'], io.cwd);
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    // Every log line and every error written to the database passes the redactor first: errors
    // carry worker and test output, and the daemon holds provider keys in its environment.
    const { redact } = await loadRuntimeRedactor(home, io.env);
    const log = daemonLog(io, values.json === true, redact);

    let opened: Awaited<ReturnType<typeof openState>>;
    try {
      opened = await openState({ databaseUrl, stateDir });
    } catch (error) {
      if (error instanceof StateOpenError) {
        writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
        return ExitCode.internal;
      }
      throw error;
    }
    const { state, db } = opened;
    const desk = new ApprovalDesk({ timeoutMs: approvalTimeoutMs, onEvent: (kind, detail) => log(kind, detail) });
    const supervisor = new Supervisor({
      state,
      db,
      owner,
      workers,
      leaseMs,
      pollMs,
      recoverEveryMs: Math.max(100, Math.floor(leaseMs / 2)),
      stopGraceMs: 30_000,
      desk,
      runJob: (job) =>
        runTaskJob(job, {
          home,
          env: io.env,
          owner,
          loadBackend: loadDaemonBackend,
          isSetupError: (error) => error instanceof UsageError,
          // The ledger stays the audit truth; its mirror lets any daemon or host query it, and
          // `crustcore inspect --database-url` checks the two agree. A failed mirror never fails the task.
          afterRun: async (logPath) => {
            try {
              const synced = await syncLedgerMirror(state, db, logPath);
              log('ledger.mirrored', { jobId: job.lease.jobId, ...synced });
            } catch (error) {
              log('ledger.mirror-error', { jobId: job.lease.jobId, message: (error as Error).message.slice(0, 2_000) });
            }
          },
        }),
      log,
      redact,
    });
    let admin: Awaited<ReturnType<typeof startAdminServer>>;
    try {
      admin = await startAdminServer(adminSocketPath(stateDir), daemonAdminHandler({ state, db, supervisor, desk }));
    } catch (error) {
      await db.close();
      if (error instanceof AdminSocketError) {
        writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
        return ExitCode.internal;
      }
      throw error;
    }
    const stopped = waitForStopSignal();
    supervisor.start();
    log('daemon.ready', { owner, pid: process.pid, engine: db.engine, socket: admin.socketPath, workers, leaseMs });
    const signal = await stopped;
    log('daemon.stopping', { signal });
    await supervisor.stop();
    await admin.close();
    await db.close();
    log('daemon.stopped', {});
    return ExitCode.ok;
  },
};
