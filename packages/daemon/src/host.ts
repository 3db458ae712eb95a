/**
 * One daemon, assembled: the state plane opened (PostgreSQL or the embedded
 * PGlite under the state directory), the approval desk, the supervisor that
 * runs task jobs through the runtime, and the admin socket. The CLI's
 * `crustcore daemon` only parses its arguments, opens a host, waits for a
 * stop signal and stops it.
 */
import type { Db } from '@crustcore/state';
import { type AdminServer, startAdminServer } from './admin-server.js';
import { ApprovalDesk } from './approval-desk.js';
import { daemonAdminHandler } from './daemon-handler.js';
import { syncLedgerMirror } from './ledger-mirror-sync.js';
import { adminSocketPath } from './paths.js';
import { type BackendLoader, runTaskJob } from './run-job.js';
import { openState } from './state-access.js';
import { type StatePlane, Supervisor, type SupervisorLog } from './supervisor.js';

export interface DaemonHostOptions {
  /** A shared PostgreSQL; undefined: the embedded PGlite under `stateDir`. */
  readonly databaseUrl: string | undefined;
  readonly stateDir: string;
  /** $CRUSTCORE_HOME: ledgers, worktrees, journals of the tasks this daemon runs. */
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly owner: string;
  readonly workers: number;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly approvalTimeoutMs: number;
  readonly log: SupervisorLog;
  /** Applied to every error text the daemon writes to the shared database. */
  readonly redact: (text: string) => string;
  readonly loadBackend: BackendLoader;
  readonly isSetupError?: (error: unknown) => boolean;
}

export interface DaemonHost {
  readonly socketPath: string;
  readonly engine: Db['engine'];
  /** Starts claiming jobs. */
  start(): void;
  /** Stops claiming, requeues running jobs (bounded wait), closes the socket and the database. */
  stop(): Promise<void>;
}

function taskSupervisor(options: DaemonHostOptions, state: StatePlane, db: Db, desk: ApprovalDesk): Supervisor {
  const { log } = options;
  return new Supervisor({
    state,
    db,
    owner: options.owner,
    workers: options.workers,
    leaseMs: options.leaseMs,
    pollMs: options.pollMs,
    recoverEveryMs: Math.max(100, Math.floor(options.leaseMs / 2)),
    stopGraceMs: 30_000,
    desk,
    runJob: (job) =>
      runTaskJob(job, {
        home: options.home,
        env: options.env,
        owner: options.owner,
        loadBackend: options.loadBackend,
        ...(options.isSetupError === undefined ? {} : { isSetupError: options.isSetupError }),
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
    redact: options.redact,
  });
}

/** Opens the state plane and the admin socket; throws StateOpenError or AdminSocketError with the fix. */
export async function openDaemonHost(options: DaemonHostOptions): Promise<DaemonHost> {
  const { state, db } = await openState({ databaseUrl: options.databaseUrl, stateDir: options.stateDir });
  const desk = new ApprovalDesk({
    timeoutMs: options.approvalTimeoutMs,
    onEvent: (kind, detail) => options.log(kind, detail),
  });
  const supervisor = taskSupervisor(options, state, db, desk);
  let admin: AdminServer;
  try {
    admin = await startAdminServer(
      adminSocketPath(options.stateDir),
      daemonAdminHandler({ state, db, supervisor, desk }),
    );
  } catch (error) {
    await db.close();
    throw error;
  }
  return {
    socketPath: admin.socketPath,
    engine: db.engine,
    start: () => supervisor.start(),
    stop: async () => {
      await supervisor.stop();
      await admin.close();
      await db.close();
    },
  };
}
