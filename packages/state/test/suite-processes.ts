import type { JobId } from '@crustcore/kernel';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  claimJob,
  completeJob,
  type Db,
  enqueueJob,
  getJob,
  jobProgress,
  recordJobProgress,
  recoverExpiredLeases,
} from '../src/index.js';
import { jobId, right, sleep, waitForLeaseToLapse } from './assertions.js';
import { type EngineHarness, openMigrated } from './engines.js';
import { spawnWorker, type WorkerProcess } from './worker-process.js';

const LEASE_MS = 1000;

export function processSuite(engine: EngineHarness): void {
  describe(`worker processes (${engine.name})`, () => {
    let db: Db;
    const started: WorkerProcess[] = [];
    beforeAll(async () => {
      db = await openMigrated(engine, 'procs');
    });
    afterEach(async () => {
      for (const worker of started.splice(0)) {
        worker.signal('SIGCONT');
        worker.signal('SIGKILL');
        await worker.exited;
      }
    });

    const spawn = (): WorkerProcess => {
      const worker = spawnWorker(engine.workerConnection('procs', db));
      started.push(worker);
      return worker;
    };

    const enqueue = async (options: { maxAttempts: number }): Promise<JobId> => {
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'proc', retry: { baseDelayMs: 0, ...options } }));
      return id;
    };

    it('a worker stopped past its lease is refused by its fencing token after SIGCONT', async () => {
      const id = await enqueue({ maxAttempts: 3 });
      const worker = spawn();
      const claimed = await worker.command('claim', { owner: `stopped-${worker.pid}`, leaseMs: LEASE_MS });
      expect(claimed).toMatchObject({ tag: 'Right', jobId: id });
      const staleToken = BigInt(claimed.token ?? '0');
      await worker.command('startHeartbeats', { intervalMs: LEASE_MS / 4 });
      expect(await worker.command('progress', { message: 'before stop' })).toEqual({ tag: 'Right' });

      worker.signal('SIGSTOP');
      await waitForLeaseToLapse(db, id);
      expect((await recoverExpiredLeases(db)).requeued).toContain(id);
      const takeover = right(await claimJob(db, { owner: 'replacement', leaseMs: 60_000 }));
      expect(takeover?.jobId).toBe(id);
      expect((takeover?.token ?? 0n) > staleToken).toBe(true);

      const beatsBefore = worker.heartbeats.length;
      worker.signal('SIGCONT');
      // Its timer fires late, with the old token. (A beat in flight at SIGSTOP may still report
      // its earlier success; every beat after the first refusal is refused.)
      const refusal = { tag: 'Left', error: 'FenceRejected', reason: 'regranted' };
      const refusedAt = () => worker.heartbeats.findIndex((beat, index) => index >= beatsBefore && beat.tag === 'Left');
      // Handshake: the first refused beat (only the test timeout bounds the wait).
      while (refusedAt() < 0) await sleep(25);
      expect(refusedAt()).toBeGreaterThanOrEqual(beatsBefore);
      await sleep(LEASE_MS / 2);
      for (const beat of worker.heartbeats.slice(refusedAt())) expect(beat).toEqual(refusal);
      expect(await worker.command('progress', { message: 'after resume' })).toEqual({
        tag: 'Left',
        error: 'FenceRejected',
        reason: 'regranted',
      });
      expect(await worker.command('complete')).toEqual({ tag: 'Left', error: 'FenceRejected', reason: 'regranted' });

      if (takeover === null) throw new Error('unreachable');
      right(await recordJobProgress(db, takeover, { message: 'replacement progress' }));
      right(await completeJob(db, takeover));
      const job = await getJob(db, id);
      expect(job).toMatchObject({ status: 'Completed', owner: 'replacement', attempt: 2 });
      expect((await jobProgress(db, id)).map((note) => note.message)).toEqual(['before stop', 'replacement progress']);
    });

    it('the job of a worker killed with SIGKILL is recovered after its lease expires', async () => {
      const id = await enqueue({ maxAttempts: 2 });
      const worker = spawn();
      const leaseMs = 2 * LEASE_MS;
      const claimed = await worker.command('claim', { owner: `killed-${worker.pid}`, leaseMs });
      expect(claimed).toMatchObject({ tag: 'Right', jobId: id });
      await worker.command('startHeartbeats', { intervalMs: leaseMs / 4 });
      worker.signal('SIGKILL');
      await worker.exited;

      // Not before the lease runs out: the database clock decides.
      expect((await recoverExpiredLeases(db)).requeued).not.toContain(id);
      await waitForLeaseToLapse(db, id);
      const recovered = await recoverExpiredLeases(db);
      expect(recovered.requeued).toContain(id);
      expect(await getJob(db, id)).toMatchObject({ status: 'Retrying', attempt: 2 });
      const again = right(await claimJob(db, { owner: 'survivor', leaseMs: 60_000 }));
      expect(again).not.toBeNull();
      expect(again?.jobId).toBe(id);
      if (again === null) throw new Error('unreachable');
      expect(right(await completeJob(db, again)).status).toBe('Completed');
    });
  });
}
