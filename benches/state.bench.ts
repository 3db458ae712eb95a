/**
 * State plane (issue 8, part 1): job claim throughput and task transition
 * latency, on a throwaway PostgreSQL cluster and on embedded PGlite.
 *
 * - Claim throughput with 1, 4 and 16 workers (jobs/s): each worker claims
 *   until the queue is empty (PostgreSQL: one connection per worker; PGlite:
 *   concurrent callers of its one connection). Baseline: the same workers
 *   running a bare `UPDATE … RETURNING` by primary key on the same database,
 *   the same number of times. Median of 3 rounds.
 * - Task transition p50 (`transitionTask`: a transaction with a row lock, the
 *   catalog trigger and the history insert) against a bare `UPDATE …
 *   RETURNING` by primary key.
 *
 * Run: node --conditions=source --import tsx benches/state.bench.ts
 */
import { makeId } from '@crustcore/kernel';
import { claimJob, type Db, openPostgresDb, openStateDb, type TaskPhase, transitionTask } from '@crustcore/state';
import { startThrowawayCluster } from '@crustcore/state/testing';
import { type BenchRow, ratio, runCases } from './harness.js';

const WORKER_COUNTS = [1, 4, 16] as const;
const ROUNDS = 3;

interface Engine {
  readonly name: string;
  readonly db: Db;
  readonly jobsPerRound: number;
  /** `count` competing workers. */
  workers(count: number): Promise<Db[]>;
  release(workers: readonly Db[]): Promise<void>;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

async function prepare(db: Db): Promise<void> {
  await db.query('CREATE TABLE IF NOT EXISTS bench_counter (id int4 PRIMARY KEY, n int4 NOT NULL)');
  await db.query(
    'INSERT INTO bench_counter (id, n) SELECT g, 0 FROM generate_series(1, 64) g ON CONFLICT (id) DO NOTHING',
  );
}

let round = 0;
async function enqueueMany(db: Db, count: number): Promise<void> {
  round += 1;
  await db.query(
    `INSERT INTO crust_jobs (id, kind) SELECT 'j_r' || $1::int4 || '-' || g, 'bench' FROM generate_series(1, $2::int4) g`,
    [round, count],
  );
}

/** Jobs/s for `count` workers claiming until the queue is empty. */
async function claimRate(engine: Engine, workers: readonly Db[]): Promise<number> {
  await enqueueMany(engine.db, engine.jobsPerRound);
  const started = performance.now();
  const claimed = await Promise.all(
    workers.map(async (worker, index) => {
      let mine = 0;
      for (;;) {
        const result = await claimJob(worker, { owner: `bench-${index}`, leaseMs: 600_000, kinds: ['bench'] });
        if (result._tag === 'Left') throw new Error(result.left._tag);
        if (result.right === null) return mine;
        mine += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const total = claimed.reduce((sum, n) => sum + n, 0);
  if (total !== engine.jobsPerRound) throw new Error(`claimed ${total} of ${engine.jobsPerRound}`);
  return total / seconds;
}

/** Ops/s for the same workers running the same number of bare UPDATE … RETURNING statements. */
async function bareUpdateRate(engine: Engine, workers: readonly Db[]): Promise<number> {
  const perWorker = Math.ceil(engine.jobsPerRound / workers.length);
  const started = performance.now();
  await Promise.all(
    workers.map(async (worker, index) => {
      for (let n = 0; n < perWorker; n += 1) {
        await worker.query('UPDATE bench_counter SET n = n + 1 WHERE id = $1::int4 RETURNING n', [(index % 64) + 1]);
      }
    }),
  );
  return (perWorker * workers.length) / ((performance.now() - started) / 1000);
}

async function claimThroughput(engine: Engine): Promise<void> {
  const rows: Record<string, string>[] = [];
  for (const count of WORKER_COUNTS) {
    const workers = await engine.workers(count);
    const claims: number[] = [];
    const bare: number[] = [];
    for (let r = 0; r < ROUNDS; r += 1) {
      bare.push(await bareUpdateRate(engine, workers));
      claims.push(await claimRate(engine, workers));
    }
    await engine.release(workers);
    const claim = median(claims);
    const baseline = median(bare);
    rows.push({
      workers: String(count),
      'claim jobs/s': Math.round(claim).toLocaleString('en-US'),
      'bare UPDATE…RETURNING /s': Math.round(baseline).toLocaleString('en-US'),
      'ratio (claim / bare)': `${(claim / baseline).toFixed(2)}×`,
    });
  }
  console.log(`\n## ${engine.name}: job claim throughput (median of ${ROUNDS} rounds, ${engine.jobsPerRound} jobs)`);
  console.table(rows);
  for (const row of rows) {
    console.log(`ratio ${engine.name} claim throughput, ${row.workers} worker(s): ${row['ratio (claim / bare)']}`);
  }
}

async function transitionLatency(engine: Engine): Promise<void> {
  const POOL = 4000;
  await engine.db.query(
    `INSERT INTO crust_tasks (id) SELECT 't_lat' || g FROM generate_series(1, $1::int4) g ON CONFLICT (id) DO NOTHING`,
    [POOL],
  );
  const steps: readonly TaskPhase[] = ['PLAN', 'IMPLEMENT', 'VERIFY'];
  let next = 0;
  const rows: BenchRow[] = await runCases(
    `${engine.name}: task transition latency`,
    [
      {
        name: 'bare UPDATE … RETURNING',
        fn: () => engine.db.query('UPDATE bench_counter SET n = n + 1 WHERE id = 1 RETURNING n'),
      },
      {
        name: 'transitionTask (row lock + catalog trigger + history)',
        fn: async () => {
          const task = Math.floor(next / steps.length) + 1;
          if (task > POOL) throw new Error('task pool exhausted; raise POOL');
          const phase = steps[next % steps.length] as TaskPhase;
          next += 1;
          const moved = await transitionTask(engine.db, makeId('TaskId', `lat${task}`), phase);
          if (moved._tag === 'Left') throw new Error(moved.left._tag);
        },
      },
    ],
    1_000,
  );
  const [bare, transition] = rows;
  if (bare !== undefined && transition !== undefined)
    ratio(`${engine.name} transition p50 vs bare UPDATE`, transition, bare);
}

async function main(): Promise<void> {
  const cluster = await startThrowawayCluster();
  try {
    const opened = await openStateDb({ databaseUrl: cluster.databaseUrl, schema: 'bench', maxConnections: 2 });
    if (opened._tag === 'Left') throw new Error(opened.left._tag);
    const db = opened.right;
    await prepare(db);
    const postgres: Engine = {
      name: 'PostgreSQL',
      db,
      jobsPerRound: 800,
      async workers(count) {
        return Array.from({ length: count }, () => {
          const pool = openPostgresDb({ databaseUrl: cluster.databaseUrl, schema: 'bench', maxConnections: 1 });
          if (pool._tag === 'Left') throw new Error(pool.left.reason);
          return pool.right;
        });
      },
      release: async (workers) => {
        await Promise.all(workers.map((worker) => worker.close()));
      },
    };
    await claimThroughput(postgres);
    await transitionLatency(postgres);
    await db.close();
  } finally {
    await cluster.stop();
  }

  const opened = await openStateDb({ relaxedDurability: true });
  if (opened._tag === 'Left') throw new Error(opened.left._tag);
  const db = opened.right;
  try {
    await prepare(db);
    const pglite: Engine = {
      name: 'PGlite',
      db,
      jobsPerRound: 400,
      // One connection: the workers are concurrent callers of the same database.
      workers: async (count) => Array.from({ length: count }, () => db),
      release: async () => {},
    };
    await claimThroughput(pglite);
    await transitionLatency(pglite);
  } finally {
    await db.close();
  }
}

await main();
