import { sha256Hex } from '@crustcore/kernel';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  advanceApplyJournal,
  claimJob,
  computeStagedContentHash,
  type Db,
  enqueueJob,
  getBlob,
  inFlightApplyJournals,
  listStagedDiffs,
  openApplyJournal,
  passingRunForCurrentContent,
  putBlob,
  recordVerificationRun,
  rejectStagedDiff,
  stageDiff,
  stagedContentHash,
  transitionTask,
} from '../src/index.js';
import { jobId, left, refusedBySql, right, waitForLeaseToLapse } from './assertions.js';
import { newTaskIn } from './drive.js';
import { type EngineHarness, openMigrated } from './engines.js';

export function stagingSuite(engine: EngineHarness): void {
  describe(`blobs, staged diffs, verification, apply journal (${engine.name})`, () => {
    let db: Db;
    beforeAll(async () => {
      db = await openMigrated(engine, 'staging');
    });

    it('stores blobs by content address, once, and the database checks the address', async () => {
      const bytes = new Uint8Array([0, 1, 2, 250, 255]);
      const first = right(await putBlob(db, bytes));
      expect(first).toEqual({ sha256: sha256Hex(bytes), byteSize: 5, created: true });
      expect(right(await putBlob(db, bytes)).created).toBe(false);
      expect(Array.from((await getBlob(db, first.sha256)) ?? [])).toEqual(Array.from(bytes));
      expect(await getBlob(db, sha256Hex('never stored'))).toBeNull();
      await refusedBySql(
        db,
        `INSERT INTO crust_blobs (sha256, byte_size, content) VALUES ($1::text, 3, 'abc'::bytea)`,
        [sha256Hex('something else')],
        '23514',
      );
      await refusedBySql(
        db,
        `UPDATE crust_blobs SET created_at = now() WHERE sha256 = $1::text`,
        [first.sha256],
        'ZC006',
      );
    });

    it('binds verification to the staged content and applies through a journal', async () => {
      const id = await newTaskIn(db, 'PLAN');
      expect(
        left(
          await stageDiff(db, { taskId: id, filePath: 'a.ts', base: 'old', staged: 'new', diff: '-old\n+new' }),
          'WrongPhase',
        ),
      ).toMatchObject({ phase: 'PLAN', required: 'IMPLEMENT' });
      right(await transitionTask(db, id, 'IMPLEMENT'));
      right(await stageDiff(db, { taskId: id, filePath: 'src/a.ts', base: 'a0', staged: 'a1', diff: '-a0\n+a1' }));
      right(await stageDiff(db, { taskId: id, filePath: 'src/b.ts', base: null, staged: 'b1', diff: '+b1' }));
      // Restaging a file supersedes its earlier diff.
      right(await stageDiff(db, { taskId: id, filePath: 'src/a.ts', base: 'a0', staged: 'a2', diff: '-a0\n+a2' }));
      left(
        await stageDiff(db, { taskId: id, filePath: '../escape', base: null, staged: 'x', diff: '' }),
        'InvalidInput',
      );
      const active = await listStagedDiffs(db, id);
      expect(active.map((diff) => [diff.filePath, diff.stagedSha256])).toEqual([
        ['src/a.ts', sha256Hex('a2')],
        ['src/b.ts', sha256Hex('b1')],
      ]);
      expect((await listStagedDiffs(db, id, { activeOnly: false })).map((diff) => diff.status).sort()).toEqual([
        'PENDING',
        'PENDING',
        'SUPERSEDED',
      ]);
      const hash = await stagedContentHash(db, id);
      expect(hash).toBe(computeStagedContentHash(active));

      right(await transitionTask(db, id, 'VERIFY'));
      // A run on other content is refused; a failing run does not open the gate.
      expect(
        left(
          await recordVerificationRun(db, {
            taskId: id,
            stagedHash: sha256Hex('other content'),
            argv: ['npm', 'test'],
            sandboxProfile: 'bwrap',
            exitCode: 0,
            durationMs: 5,
          }),
          'VerificationStale',
        ),
      ).toMatchObject({ current: hash });
      const failing = right(
        await recordVerificationRun(db, {
          taskId: id,
          stagedHash: hash,
          argv: ['npm', 'test'],
          sandboxProfile: 'bwrap',
          exitCode: 1,
          durationMs: 5,
        }),
      );
      expect(failing.passed).toBe(false);
      expect(left(await transitionTask(db, id, 'APPROVAL_GATE'), 'VerificationMissing')).toMatchObject({
        stagedHash: hash,
      });
      // Back to IMPLEMENT to fix; the content changes, so an earlier pass would not count.
      right(await transitionTask(db, id, 'IMPLEMENT'));
      right(await stageDiff(db, { taskId: id, filePath: 'src/b.ts', base: null, staged: 'b2', diff: '+b2' }));
      right(await transitionTask(db, id, 'VERIFY'));
      const newHash = await stagedContentHash(db, id);
      expect(newHash).not.toBe(hash);
      const passing = right(
        await recordVerificationRun(db, {
          taskId: id,
          stagedHash: newHash,
          argv: ['npm', 'test'],
          sandboxProfile: 'bwrap',
          exitCode: 0,
          durationMs: 7,
          stdoutSha256: sha256Hex('log'),
        }),
      );
      expect((await passingRunForCurrentContent(db, id))?.id).toBe(passing.id);
      left(await openApplyJournal(db, { taskId: id, verificationRunId: passing.id }), 'WrongPhase');
      right(await transitionTask(db, id, 'APPROVAL_GATE'));
      left(await transitionTask(db, id, 'COMMITTED'), 'UnappliedDiffs');
      left(await openApplyJournal(db, { taskId: id, verificationRunId: failing.id }), 'VerificationMissing');

      const journal = right(await openApplyJournal(db, { taskId: id, verificationRunId: passing.id }));
      expect(journal).toMatchObject({ status: 'PENDING', stagedHash: newHash });
      expect(journal.entries.map((entry) => entry.filePath)).toEqual(['src/a.ts', 'src/b.ts']);
      left(await openApplyJournal(db, { taskId: id, verificationRunId: passing.id }), 'AlreadyExists');
      // Diffs move only with their journal.
      await refusedBySql(
        db,
        `UPDATE crust_staged_diffs SET status = 'APPLIED' WHERE task_id = $1::text`,
        [id],
        'ZC006',
      );
      right(await advanceApplyJournal(db, journal.id, 'APPLYING'));
      expect((await listStagedDiffs(db, id)).map((diff) => diff.status)).toEqual(['APPLYING', 'APPLYING']);
      expect((await inFlightApplyJournals(db)).map((inFlight) => inFlight.id)).toContain(journal.id);
      // A crash here: recovery rolls back, the diffs are pending again, and a new journal can run.
      right(await advanceApplyJournal(db, journal.id, 'ROLLED_BACK'));
      expect((await listStagedDiffs(db, id)).map((diff) => diff.status)).toEqual(['PENDING', 'PENDING']);
      left(await advanceApplyJournal(db, journal.id, 'APPLIED'), 'IllegalJournalTransition');

      const retry = right(await openApplyJournal(db, { taskId: id, verificationRunId: passing.id }));
      right(await advanceApplyJournal(db, retry.id, 'APPLYING'));
      const applied = right(await advanceApplyJournal(db, retry.id, 'APPLIED'));
      expect(applied.status).toBe('APPLIED');
      expect((await listStagedDiffs(db, id)).map((diff) => diff.status)).toEqual(['APPLIED', 'APPLIED']);
      left(await advanceApplyJournal(db, retry.id, 'APPLYING'), 'IllegalJournalTransition');
      expect(right(await transitionTask(db, id, 'COMMITTED')).phase).toBe('COMMITTED');
    });

    it('fences staging and verification written by a worker', async () => {
      const id = await newTaskIn(db, 'IMPLEMENT');
      const job = jobId();
      right(await enqueueJob(db, { id: job, kind: 'stage', taskId: id, retry: { baseDelayMs: 0 } }));
      const stale = right(await claimJob(db, { owner: 'w1', leaseMs: 600, kinds: ['stage'] }));
      if (stale === null) throw new Error('nothing claimed');
      right(await stageDiff(db, { taskId: id, filePath: 'x.ts', base: null, staged: 'x1', diff: '+x1', lease: stale }));
      await waitForLeaseToLapse(db, job);
      left(
        await stageDiff(db, { taskId: id, filePath: 'x.ts', base: null, staged: 'x2', diff: '+x2', lease: stale }),
        'FenceRejected',
      );
      right(await transitionTask(db, id, 'VERIFY'));
      left(
        await recordVerificationRun(db, {
          taskId: id,
          stagedHash: await stagedContentHash(db, id),
          argv: ['npm', 'test'],
          sandboxProfile: 'bwrap',
          exitCode: 0,
          durationMs: 1,
          lease: stale,
        }),
        'FenceRejected',
      );
      const diffs = await listStagedDiffs(db, id);
      expect(diffs.map((diff) => diff.stagedSha256)).toEqual([sha256Hex('x1')]);
      const first = diffs[0];
      if (first === undefined) throw new Error('expected a diff');
      expect(right(await rejectStagedDiff(db, first.id)).status).toBe('REJECTED');
      left(await rejectStagedDiff(db, first.id), 'NotFound');
    });
  });
}
