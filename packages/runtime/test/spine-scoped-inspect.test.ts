/**
 * A run checks what it appended (`inspectLog({ resume })`, run-task.ts), not the whole
 * history: the check must cost the same on the 1st and the 1,000th task of a repository, and
 * still catch whatever it claims to catch. `fromSnapshot` chain-checks every frame and starts
 * receipts, artifacts, event headers and the replay at the snapshot the open resumed from;
 * `resume` starts the chain there too, anchored on what the open itself chain-checked.
 *
 * The default snapshot policy (ledger-spine.ts #snapshotDue): at least MIN_SNAPSHOT_EVERY_FRAMES
 * frames apart, at most DEFAULT_SNAPSHOT_EVERY_FRAMES, in between only once the frames since
 * outweigh the state SNAPSHOT_BYTES_FACTOR times.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Hash32, makeId, type TaskId } from '@crustcore/kernel';
import {
  type CheckedPrefix,
  DEFAULT_SNAPSHOT_EVERY_FRAMES,
  type DecodedFrame,
  decodeFrame,
  decodePayload,
  encodeFrame,
  GENESIS_RECEIPT_HASH,
  IDLE_SNAPSHOT_MIN_FRAMES,
  inspectLog,
  kernelReplay,
  MIN_SNAPSHOT_EVERY_FRAMES,
  nodeSha256,
  SNAPSHOT_KIND,
  scanFile,
} from '@crustcore/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerSpine } from '../src/index.js';
import { logFrames, type TempLedger, tempLedger } from './spine-helpers.js';
import { submitBatch, TaskScript } from './task-script.js';

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

const snapshotSeqs = (logPath: string): number[] => {
  const seqs: number[] = [];
  scanFile(logPath, 0, nodeSha256, (frame) => {
    if (frame.kind === SNAPSHOT_KIND) seqs.push(frame.seq);
    return true;
  });
  return seqs;
};

const lastSeq = (logPath: string): number => {
  let last = 0;
  scanFile(logPath, 0, nodeSha256, (frame) => {
    last = frame.seq;
    return true;
  });
  return last;
};

/** Runs scripted tasks to the end, `width` at a time, each with one receipted tool output and one artifact note. */
async function runTasks(spine: LedgerSpine, from: number, count: number, width = 1): Promise<Hash32[]> {
  const artifacts: Hash32[] = [];
  for (let n = from; n < from + count; n += width) {
    const scripts = Array.from({ length: Math.min(width, from + count - n) }, (_, k) => new TaskScript(n + k, 'apply'));
    while (scripts.some((s) => !s.done))
      await submitBatch(
        spine,
        scripts.filter((s) => !s.done),
      );
    for (const s of scripts) {
      const artifact = await spine.recorder.storeArtifact(`output of task ${s.taskId}`);
      artifacts.push(artifact);
      await spine.recorder.recordReceipt({
        taskId: s.taskId,
        toolCallId: makeId('ToolCallId', `c-${s.taskId.replace(/[^0-9A-Za-z-]/g, '-')}`),
        toolName: 'shell',
        args: { argv: ['true'] },
        result: `result ${s.taskId}`,
        modelText: `result ${s.taskId}`,
        artifactHashes: [artifact],
      });
      await spine.recorder.appendNote('output', s.taskId, { stdoutArtifact: artifact });
      await spine.compact(s.taskId as TaskId);
    }
  }
  return artifacts;
}

const scoped = (current: TempLedger, fromSnapshot: number | undefined) =>
  current.check(fromSnapshot === undefined ? {} : { fromSnapshot });

const resumed = (current: TempLedger, resume: CheckedPrefix) => current.check({ resume });

const framesOf = logFrames;

/**
 * Rewrites frame `seq` as a forger without the key would: the payload changed and both of the
 * frame's own hashes recomputed, linked to the frame before it; the frames after it untouched.
 */
function reforge(logPath: string, seq: number, change: (text: string) => string): DecodedFrame {
  const frame = framesOf(logPath).find((f) => f.seq === seq);
  if (frame === undefined) throw new Error(`no frame ${seq}`);
  const payload = decodePayload(frame);
  if (payload._tag === 'Left') throw new Error(payload.left.reason);
  const input = {
    kind: frame.kind,
    actor: frame.actor,
    visibility: frame.visibility,
    redaction: frame.redaction,
    timestampMs: frame.timestampMs,
    ...(frame.taskId === undefined ? {} : { taskId: frame.taskId as TaskId }),
    payload: JSON.parse(change(JSON.stringify(payload.right))),
  };
  const encoded = encodeFrame({ seq, prevHash: frame.prevHash, commit: frame.commit }, input, nodeSha256);
  if (encoded._tag === 'Left') throw new Error(encoded.left.reason);
  const bytes = readFileSync(logPath);
  const forged = Buffer.concat([
    bytes.subarray(0, frame.offset),
    Buffer.from(encoded.right.bytes),
    bytes.subarray(frame.offset + frame.length),
  ]);
  writeFileSync(logPath, forged);
  const decoded = decodeFrame(forged, frame.offset, nodeSha256);
  if (decoded._tag !== 'Frame') throw new Error('the forged frame does not decode');
  return decoded.frame;
}

/**
 * A history with several snapshots, then one more "run" opened on it. A fixed, short interval
 * keeps the log small: what is checked depends on where the snapshot is, not on the policy.
 */
async function historyThenRun(): Promise<{
  current: TempLedger;
  from: number;
  prefix: CheckedPrefix;
  old: Hash32[];
  fresh: Hash32[];
}> {
  const current = tempLedger();
  ledger = current;
  let spine = await current.open({ snapshotEveryFrames: 30 });
  const old = await runTasks(spine, 1, 12);
  await spine.close();
  spine = await current.open({ snapshotEveryFrames: 30 });
  const from = spine.openReport.resumedAtSnapshot;
  const prefix = spine.openReport.checkedPrefix;
  const fresh = await runTasks(spine, 100, 1);
  await spine.close();
  if (from === undefined || prefix === undefined) throw new Error('the history wrote no snapshot');
  return { current, from, prefix, old, fresh };
}

describe("a run's own check of the ledger", () => {
  it('replays only from the snapshot the open resumed from, and passes on an intact log', async () => {
    const { current, from } = await historyThenRun();
    const full = scoped(current, undefined);
    const mine = scoped(current, from);
    expect(full.failure).toBeUndefined();
    expect(mine.failure).toBeUndefined();
    expect(mine.ok).toBe(true);
    // Every frame's bytes are still checked…
    expect(mine.chain.frames).toBe(full.chain.frames);
    // …but the replay and the payload checks cover a tail, not the history.
    expect(mine.replay?.events ?? 0).toBeGreaterThan(0);
    expect(mine.replay?.events ?? 0).toBeLessThan((full.replay?.events ?? 0) / 4);
    expect(mine.kernelEventsChecked).toBeLessThan(full.kernelEventsChecked / 4);
    expect(mine.receiptsChecked).toBeLessThan(full.receiptsChecked);
    expect(mine.replay?.finalStateHash).toBe(full.replay?.finalStateHash);
  }, 120_000);

  it('catches a missing or altered artifact of the run, and names the frame that references it', async () => {
    const { current, from, fresh } = await historyThenRun();
    const artifact = fresh[0] as Hash32;
    const path = join(current.dir, 'artifacts', artifact.slice(0, 2), artifact.slice(2));
    writeFileSync(path, 'not what was stored');
    expect(scoped(current, from).failure?.reason).toBe('bad-artifact');
    rmSync(path);
    expect(scoped(current, from).failure?.reason).toBe('missing-artifact');
  }, 120_000);

  it("leaves the history's artifacts to `crustcore inspect` (the whole log), which still catches them", async () => {
    const { current, from, old } = await historyThenRun();
    const artifact = old[0] as Hash32;
    rmSync(join(current.dir, 'artifacts', artifact.slice(0, 2), artifact.slice(2)));
    expect(scoped(current, undefined).failure?.reason).toBe('missing-artifact');
    expect(scoped(current, from).failure).toBeUndefined();
  }, 120_000);

  it('catches a changed byte anywhere in the history (the chain covers every frame)', async () => {
    const { current, from } = await historyThenRun();
    const bytes = readFileSync(current.logPath);
    const at = bytes.indexOf(Buffer.from('goal 1"'));
    expect(at).toBeGreaterThan(0);
    bytes[at] = 'G'.charCodeAt(0);
    writeFileSync(current.logPath, bytes);
    expect(scoped(current, from).failure?.reason).toBe('bad-hash');
  }, 120_000);

  it('fails when the scope does not start at a trusted snapshot, or at no frame at all', async () => {
    const { current, from } = await historyThenRun();
    const notASnapshot = scoped(current, from - 1);
    expect(notASnapshot.failure?.reason).toBe('replay-divergence');
    expect(notASnapshot.failure?.detail).toMatch(/start at a kernel\.snapshot frame/);
    const beyond = scoped(current, lastSeq(current.logPath) + 5);
    expect(beyond.failure?.reason).toBe('replay-divergence');
    expect(beyond.failure?.detail).toMatch(/holds no kernel\.snapshot frame/);
    // Without the key, the snapshot's MAC cannot be checked: never trusted.
    const keyless = inspectLog({ logPath: current.logPath, kernel: kernelReplay(), replay: true, fromSnapshot: from });
    expect(keyless.ok).toBe(false);
  }, 120_000);
});

describe("a run's own check, started where its open left off (resume)", () => {
  it('reads only the frames from the snapshot on, and finds what the scoped check finds', async () => {
    const { current, from, prefix } = await historyThenRun();
    expect(prefix.snapshotSeq).toBe(from);
    const full = scoped(current, undefined);
    const scope = scoped(current, from);
    const mine = resumed(current, prefix);
    expect(mine.failure).toBeUndefined();
    expect(mine.ok).toBe(true);
    // The history is not read again: only the snapshot's covered frame on.
    expect(mine.chain.frames).toBe(full.chain.frames - prefix.after.seq);
    expect(mine.chain.frames).toBeLessThan(full.chain.frames / 4);
    expect(mine.chain.lastHash).toBe(full.chain.lastHash);
    expect(mine.chain.headChecked).toBe('mac');
    // The same checks from the snapshot on: receipts (chained to the history's last), events, replay.
    expect(mine.receiptsChecked).toBe(scope.receiptsChecked);
    expect(mine.receiptsChecked).toBeGreaterThan(0);
    expect(mine.kernelEventsChecked).toBe(scope.kernelEventsChecked);
    expect(mine.replay?.events).toBe(scope.replay?.events);
    expect(mine.replay?.finalStateHash).toBe(full.replay?.finalStateHash);
  }, 120_000);

  it('passes when the run itself writes snapshots: each is checked against the kernel.open the resumed replay carries', async () => {
    const current = tempLedger();
    ledger = current;
    let spine = await current.open({ snapshotEveryFrames: 30 });
    await runTasks(spine, 1, 6);
    await spine.close();
    spine = await current.open({ snapshotEveryFrames: 10 });
    const from = spine.openReport.resumedAtSnapshot;
    const prefix = spine.openReport.checkedPrefix;
    await runTasks(spine, 100, 2);
    await spine.close();
    if (from === undefined || prefix === undefined) throw new Error('no snapshot');
    // The run's frames hold snapshots of their own (a replay resumed at `from` meets them).
    expect(snapshotSeqs(current.logPath).filter((seq) => seq > from).length).toBeGreaterThanOrEqual(2);
    expect(scoped(current, from).failure).toBeUndefined();
    expect(resumed(current, prefix).failure).toBeUndefined();
    expect(scoped(current, undefined).failure).toBeUndefined();
  }, 120_000);

  it("carries the receipt chain: the run's receipt links to the history's last (CONTROL: started from genesis it does not)", async () => {
    const { current, prefix } = await historyThenRun();
    expect(prefix.lastReceiptHash).not.toBe(GENESIS_RECEIPT_HASH);
    const control = resumed(current, { ...prefix, lastReceiptHash: GENESIS_RECEIPT_HASH });
    expect(control.failure?.reason).toBe('bad-receipt');
    expect(control.failure?.detail).toMatch(/does not link/);
    expect(resumed(current, prefix).ok).toBe(true);
  }, 120_000);

  it("carries the history's receipts: a run's frame may name one (CONTROL: without them it names a receipt the log does not hold)", async () => {
    const current = tempLedger();
    ledger = current;
    let spine = await current.open({ snapshotEveryFrames: 30 });
    await runTasks(spine, 1, 12);
    const named = { taskId: makeId('TaskId', 'named'), toolCallId: makeId('ToolCallId', 'c-named') };
    const older = await spine.recorder.recordReceipt({
      ...named,
      toolName: 'shell',
      args: { argv: ['true'] },
      result: 'named',
      modelText: 'named',
      artifactHashes: [],
    });
    await runTasks(spine, 20, 3);
    await spine.close();
    spine = await current.open({ snapshotEveryFrames: 30 });
    const prefix = spine.openReport.checkedPrefix;
    if (prefix === undefined) throw new Error('no snapshot');
    expect(prefix.after.seq).toBeGreaterThan(older.receipt.eventSeq);
    await spine.recorder.appendNote('delivered', named.taskId, {
      receiptHash: older.receiptHash,
      toolCallId: named.toolCallId,
    });
    await spine.close();
    expect(resumed(current, prefix).ok).toBe(true);
    const control = resumed(current, { ...prefix, receipts: new Map() });
    expect(control.failure?.reason).toBe('bad-receipt');
    expect(control.failure?.detail).toMatch(/does not hold/);
  }, 120_000);

  it('catches a changed byte in what the run appended', async () => {
    const { current, prefix, fresh } = await historyThenRun();
    const target = framesOf(current.logPath).find((f) => f.seq > prefix.snapshotSeq && f.kind === 'note.output');
    if (target === undefined) throw new Error("no note of the run's");
    const bytes = readFileSync(current.logPath);
    const at = bytes.indexOf(Buffer.from(fresh[0] as string), target.offset);
    expect(at).toBeGreaterThan(target.offset);
    bytes[at] = bytes[at] === 0x61 ? 0x62 : 0x61;
    writeFileSync(current.logPath, bytes);
    expect(resumed(current, prefix).failure?.reason).toBe('bad-hash');
  }, 120_000);

  it('catches a frame the run appended re-hashed by a forger: the next frame does not link to it', async () => {
    const { current, prefix } = await historyThenRun();
    // A note: no payload rule of its own to break, so only the chain can tell.
    const victim = framesOf(current.logPath).find((f) => f.seq > prefix.snapshotSeq && f.kind === 'note.output');
    if (victim === undefined) throw new Error("no note of the run's");
    reforge(current.logPath, victim.seq, (text) => text.replace('{', '{"forged":true,'));
    expect(resumed(current, prefix).failure).toMatchObject({ reason: 'broken-link', seq: victim.seq + 1 });
  }, 120_000);

  it('a frame of the history re-hashed by a forger: the resumed check does not read it, the next open refuses the log', async () => {
    const { current, prefix, old } = await historyThenRun();
    const victim = framesOf(current.logPath).find((f) => f.seq < prefix.after.seq && f.kind === 'note.output');
    if (victim === undefined) throw new Error('no note in the history');
    // Same length (the run's check starts at a byte offset), and still an artifact the store holds:
    // no payload rule is broken, only the chain can tell.
    const forged = reforge(current.logPath, victim.seq, (text) => {
      const named = old.find((hash) => text.includes(hash)) as string;
      return text.replace(named, old.find((hash) => hash !== named) as string);
    });
    expect(forged.length).toBe(victim.length);
    // CONTROL: the forged frame alone is sound (its own hashes verify): only the chain gives it away.
    expect(forged.seq).toBe(victim.seq);
    expect(Buffer.from(forged.hash).equals(Buffer.from(victim.hash))).toBe(false);
    // What this run's check covers is intact; the history is the open's to check (and `inspect`'s).
    expect(resumed(current, prefix).ok).toBe(true);
    expect(scoped(current, undefined).failure).toMatchObject({ reason: 'broken-link', seq: victim.seq + 1 });
    await expect(current.open({ snapshotEveryFrames: 30 })).rejects.toThrow(
      new RegExp(`does not replay \\(broken-link at seq ${victim.seq + 1}`),
    );
  }, 120_000);
});

describe('the default snapshot policy', () => {
  it('snapshots right after a compaction that leaves a small state: every CLI run ends on one', async () => {
    const current = tempLedger();
    ledger = current;
    let spine = await current.open();
    await runTasks(spine, 1, 5);
    await spine.close();
    const seqs = snapshotSeqs(current.logPath);
    // One per task (about 20 frames each, past IDLE_SNAPSHOT_MIN_FRAMES), each after its compaction.
    expect(seqs.length).toBe(5);
    const frames = framesOf(current.logPath);
    for (const seq of seqs) {
      const event = frames.find((f) => f.seq === seq - 2);
      expect(event?.kind).toBe('TaskCompacted');
      expect(seq - (seqs[seqs.indexOf(seq) - 1] ?? 0)).toBeGreaterThanOrEqual(IDLE_SNAPSHOT_MIN_FRAMES);
    }
    // The next open resumes from the last run's end: it replays nothing of the history.
    spine = await current.open();
    expect(spine.openReport.resumedAtSnapshot).toBe(seqs.at(-1));
    expect(spine.openReport.replayedEvents).toBe(0);
    await spine.close();
  }, 120_000);

  it('snapshots a small state at the lower bound, so a run never replays more than that', async () => {
    const current = tempLedger();
    ledger = current;
    const spine = await current.open();
    // Live tasks that never finish keep the state over IDLE_SNAPSHOT_MAX_STATE_BYTES, so
    // compactions write no snapshot and the lower bound decides.
    const live = Array.from({ length: 10 }, (_, k) => new TaskScript(2000 + k, 'apply'));
    await submitBatch(spine, live);
    await runTasks(spine, 1, 30);
    await spine.close();
    const seqs = snapshotSeqs(current.logPath);
    expect(seqs.length).toBeGreaterThanOrEqual(2);
    const gaps = seqs.map((seq, i) => seq - (seqs[i - 1] ?? 0));
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(MIN_SNAPSHOT_EVERY_FRAMES);
      // One task's frames at most past the bound: a snapshot waits for an actions frame.
      expect(gap).toBeLessThan(MIN_SNAPSHOT_EVERY_FRAMES + 40);
    }
  }, 120_000);

  it('waits longer for a large state (the bytes rule)', async () => {
    const current = tempLedger();
    ledger = current;
    const spine = await current.open();
    // 60 live tasks (never finished): a state of tens of kB, more than 4 × 256 frames' bytes.
    const live = Array.from({ length: 60 }, (_, k) => new TaskScript(1000 + k, 'apply'));
    for (let step = 0; step < 3; step++) await submitBatch(spine, live);
    await runTasks(spine, 1, 20, 4);
    await spine.close();
    const seqs = snapshotSeqs(current.logPath);
    expect(seqs.length).toBeGreaterThanOrEqual(1);
    // Later than the small-state rule would have written it (see the test above).
    expect(seqs[0]).toBeGreaterThan(MIN_SNAPSHOT_EVERY_FRAMES + 40);
    expect(seqs[0]).toBeLessThanOrEqual(DEFAULT_SNAPSHOT_EVERY_FRAMES);
  }, 120_000);
});
