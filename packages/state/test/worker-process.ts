/**
 * Parent side of fixtures/lease-worker.ts: spawns the worker process, sends
 * commands, collects heartbeat outcomes, and (PGlite) performs the worker's
 * operations with the lease its token names.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  claimJob,
  completeJob,
  type Db,
  heartbeatJob,
  type JobLease,
  recordJobProgress,
  type StateError,
} from '../src/index.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/lease-worker.ts', import.meta.url));

export interface WorkerResult {
  readonly tag: 'Left' | 'Right';
  readonly error?: string;
  readonly reason?: string;
  readonly jobId?: string;
  readonly token?: string;
}

export interface WorkerProcess {
  readonly pid: number;
  readonly heartbeats: WorkerResult[];
  command(op: string, args?: Record<string, string | number>): Promise<WorkerResult>;
  signal(signal: NodeJS.Signals): void;
  readonly exited: Promise<number | null>;
}

type Connection =
  | { readonly kind: 'direct'; readonly databaseUrl: string; readonly schema: string }
  | {
      readonly kind: 'broker';
      readonly db: Db;
    };

const summarize = (result: { _tag: 'Left'; left: StateError } | { _tag: 'Right' }): WorkerResult =>
  result._tag === 'Right'
    ? { tag: 'Right' }
    : { tag: 'Left', error: result.left._tag, reason: 'reason' in result.left ? String(result.left.reason) : '' };

/** Performs a brokered worker's operation with the lease minted for its token. */
function brokerHandler(db: Db) {
  const leases = new Map<string, JobLease>();
  const leaseOf = (token: unknown): JobLease => {
    const lease = leases.get(String(token));
    if (lease === undefined) throw new Error(`unknown token ${String(token)}`);
    return lease;
  };
  return async (op: string, args: Record<string, unknown>): Promise<WorkerResult> => {
    switch (op) {
      case 'claim': {
        const claimed = await claimJob(db, { owner: String(args.owner), leaseMs: Number(args.leaseMs) });
        if (claimed._tag === 'Left' || claimed.right === null) return { tag: 'Left', error: 'NothingClaimed' };
        leases.set(claimed.right.token.toString(), claimed.right);
        return { tag: 'Right', jobId: claimed.right.jobId, token: claimed.right.token.toString() };
      }
      case 'heartbeat':
        return summarize(await heartbeatJob(db, leaseOf(args.token)));
      case 'progress':
        return summarize(await recordJobProgress(db, leaseOf(args.token), { message: String(args.message) }));
      case 'complete':
        return summarize(await completeJob(db, leaseOf(args.token)));
      default:
        throw new Error(`unknown op ${op}`);
    }
  };
}

export function spawnWorker(connection: Connection): WorkerProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, CRUST_WORKER_MODE: connection.kind };
  if (connection.kind === 'direct') {
    env.CRUST_DATABASE_URL = connection.databaseUrl;
    env.CRUST_SCHEMA = connection.schema;
  }
  const child: ChildProcess = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', WORKER], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const broker = connection.kind === 'broker' ? brokerHandler(connection.db) : null;
  const pending = new Map<number, (result: WorkerResult) => void>();
  const heartbeats: WorkerResult[] = [];
  let nextId = 0;
  let buffered = '';
  const write = (message: unknown): void => {
    child.stdin?.write(`${JSON.stringify(message)}\n`);
  };

  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const message = JSON.parse(line) as {
        type: string;
        id: number;
        op: string;
        args: Record<string, unknown>;
        result: WorkerResult;
      };
      if (message.type === 'reply') {
        pending.get(message.id)?.(message.result);
        pending.delete(message.id);
      } else if (message.type === 'heartbeat') {
        heartbeats.push(message.result);
      } else if (message.type === 'rpc' && broker !== null) {
        void broker(message.op, message.args).then((result) => write({ type: 'rpc-result', id: message.id, result }));
      }
    }
  });

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (child.pid === undefined) throw new Error('worker did not start');
  return {
    pid: child.pid,
    heartbeats,
    exited,
    command(op, args = {}) {
      nextId += 1;
      const id = nextId;
      return new Promise((resolve, reject) => {
        pending.set(id, resolve);
        child.once('exit', () => reject(new Error(`worker exited before answering ${op}`)));
        write({ type: 'cmd', id, op, ...args });
      });
    },
    signal(signal) {
      child.kill(signal);
    },
  };
}
