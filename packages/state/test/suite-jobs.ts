import { beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgeCancel,
  attachJobArtifact,
  cancelJob,
  claimJob,
  completeJob,
  type Db,
  enqueueJob,
  failJob,
  getJob,
  heartbeatJob,
  JOB_TRANSITIONS,
  type JobLease,
  jobProgress,
  killJob,
  putBlob,
  recordJobProgress,
  recoverExpiredLeases,
  startJob,
} from '../src/index.js';
import { jobId, left, refusedBySql, right, waitForLeaseToLapse, waitUntil } from './assertions.js';
import { type EngineHarness, openMigrated } from './engines.js';

async function claimOne(db: Db, owner: string, leaseMs: number, kinds?: readonly string[]): Promise<JobLease> {
  const claimed = right(await claimJob(db, { owner, leaseMs, ...(kinds === undefined ? {} : { kinds }) }));
  if (claimed === null) throw new Error('nothing to claim');
  return claimed;
}

export function jobSuite(engine: EngineHarness): void {
  describe(`jobs and fencing (${engine.name})`, () => {
    let db: Db;
    beforeAll(async () => {
      db = await openMigrated(engine, 'jobs');
    });

    it('50 jobs × 10 competing workers: each job is claimed exactly once', async () => {
      const ids = Array.from({ length: 50 }, () => jobId());
      for (const id of ids) right(await enqueueJob(db, { id, kind: 'work' }));
      const workers = await engine.competitors('jobs', 10);
      // Connect every worker before the race starts, so they all compete from the first claim.
      await Promise.all(workers.map((worker) => worker.query('SELECT 1')));
      const claimedBy = await Promise.all(
        workers.map(async (worker, index) => {
          const mine: JobLease[] = [];
          // Bounded: there are only 50 jobs.
          for (let round = 0; round < 60; round += 1) {
            const claimed = right(
              await claimJob(worker, { owner: `worker-${index}`, leaseMs: 60_000, kinds: ['work'] }),
            );
            if (claimed === null) break;
            mine.push(claimed);
            right(await completeJob(worker, claimed, { result: { by: index } }));
          }
          return mine;
        }),
      );
      const all = claimedBy.flat();
      expect(all).toHaveLength(50);
      expect(new Set(all.map((lease) => lease.jobId))).toEqual(new Set(ids));
      expect(new Set(all.map((lease) => lease.token)).size).toBe(50);
      const done = await db.query<{ n: number }>(
        `SELECT count(*)::int4 AS n FROM crust_jobs WHERE kind = 'work' AND status = 'Completed'`,
      );
      expect(done.rows[0]?.n).toBe(50);
      if (engine.name === 'postgres') {
        // Real contention: more than one connection took work.
        expect(claimedBy.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
      }
    });

    it('refuses every write of a worker whose lease was re-granted, in the database', async () => {
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'fence', retry: { baseDelayMs: 0 } }));
      const stale = await claimOne(db, 'slow-worker', 500, ['fence']);
      right(await recordJobProgress(db, stale, { message: 'started' }));
      await waitForLeaseToLapse(db, id);
      expect((await recoverExpiredLeases(db)).requeued).toContain(id);
      const fresh = await claimOne(db, 'fast-worker', 60_000, ['fence']);
      expect(fresh.jobId).toBe(id);
      expect(fresh.token > stale.token).toBe(true);
      expect(fresh.attempt).toBe(2);

      const refusal = left(await recordJobProgress(db, stale, { message: 'late' }), 'FenceRejected');
      expect(refusal).toEqual({
        _tag: 'FenceRejected',
        jobId: id,
        presentedToken: stale.token.toString(),
        currentToken: fresh.token.toString(),
        reason: 'regranted',
      });
      left(await heartbeatJob(db, stale), 'FenceRejected');
      left(await startJob(db, stale), 'FenceRejected');
      left(await completeJob(db, stale), 'FenceRejected');
      left(await failJob(db, stale, { error: 'x' }), 'FenceRejected');
      const blob = right(await putBlob(db, 'artifact bytes'));
      left(await attachJobArtifact(db, stale, { sha256: blob.sha256, label: 'log' }), 'FenceRejected');
      // Raw SQL with the stale token is refused by the trigger too.
      await refusedBySql(
        db,
        `INSERT INTO crust_job_progress (job_id, fence_token, message) VALUES ($1::text, $2::int8, 'raw')`,
        [id, stale.token.toString()],
        'ZC003',
      );

      right(await recordJobProgress(db, fresh, { message: 'mine now' }));
      right(await attachJobArtifact(db, fresh, { sha256: blob.sha256, label: 'log' }));
      const completed = right(await completeJob(db, fresh, { result: { ok: true } }));
      expect(completed).toMatchObject({ status: 'Completed', owner: 'fast-worker', attempt: 2, result: { ok: true } });
      const notes = await jobProgress(db, id);
      expect(notes.map((note) => [note.message, note.fenceToken])).toEqual([
        ['started', stale.token],
        ['mine now', fresh.token],
      ]);
      // Finished: even the last holder is refused now.
      expect(left(await recordJobProgress(db, fresh, { message: 'after' }), 'FenceRejected')).toMatchObject({
        reason: 'ended',
      });
    });

    it('refuses a lease that ran out on the database clock, even before anyone re-grants it', async () => {
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'lapse' }));
      const lease = await claimOne(db, 'w', 100, ['lapse']);
      await waitForLeaseToLapse(db, id);
      expect(left(await recordJobProgress(db, lease, { message: 'late' }), 'FenceRejected')).toMatchObject({
        reason: 'expired',
      });
      left(await heartbeatJob(db, lease), 'FenceRejected');
    });

    it('holds the job transition catalog that JOB_TRANSITIONS describes', async () => {
      const rows = await db.query<{ from_status: string; to_status: string }>(
        'SELECT from_status, to_status FROM crust_job_status_edges',
      );
      const inDatabase = rows.rows.map((row) => `${row.from_status}->${row.to_status}`).sort();
      const described = Object.entries(JOB_TRANSITIONS).flatMap(([from, targets]) =>
        targets.map((to) => `${from}->${to}`),
      );
      expect(inDatabase).toEqual(described.sort());
    });

    it('keeps tokens increasing and job status moves on the catalog, even for raw SQL', async () => {
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'raw' }));
      await refusedBySql(db, `UPDATE crust_jobs SET status = 'Running' WHERE id = $1::text`, [id], 'ZC004');
      await refusedBySql(
        db,
        `UPDATE crust_jobs SET status = 'Leased', owner = 'x', lease_ms = 1000, lease_expires_at = now() + interval '1 s'
          WHERE id = $1::text`,
        [id],
        'ZC005',
      );
      await refusedBySql(
        db,
        `INSERT INTO crust_jobs (id, kind, status, owner, fence_token, lease_ms, lease_expires_at)
         VALUES ($1::text, 'raw', 'Leased', 'x', 1, 1000, now())`,
        [jobId()],
        'ZC004',
      );
      const lease = await claimOne(db, 'w', 60_000, ['raw']);
      await refusedBySql(db, 'UPDATE crust_jobs SET fence_token = fence_token - 1 WHERE id = $1::text', [id], 'ZC005');
      await refusedBySql(
        db,
        'UPDATE crust_jobs SET payload = $2::text::jsonb WHERE id = $1::text',
        [id, '{"a":1}'],
        'ZC006',
      );
      right(await completeJob(db, lease));
      await refusedBySql(db, `UPDATE crust_jobs SET status = 'Queued' WHERE id = $1::text`, [id], 'ZC004');
      await refusedBySql(db, `UPDATE crust_job_status_edges SET to_status = 'Queued'`, [], 'ZC011');
    });

    it('recovers expired leases: requeued with attempt + 1, then Failed after the last attempt', async () => {
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'flaky', retry: { maxAttempts: 2, baseDelayMs: 0 } }));
      const first = await claimOne(db, 'w1', 100, ['flaky']);
      expect(first.attempt).toBe(1);
      await waitForLeaseToLapse(db, id);
      expect((await recoverExpiredLeases(db)).requeued).toContain(id);
      expect(await getJob(db, id)).toMatchObject({ status: 'Retrying', attempt: 2 });
      const second = await claimOne(db, 'w2', 100, ['flaky']);
      expect(second.attempt).toBe(2);
      await waitForLeaseToLapse(db, id);
      expect((await recoverExpiredLeases(db)).failed).toContain(id);
      expect(await getJob(db, id)).toMatchObject({ status: 'Failed', attempt: 2, lastError: 'lease of w2 expired' });
      expect(right(await claimJob(db, { owner: 'w3', leaseMs: 1000, kinds: ['flaky'] }))).toBeNull();
    });

    it('heartbeats extend the lease; a missed one is flagged; cancellation reaches the worker', async () => {
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'beat' }));
      // A long lease, so the job cannot lapse however slow the machine is while the test
      // waits past half of it (by moving the last heartbeat back on the database's clock).
      const lease = await claimOne(db, 'w', 600_000, ['beat']);
      const running = right(await startJob(db, lease, { processHandle: `pid:${process.pid}` }));
      expect(running).toMatchObject({ status: 'Running', processHandle: `pid:${process.pid}` });
      const ack = right(await heartbeatJob(db, lease));
      expect(ack.cancelRequested).toBe(false);
      expect(ack.leaseExpiresAt.getTime()).toBeGreaterThanOrEqual(running.leaseExpiresAt?.getTime() ?? 0);
      // Over half the lease without a heartbeat, well before it runs out.
      await db.query(
        `UPDATE crust_jobs SET heartbeat_at = now() - (lease_ms * 0.6) * interval '1 millisecond' WHERE id = $1::text`,
        [id],
      );
      expect((await recoverExpiredLeases(db)).heartbeatMissing).toContain(id);
      expect((await getJob(db, id))?.status).toBe('HeartbeatMissing');
      right(await heartbeatJob(db, lease));
      expect((await getJob(db, id))?.status).toBe('Running');

      expect(right(await cancelJob(db, id))).toMatchObject({ status: 'Running', cancelRequested: true });
      expect(right(await heartbeatJob(db, lease)).cancelRequested).toBe(true);
      expect(right(await acknowledgeCancel(db, lease)).status).toBe('Killed');
      expect(left(await heartbeatJob(db, lease), 'FenceRejected')).toMatchObject({ reason: 'ended' });
    });

    it('fails, retries with backoff, cancels, kills and expires by deadline', async () => {
      const retried = jobId();
      right(await enqueueJob(db, { id: retried, kind: 'retry', retry: { baseDelayMs: 60_000 } }));
      const lease = await claimOne(db, 'w', 60_000, ['retry']);
      const failed = right(await failJob(db, lease, { error: 'transient', retryable: true }));
      expect(failed).toMatchObject({ status: 'Retrying', attempt: 2, lastError: 'transient' });
      expect(failed.availableAt.getTime()).toBeGreaterThan(Date.now() + 30_000);
      // Backing off: not claimable yet.
      expect(right(await claimJob(db, { owner: 'w', leaseMs: 1000, kinds: ['retry'] }))).toBeNull();

      const fatal = jobId();
      right(await enqueueJob(db, { id: fatal, kind: 'fatal' }));
      const fatalLease = await claimOne(db, 'w', 60_000, ['fatal']);
      expect(right(await failJob(db, fatalLease, { error: 'bad input', retryable: false })).status).toBe('Failed');

      const queued = jobId();
      right(await enqueueJob(db, { id: queued, kind: 'cancel' }));
      expect(right(await cancelJob(db, queued)).status).toBe('Killed');

      const doomed = jobId();
      right(await enqueueJob(db, { id: doomed, kind: 'kill' }));
      const doomedLease = await claimOne(db, 'w', 60_000, ['kill']);
      expect(right(await killJob(db, doomed, 'process killed by daemon')).status).toBe('Killed');
      expect(left(await completeJob(db, doomedLease), 'FenceRejected')).toMatchObject({ reason: 'ended' });
      left(await killJob(db, doomed, 'again'), 'IllegalJobStatus');

      const late = jobId();
      right(await enqueueJob(db, { id: late, kind: 'deadline', deadlineMs: 50 }));
      await waitUntil(db, 'SELECT deadline_at <= now() AS done FROM crust_jobs WHERE id = $1::text', [late]);
      expect(right(await claimJob(db, { owner: 'w', leaseMs: 1000, kinds: ['deadline'] }))).toBeNull();
      const leasedLate = jobId();
      right(await enqueueJob(db, { id: leasedLate, kind: 'deadline-leased', deadlineMs: 600 }));
      const lateLease = await claimOne(db, 'w', 60_000, ['deadline-leased']);
      await waitUntil(db, 'SELECT deadline_at <= now() AS done FROM crust_jobs WHERE id = $1::text', [leasedLate]);
      const swept = await recoverExpiredLeases(db);
      expect(swept.deadlineExceeded).toEqual(expect.arrayContaining([late, leasedLate]));
      expect((await getJob(db, late))?.status).toBe('Killed');
      // Leased past its deadline: Expired, then Failed (not retried), and its worker is refused.
      expect(await getJob(db, leasedLate)).toMatchObject({ status: 'Failed', lastError: 'deadline passed' });
      expect(left(await heartbeatJob(db, lateLease), 'FenceRejected')).toMatchObject({ reason: 'ended' });
    });

    it('accepts only a lease minted by claimJob, at compile time and at run time', async () => {
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'forge' }));
      const real = await claimOne(db, 'w', 60_000, ['forge']);
      const lookAlike = { jobId: real.jobId, token: real.token, owner: real.owner };
      // @ts-expect-error a plain object is not a JobLease (private fields)
      await expect(recordJobProgress(db, lookAlike, { message: 'forged' })).rejects.toThrow(TypeError);
      // @ts-expect-error a token string is not a JobLease either
      await expect(completeJob(db, real.token.toString())).rejects.toThrow(TypeError);
      expect(await jobProgress(db, id)).toEqual([]);
      right(await completeJob(db, real));
    });

    it('validates its input and claims by kind', async () => {
      left(await enqueueJob(db, { id: 'x' as never, kind: 'a' }), 'InvalidInput');
      left(await enqueueJob(db, { id: jobId(), kind: 'Bad Kind' }), 'InvalidInput');
      left(await enqueueJob(db, { id: jobId(), kind: 'a', retry: { maxAttempts: 0 } }), 'InvalidInput');
      left(await claimJob(db, { owner: 'w', leaseMs: 1 }), 'InvalidInput');
      left(await claimJob(db, { owner: '', leaseMs: 1000 }), 'InvalidInput');
      const id = jobId();
      right(await enqueueJob(db, { id, kind: 'only-b', payload: { n: 1 }, budget: { tokens: 100 } }));
      left(await enqueueJob(db, { id, kind: 'only-b' }), 'AlreadyExists');
      expect(right(await claimJob(db, { owner: 'w', leaseMs: 1000, kinds: ['nothing-here'] }))).toBeNull();
      const lease = await claimOne(db, 'w', 1000, ['only-b']);
      expect(lease.jobId).toBe(id);
      expect(lease.payload).toEqual({ n: 1 });
      expect(lease.job.budget).toEqual({ tokens: 100 });
    });
  });
}
