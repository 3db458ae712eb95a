/**
 * Daemon (issue 8, part 2): what the supervisor and the admin socket cost on
 * top of the state plane and a bare socket.
 *
 * - Admin round trip (`status` over the admin socket: connect, one JSON line,
 *   io-ts decode, reply) against a bare Unix-socket echo with a fresh
 *   connection per request.
 * - Job throughput through the `Supervisor` (claim, start, heartbeat timer,
 *   per-repository queue, complete) with a runner that finishes at once,
 *   4 workers, against 4 bare loops of claimJob → startJob → completeJob on the
 *   same throwaway PostgreSQL. Median of 3 rounds.
 *
 * Run: node --conditions=source --import tsx benches/daemon.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApprovalDesk,
  adminOk,
  callAdmin,
  Supervisor,
  startAdminServer,
  TASK_JOB_KIND,
  taskJobPayloadJson,
} from '@crustcore/daemon';
import { makeId } from '@crustcore/kernel';
import * as state from '@crustcore/state';
import { startThrowawayCluster } from '@crustcore/state/testing';
import { ratio, report, runCases } from './harness.js';

const JOBS = 200;
const WORKERS = 4;
const ROUNDS = 3;

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function echoOnce(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    socket.once('connect', () => socket.write('{"op":"status"}\n'));
    socket.once('data', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

async function adminRoundTrip(dir: string): Promise<void> {
  const echoPath = join(dir, 'echo.sock');
  const echo = createServer((socket) => socket.on('data', (chunk) => socket.write(chunk)));
  await new Promise<void>((resolve) => echo.listen(echoPath, resolve));
  const admin = await startAdminServer(join(dir, 'admin', 'admin.sock'), async () => adminOk({ paused: false }));
  const rows = await runCases('admin socket round trip (fresh connection per request)', [
    { name: 'bare unix-socket echo', fn: () => echoOnce(echoPath) },
    { name: 'admin status request', fn: () => callAdmin(admin.socketPath, { op: 'status' }) },
  ]);
  ratio('admin request vs bare echo', rows[1] as never, rows[0] as never);
  await admin.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
}

const payload = taskJobPayloadJson({
  v: 1,
  dir: '/nonexistent',
  goal: 'bench',
  verify: null,
  verifyFromUser: false,
  worker: ['true'],
  approve: 'deny',
  maxRevisits: 0,
  timeoutSeconds: 60,
});

let batch = 0;
async function enqueue(db: state.Db): Promise<void> {
  batch += 1;
  for (let i = 0; i < JOBS; i += 1) {
    const queued = await state.enqueueJob(db, { id: makeId('JobId', `b${batch}-${i}`), kind: TASK_JOB_KIND, payload });
    if (queued._tag === 'Left') throw new Error(queued.left._tag);
  }
}

async function bareRate(db: state.Db): Promise<number> {
  await enqueue(db);
  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, index) => {
      for (;;) {
        const claimed = await state.claimJob(db, { owner: `bare-${index}`, leaseMs: 30_000, kinds: [TASK_JOB_KIND] });
        if (claimed._tag === 'Left') throw new Error(claimed.left._tag);
        if (claimed.right === null) return;
        await state.startJob(db, claimed.right);
        await state.completeJob(db, claimed.right, { result: { ok: true } });
        done += 1;
      }
    }),
  );
  if (done !== JOBS) throw new Error(`bare loop finished ${done} of ${JOBS}`);
  return JOBS / ((performance.now() - started) / 1000);
}

async function supervisorRate(db: state.Db): Promise<number> {
  await enqueue(db);
  let finished = 0;
  let resolveAll: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (resolveAll = resolve));
  const supervisor = new Supervisor({
    state,
    db,
    owner: 'bench-supervisor',
    workers: WORKERS,
    leaseMs: 30_000,
    pollMs: 5,
    recoverEveryMs: 60_000,
    stopGraceMs: 5_000,
    desk: new ApprovalDesk({ timeoutMs: 1_000 }),
    runJob: async (job) => ({
      kind: 'succeeded',
      result: {
        taskId: job.lease.jobId,
        outcome: 'completed',
        reason: '',
        attempts: 1,
        patchHash: null,
        applied: null,
        owner: 'bench',
      },
    }),
    log: (kind) => {
      if (kind === 'job.finished') {
        finished += 1;
        if (finished === JOBS) resolveAll();
      }
    },
  });
  const started = performance.now();
  supervisor.start();
  await all;
  const seconds = (performance.now() - started) / 1000;
  await supervisor.stop();
  return JOBS / seconds;
}

async function throughput(): Promise<void> {
  const cluster = await startThrowawayCluster();
  try {
    const opened = await state.openStateDb({ databaseUrl: cluster.databaseUrl, maxConnections: WORKERS + 1 });
    if (opened._tag === 'Left') throw new Error(opened.left._tag);
    const db = opened.right;
    const bare: number[] = [];
    const supervised: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      bare.push(await bareRate(db));
      supervised.push(await supervisorRate(db));
    }
    console.log('\n## job throughput, 4 workers, PostgreSQL (jobs/s, median of 3)');
    console.table([
      { case: 'bare claim → start → complete loops', 'jobs/s': Math.round(median(bare)) },
      { case: 'Supervisor (no-op runner)', 'jobs/s': Math.round(median(supervised)) },
    ]);
    report('ratio supervisor vs bare loops (throughput)', `${(median(supervised) / median(bare)).toFixed(2)}×`);
    await db.close();
  } finally {
    await cluster.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'crustcore-daemon-bench-'));
try {
  await adminRoundTrip(dir);
  await throughput();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
