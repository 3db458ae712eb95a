/**
 * Property: for random interleavings of several tasks through one LedgerSpine
 * writing a kernel snapshot every few frames (closed and reopened in between),
 * opening from ANY snapshot in the log and replaying the frames after it gives
 * exactly what a full replay from seq 1 gives: every recorded answer after the
 * snapshot reproduced, the same final state. The spine's own open resumes from
 * the newest snapshot and reaches that state too; `inspect --replay` checks
 * every snapshot against the replayed state at its place.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { canonicalJson, type Json } from '@crustcore/kernel';
import {
  decodePayload,
  kernelReplay,
  nodeSha256,
  type ReceiptKey,
  Replayer,
  rebuildKernel,
  SNAPSHOT_KIND,
  SnapshotWitness,
  scanFile,
} from '@crustcore/ledger';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempLedger, tempLedger } from './spine-helpers.js';
import { submitBatch, TaskScript } from './task-script.js';

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

interface Resumed {
  readonly failure: unknown;
  readonly state: string;
  readonly eventsReplayed: number;
}

/** Opens the log from its `index`-th snapshot: checked as `open` checks it, then only later frames replayed. */
function resumeFromSnapshot(logPath: string, key: ReceiptKey, index: number): Resumed {
  const kernel = kernelReplay();
  const witness = new SnapshotWitness(kernel);
  const replayer = new Replayer(kernel, { key });
  let seen = 0;
  let resumed = false;
  scanFile(logPath, 0, nodeSha256, (frame) => {
    const payload = decodePayload(frame);
    if (payload._tag === 'Left') throw new Error(payload.left.reason);
    if (frame.kind === SNAPSHOT_KIND) {
      if (seen++ !== index) return true;
      const checked = witness.check(payload.right, key);
      if (checked._tag === 'Left') throw new Error(`snapshot ${index} not trusted: ${checked.left}`);
      replayer.resume(checked.right.kernel, frame.seq, checked.right.opening);
      resumed = true;
      return true;
    }
    witness.observe(frame, () => payload.right);
    if (resumed) replayer.feed(frame, payload.right);
    return true;
  });
  if (!resumed) throw new Error(`no snapshot ${index}`);
  const finished = replayer.finish();
  return {
    failure: finished.failure,
    state: canonicalJson(replayer.instance.snapshot()),
    eventsReplayed: finished.summary.events,
  };
}

const countSnapshots = (logPath: string): number => {
  let count = 0;
  scanFile(logPath, 0, nodeSha256, (frame) => {
    if (frame.kind === SNAPSHOT_KIND) count++;
    return true;
  });
  return count;
};

describe('kernel snapshots', () => {
  it('opening from any snapshot equals a full replay, for random task interleavings', async () => {
    let resumedRuns = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('apply' as const, 'deny' as const, 'reject' as const), fc.boolean()), {
          minLength: 2,
          maxLength: 4,
        }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 3 }), fc.boolean()), { minLength: 5, maxLength: 40 }),
        fc.integer({ min: 2, max: 15 }),
        async (tasks, schedule, every) => {
          ledger?.remove();
          const current = tempLedger();
          ledger = current;
          const scripts = tasks.map(([fate, tools], n) => new TaskScript(n + 1, fate, tools));
          let spine = await current.open({ snapshotEveryFrames: every });
          for (const [pick, width, reopen] of schedule) {
            const live = scripts.filter((s) => !s.done);
            if (live.length === 0) break;
            const chosen = Array.from(
              { length: Math.min(width, live.length) },
              (_, k) => live[(pick + k) % live.length] as TaskScript,
            );
            await submitBatch(spine, [...new Set(chosen)]);
            // Open compacts finished tasks; compacting them first makes the reopened state the closed one.
            for (const s of scripts) await spine.compact(s.taskId);
            if (reopen) {
              const before = spine.kernel.stateHash();
              await spine.close();
              spine = await current.open({ snapshotEveryFrames: every });
              expect(spine.openReport.untrustedSnapshots).toEqual([]);
              expect(spine.kernel.stateHash()).toBe(before);
            }
          }
          await spine.close();

          // Without a key no snapshot is trusted: this is the full replay from seq 1.
          const full = rebuildKernel(current.logPath, kernelReplay());
          expect(full.failure).toBeUndefined();
          expect(full.resumedAtSnapshot).toBeUndefined();
          const fullState = canonicalJson(full.kernel.snapshot() as Json);

          const snapshots = countSnapshots(current.logPath);
          for (let index = 0; index < snapshots; index++) {
            const resumed = resumeFromSnapshot(current.logPath, current.key, index);
            expect(resumed.failure).toBeUndefined();
            expect(resumed.state).toBe(fullState);
            // It really started later: the events the snapshot covers were not replayed.
            expect(resumed.eventsReplayed).toBeLessThan(full.summary.events);
            resumedRuns++;
          }
          const opened = rebuildKernel(current.logPath, kernelReplay(), { key: current.key });
          expect(opened.failure).toBeUndefined();
          expect(opened.untrustedSnapshots).toEqual([]);
          if (snapshots > 0) expect(opened.resumedAtSnapshot).toBeDefined();
          expect(canonicalJson(opened.kernel.snapshot() as Json)).toBe(fullState);

          const inspected = current.replay();
          expect(inspected.failure).toBeUndefined();
          expect(inspected.replay?.snapshotsChecked).toBe(snapshots);
          expect(inspected.snapshots).toEqual({ total: snapshots, untrusted: [] });
        },
      ),
      { numRuns: 20 },
    );
    // Not vacuous: snapshots were written and resumed from.
    expect(resumedRuns).toBeGreaterThan(0);
  }, 300_000);

  it('a long ledger gets snapshots at the interval, and opening starts from the newest', async () => {
    ledger = tempLedger();
    const scripts = [1, 2, 3, 4, 5, 6].map((n) => new TaskScript(n, 'apply', n % 2 === 0));
    const spine = await ledger.open({ snapshotEveryFrames: 10 });
    while (scripts.some((s) => !s.done))
      await submitBatch(
        spine,
        scripts.filter((s) => !s.done),
      );
    for (const s of scripts) await spine.compact(s.taskId);
    const closedState = spine.kernel.stateHash();
    await spine.close();
    const snapshots = countSnapshots(ledger.logPath);
    // 6 tasks of ≥ 8 events, 2 frames each: ≥ 96 frames, a snapshot at least every 10 + 2 of them.
    expect(snapshots).toBeGreaterThanOrEqual(96 / 12);
    const reopened = await ledger.open({ snapshotEveryFrames: 10 });
    expect(reopened.openReport.resumedAtSnapshot).toBeDefined();
    expect(reopened.openReport.untrustedSnapshots).toEqual([]);
    expect(reopened.kernel.stateHash()).toBe(closedState);
    await reopened.close();
  }, 60_000);

  it('the open restores only the snapshot it resumes from; if that one does not restore, it falls back to the newest that does', async () => {
    ledger = tempLedger();
    const scripts = [1, 2, 3, 4].map((n) => new TaskScript(n, 'apply'));
    const spine = await ledger.open({ snapshotEveryFrames: 10 });
    while (scripts.some((s) => !s.done))
      await submitBatch(
        spine,
        scripts.filter((s) => !s.done),
      );
    const closedState = spine.kernel.stateHash();
    await spine.close();
    const snapshots = countSnapshots(ledger.logPath);
    expect(snapshots).toBeGreaterThanOrEqual(4);
    // The newest snapshot's state, known by its lastAt (each snapshot's is later than the one before).
    let newestLastAt = -1;
    scanFile(ledger.logPath, 0, nodeSha256, (frame) => {
      const payload = decodePayload(frame);
      if (frame.kind === SNAPSHOT_KIND && payload._tag === 'Right')
        newestLastAt = (payload.right as { state: { lastAt: number } }).state.lastAt;
      return true;
    });
    let restores = 0;
    let refuseNewest = false;
    const base = kernelReplay();
    const restore = base.restore as NonNullable<typeof base.restore>;
    const counting: typeof base = {
      ...base,
      // Given another state, the restored kernel fails the hash check, as an altered state does.
      restore: (opening, state) => {
        restores += 1;
        const newest = (state as { lastAt: number }).lastAt === newestLastAt;
        return restore(opening, refuseNewest && newest ? ({ ...(state as object), lastAt: 0 } as Json) : state);
      },
    };
    const rebuilt = rebuildKernel(ledger.logPath, counting, { key: ledger.key });
    expect(rebuilt.failure).toBeUndefined();
    expect(rebuilt.kernel.stateHash()).toBe(closedState);
    expect(restores).toBe(1);
    // CONTROL: the newest snapshot does not restore. It is reported, and the open resumes from the one
    // before it, restoring each snapshot as it is met, and still reaches the state the log holds.
    restores = 0;
    refuseNewest = true;
    const fallen = rebuildKernel(ledger.logPath, counting, { key: ledger.key });
    expect(fallen.failure).toBeUndefined();
    expect(fallen.kernel.stateHash()).toBe(closedState);
    expect(restores).toBe(1 + snapshots);
    expect(fallen.untrustedSnapshots.map((u) => u.seq)).toEqual([rebuilt.resumedAtSnapshot]);
    expect(fallen.resumedAtSnapshot).toBeLessThan(rebuilt.resumedAtSnapshot as number);
  }, 60_000);

  it('a frame damaged before the head (and its snapshots) makes open fail, not rebuild from part of the log', async () => {
    ledger = tempLedger();
    const scripts = [1, 2, 3].map((n) => new TaskScript(n, 'apply'));
    let spine = await ledger.open({ snapshotEveryFrames: 6 });
    while (scripts.some((s) => !s.done))
      await submitBatch(
        spine,
        scripts.filter((s) => !s.done),
      );
    await spine.close();
    // CONTROL: intact, it opens.
    spine = await ledger.open({ snapshotEveryFrames: 6 });
    await spine.close();
    const bytes = readFileSync(ledger.logPath);
    // A byte inside the payload of an early frame (the goal text of the first TaskCreated).
    const at = bytes.indexOf(Buffer.from('goal 1'));
    expect(at).toBeGreaterThan(0);
    bytes[at] = 'G'.charCodeAt(0);
    writeFileSync(ledger.logPath, bytes);
    await expect(ledger.open({ snapshotEveryFrames: 6 })).rejects.toThrow(/does not replay \(bad-hash at seq \d+/);
  }, 60_000);
});
