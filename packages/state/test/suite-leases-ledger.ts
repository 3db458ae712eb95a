import { type Json, sha256Hex } from '@crustcore/kernel';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  acquireFileLease,
  crossCheckLedgerMirror,
  type Db,
  type LedgerFrameSummary,
  ledgerMirrorHead,
  mirroredFramesOfTask,
  mirrorLedgerFrames,
  releaseFileLease,
  renewFileLease,
  withFileLease,
} from '../src/index.js';
import { left, refusedBySql, right, taskId, waitUntil } from './assertions.js';
import { type EngineHarness, openMigrated } from './engines.js';

const frame = (seq: number, payload: Json = { seq }, task: string | null = null): LedgerFrameSummary => ({
  seq,
  frameHash: sha256Hex(`frame ${seq} ${JSON.stringify(payload)}`),
  kind: seq % 2 === 0 ? 'ToolCallCompleted' : 'ModelOutputReceived',
  taskId: task,
  payload,
});

export function leaseAndLedgerSuite(engine: EngineHarness): void {
  describe(`file leases (${engine.name})`, () => {
    let db: Db;
    beforeAll(async () => {
      db = await openMigrated(engine, 'leases');
    });

    it('grants one holder per canonical path, takes over only after expiry, and fences the old holder', async () => {
      const path = '/repo/src/index.ts';
      const first = right(await acquireFileLease(db, { path, holder: 'agent-a', ttlMs: 1000 }));
      expect(left(await acquireFileLease(db, { path, holder: 'agent-b', ttlMs: 1000 }), 'FileLeaseHeld')).toMatchObject(
        {
          holder: 'agent-a',
        },
      );
      const renewed = right(await renewFileLease(db, first, 1000));
      expect(renewed.token).toBe(first.token);
      expect(right(await withFileLease(db, renewed, async (tx) => (await tx.query('SELECT 1 AS one')).rows))).toEqual([
        { one: 1 },
      ]);
      await waitUntil(db, 'SELECT expires_at <= now() AS done FROM crust_file_leases WHERE path = $1::text', [path]);
      const second = right(await acquireFileLease(db, { path, holder: 'agent-b', ttlMs: 60_000 }));
      expect(second.token > first.token).toBe(true);
      left(await renewFileLease(db, first, 1000), 'FileLeaseLost');
      left(await withFileLease(db, first, async () => 'never runs'), 'FileLeaseLost');
      left(await releaseFileLease(db, first), 'FileLeaseLost');
      await refusedBySql(db, 'UPDATE crust_file_leases SET token = token - 1 WHERE path = $1::text', [path], 'ZC005');
      await refusedBySql(
        db,
        `UPDATE crust_file_leases SET holder = 'agent-c', token = nextval('crust_fence_seq') WHERE path = $1::text`,
        [path],
        'ZC005',
      );
      right(await releaseFileLease(db, second));
      right(await acquireFileLease(db, { path, holder: 'agent-c', ttlMs: 1000 }));
    });

    it('accepts only a lease it minted', async () => {
      const lease = right(await acquireFileLease(db, { path: '/repo/forge.ts', holder: 'h', ttlMs: 60_000 }));
      const lookAlike = { path: lease.path, holder: lease.holder, token: lease.token, expiresAt: lease.expiresAt };
      // @ts-expect-error a plain object is not a FileLease (private fields)
      await expect(releaseFileLease(db, lookAlike)).rejects.toThrow(TypeError);
      right(await releaseFileLease(db, lease));
    });

    it('accepts only normalized absolute paths', async () => {
      for (const path of ['relative/x', '/a/../b', '/a//b', '/a/./b', '/a/', '']) {
        left(await acquireFileLease(db, { path, holder: 'h', ttlMs: 1000 }), 'InvalidInput');
      }
      await refusedBySql(
        db,
        `INSERT INTO crust_file_leases (path, holder, token, expires_at) VALUES ('/a/../b', 'h', 1, now())`,
        [],
        '23514',
      );
    });
  });

  describe(`ledger mirror (${engine.name})`, () => {
    let db: Db;
    const task = taskId();
    const frames = [1, 2, 3, 4, 5].map((seq) => frame(seq, { seq }, seq === 3 ? task : null));
    beforeAll(async () => {
      db = await openMigrated(engine, 'ledger');
    });

    it('appends gap-free, idempotently, append-only', async () => {
      expect(right(await mirrorLedgerFrames(db, frames))).toEqual({ inserted: 5, skipped: 0, head: 5 });
      expect(right(await mirrorLedgerFrames(db, frames.slice(3)))).toEqual({ inserted: 0, skipped: 2, head: 5 });
      expect(left(await mirrorLedgerFrames(db, [frame(7)]), 'LedgerDiscontinuity')).toMatchObject({
        expectedSeq: 6,
        presentedSeq: 7,
      });
      left(await mirrorLedgerFrames(db, [frame(3, { different: true })]), 'LedgerMirrorConflict');
      // A failed batch leaves nothing behind.
      left(await mirrorLedgerFrames(db, [frame(6), frame(8)]), 'LedgerDiscontinuity');
      expect(await ledgerMirrorHead(db)).toBe(5);
      await refusedBySql(db, `UPDATE crust_ledger_mirror SET kind = 'x' WHERE seq = 1`, [], 'ZC006');
      await refusedBySql(db, 'DELETE FROM crust_ledger_mirror WHERE seq = 5', [], 'ZC006');
      await refusedBySql(
        db,
        `INSERT INTO crust_ledger_mirror (seq, frame_hash, kind, payload) VALUES (9, $1::text, 'k', '{}')`,
        [sha256Hex('nine')],
        'ZC008',
      );
      expect((await mirroredFramesOfTask(db, task)).map((mirrored) => mirrored.seq)).toEqual([3]);
    });

    it('cross-checks the mirror against the ledger and reports each kind of mismatch', async () => {
      const clean = await crossCheckLedgerMirror(db, frames);
      expect(clean).toMatchObject({ consistent: true, framesChecked: 5, ledgerHead: 5, mirrorHead: 5, behind: 0 });

      const longer = await crossCheckLedgerMirror(db, [...frames, frame(6), frame(7)]);
      expect(longer).toMatchObject({ consistent: true, behind: 2, ledgerHead: 7 });

      const tampered = frames.map((item) => {
        if (item.seq === 2) return { ...item, payload: { seq: 2, edited: true } };
        if (item.seq === 4) return { ...item, frameHash: sha256Hex('forged') };
        return item;
      });
      const report = await crossCheckLedgerMirror(db, tampered.slice(0, 5));
      expect(report.consistent).toBe(false);
      expect(report.mismatches).toEqual([
        { _tag: 'FieldMismatch', seq: 2, field: 'payload' },
        { _tag: 'HashMismatch', seq: 4, ledgerHash: sha256Hex('forged'), mirrorHash: frame(4).frameHash },
      ]);

      const shorter = await crossCheckLedgerMirror(db, frames.slice(0, 3));
      expect(shorter.mismatches).toEqual([
        { _tag: 'ExtraInMirror', seq: 4 },
        { _tag: 'ExtraInMirror', seq: 5 },
      ]);

      async function* shuffled() {
        yield frames[0] as LedgerFrameSummary;
        yield frames[2] as LedgerFrameSummary;
      }
      const outOfOrder = await crossCheckLedgerMirror(db, shuffled(), { maxMismatches: 1 });
      expect(outOfOrder.mismatches[0]).toEqual({ _tag: 'LedgerOutOfOrder', seq: 3, expectedSeq: 2 });
      expect(outOfOrder.truncated).toBe(true);
    });

    it('keeps many ledgers apart: each has its own seqs, continuity and cross-check', async () => {
      const other = { ledgerId: 'host-b:0123456789abcdef' };
      const otherFrames = [1, 2, 3].map((seq) => frame(seq, { other: seq }));
      expect(right(await mirrorLedgerFrames(db, otherFrames, other))).toEqual({ inserted: 3, skipped: 0, head: 3 });
      expect(await ledgerMirrorHead(db, other)).toBe(3);
      expect(await ledgerMirrorHead(db)).toBe(5);
      // Continuity is per ledger: seq 4 is next here even though 'default' is at 5.
      left(await mirrorLedgerFrames(db, [frame(6)], other), 'LedgerDiscontinuity');
      expect((await crossCheckLedgerMirror(db, otherFrames, other)).consistent).toBe(true);
      expect((await crossCheckLedgerMirror(db, frames)).consistent).toBe(true);
      // The other ledger's frames checked against 'default' do not pass.
      expect((await crossCheckLedgerMirror(db, otherFrames)).consistent).toBe(false);
      left(await mirrorLedgerFrames(db, otherFrames, { ledgerId: 'no spaces' }), 'InvalidInput');
      await refusedBySql(
        db,
        `INSERT INTO crust_ledger_mirror (ledger_id, seq, frame_hash, kind, payload) VALUES ('x y', 1, $1::text, 'k', '{}')`,
        [sha256Hex('bad id')],
        '23514',
      );
    });
  });
}
