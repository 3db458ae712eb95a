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
  type BackendLoader,
  type DaemonHost,
  daemonStateDir,
  defaultOwnerName,
  openDaemonHost,
  StateOpenError,
  type SupervisorLog,
} from '@crustcore/daemon';
import { loadRuntimeRedactor } from '@crustcore/runtime';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { loadPackBackend } from './pack-backends.js';
import { daemonSpec } from './pack-specs.js';

/** The daemon builds pack backends as `crustcore run --backend` does. */
const loadDaemonBackend: BackendLoader = (request) =>
  loadPackBackend(request.name, {
    workerCap: request.runtime.workerCap,
    workerPathFor: request.runtime.workerPathFor,
    toolGate: request.runtime.toolGate,
    note: request.runtime.note,
    env: request.env,
    goal: request.goal,
    home: request.home,
    options: request.model === undefined ? {} : { model: request.model },
  });

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

interface DaemonArgs {
  readonly workers: number;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly approvalTimeoutMs: number;
  readonly owner: string;
  readonly databaseUrl: string | undefined;
  readonly stateDir: string;
  readonly json: boolean;
}

function parseDaemonArgs(args: readonly string[], io: Io, home: string): DaemonArgs {
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
  const owner = values.owner ?? defaultOwnerName();
  if (owner.length === 0 || Buffer.byteLength(owner) > 200) throw new UsageError('--owner takes 1–200 bytes');
  return {
    workers: intOption('workers', values.workers, 1, 1, 64),
    leaseMs: intOption('lease-ms', values['lease-ms'], 30_000, 500, 3_600_000),
    pollMs: intOption('poll-ms', values['poll-ms'], 500, 20, 60_000),
    approvalTimeoutMs: intOption('approval-timeout', values['approval-timeout'], 600, 1, 86_400) * 1_000,
    owner,
    databaseUrl: values['database-url'] ?? (io.env.CRUSTCORE_DATABASE_URL || undefined),
    stateDir: daemonStateDir(home, values['state-dir'], io.cwd),
    json: values.json === true,
  };
}

export const daemonCommand: Command = {
  ...daemonSpec,
  async run(args, io) {
    const home = crustcoreHome(io.env);
    const options = parseDaemonArgs(args, io, home);
    mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
    // Every log line and every error written to the database passes the redactor first: errors
    // carry worker and test output, and the daemon holds provider keys in its environment.
    const { redact } = await loadRuntimeRedactor(home, io.env);
    const log = daemonLog(io, options.json, redact);
    let host: DaemonHost;
    try {
      host = await openDaemonHost({
        ...options,
        home,
        env: io.env,
        log,
        redact,
        loadBackend: loadDaemonBackend,
        isSetupError: (error) => error instanceof UsageError,
      });
    } catch (error) {
      if (!(error instanceof StateOpenError) && !(error instanceof AdminSocketError)) throw error;
      writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
      return ExitCode.internal;
    }
    const stopped = waitForStopSignal();
    host.start();
    const { owner, workers, leaseMs } = options;
    log('daemon.ready', { owner, pid: process.pid, engine: host.engine, socket: host.socketPath, workers, leaseMs });
    log('daemon.stopping', { signal: await stopped });
    await host.stop();
    log('daemon.stopped', {});
    return ExitCode.ok;
  },
};
