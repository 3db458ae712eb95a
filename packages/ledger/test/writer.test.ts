import { copyFileSync, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeHead, inspectLog, LedgerWriter, RECOVERED_KIND, stateDirLayout, toHex } from '../src/index.js';
import { framesOf, mustAppend, note, openWriter, readLog, tempDir, testKey, writeNotes } from './helpers.js';

const dirs: Array<{ remove: () => void }> = [];
function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d.path;
}
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const inspect = (path: string, key = testKey()) => inspectLog({ ...stateDirLayout(path), key });

describe('durable appends', () => {
  it('writes a chain the inspector accepts, with a head naming the last frame', async () => {
    const path = dir();
    await writeNotes(path, 20, { key: testKey() });
    const report = inspect(path);
    expect(report.failure).toBeUndefined();
    expect(report.chain.frames).toBe(20);
    const head = decodeHead(readFileSync(stateDirLayout(path).headPath, 'utf8'));
    expect(head).toMatchObject({ _tag: 'Right', right: { seq: 20, end: statSync(stateDirLayout(path).logPath).size } });
    // Durable mode: every frame is its own group commit.
    expect(framesOf(readLog(path)).every((f) => f.commit)).toBe(true);
  });

  it('continues the same chain after reopening', async () => {
    const path = dir();
    await writeNotes(path, 3, { key: testKey() });
    await writeNotes(path, 4, { key: testKey() });
    const frames = framesOf(readLog(path));
    expect(frames.map((f) => f.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(inspect(path).ok).toBe(true);
  });

  it('fsyncs the directory entry of a new log (the file exists before the first append)', async () => {
    const path = dir();
    const writer = await openWriter(path);
    expect(existsSync(stateDirLayout(path).logPath)).toBe(true);
    await writer.close();
  });
});

describe('group commit', () => {
  it('one commit covers every append queued while the previous one synced', async () => {
    const path = dir();
    const writer = await openWriter(path, { mode: 'batched', maxBatchFrames: 64, key: testKey() });
    const acks = await Promise.all(Array.from({ length: 200 }, () => writer.append(note(0))));
    await writer.close();
    expect(acks.map((a) => (a._tag === 'Right' ? a.right.seq : -1))).toEqual(
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
    const frames = framesOf(readLog(path));
    const commits = frames.filter((f) => f.commit).length;
    expect(commits).toBeGreaterThanOrEqual(Math.ceil(200 / 64));
    expect(commits).toBeLessThan(20);
    expect(frames.at(-1)?.commit).toBe(true);
    expect(inspect(path).ok).toBe(true);
  });

  it('append resolves only after its frame is on disk', async () => {
    const path = dir();
    const writer = await openWriter(path, { mode: 'batched' });
    const ack = await writer.append(note(1));
    expect(ack._tag).toBe('Right');
    // Read with a separate descriptor while the writer is still open.
    expect(framesOf(readLog(path)).map((f) => f.seq)).toEqual([1]);
    await writer.close();
  });
});

describe('appendGroup: frames that stand or fall together', () => {
  it('a group is one commit in durable mode: consecutive seqs, one acknowledgement per frame, the commit mark on the last', async () => {
    const path = dir();
    const writer = await openWriter(path, { key: testKey() });
    await mustAppend(writer, note(1));
    const acks = await writer.appendGroup([note(2), note(3), note(4)]);
    await mustAppend(writer, note(5));
    await writer.close();
    if (acks._tag === 'Left') throw new Error(JSON.stringify(acks.left));
    expect(acks.right.map((a) => a.seq)).toEqual([2, 3, 4]);
    const frames = framesOf(readLog(path));
    expect(frames.map((f) => [f.seq, f.commit])).toEqual([
      [1, true],
      [2, false],
      [3, false],
      [4, true],
      [5, true],
    ]);
    expect(acks.right.map((a) => a.hash)).toEqual(frames.slice(1, 4).map((f) => toHex(f.hash)));
    expect(inspect(path).ok).toBe(true);
  });

  it('a group is never split across commits, even when larger than maxBatchFrames', async () => {
    const path = dir();
    const writer = await openWriter(path, { mode: 'batched', maxBatchFrames: 2, key: testKey() });
    const results = await Promise.all([
      writer.append(note(1)),
      writer.appendGroup([note(2), note(3), note(4)]),
      writer.appendGroup([note(5), note(6)]),
      writer.append(note(7)),
    ]);
    await writer.close();
    expect(results.every((r) => r._tag === 'Right')).toBe(true);
    const commitSeqs = framesOf(readLog(path))
      .filter((f) => f.commit)
      .map((f) => f.seq);
    // Commits end after whole appends only: 1 | 2 3 4 | 5 6 | 7 (the first may share with none).
    for (const inside of [2, 3, 5]) expect(commitSeqs).not.toContain(inside);
    expect(commitSeqs).toContain(4);
    expect(commitSeqs).toContain(6);
    expect(inspect(path).ok).toBe(true);
  });

  it('bad input in any frame refuses the whole group before a seq is taken', async () => {
    const path = dir();
    const writer = await openWriter(path);
    const bad = await writer.appendGroup([note(1), { ...note(2), kind: 'no spaces allowed' }]);
    expect(bad).toMatchObject({ _tag: 'Left', left: { _tag: 'FrameInputError', field: 'kind' } });
    expect(writer.nextSeq).toBe(1);
    await mustAppend(writer, note(1));
    await writer.close();
    expect(framesOf(readLog(path)).map((f) => f.seq)).toEqual([1]);
  });

  it('the queue bound counts frames: a group that would pass it is refused whole', async () => {
    const path = dir();
    const writer = await openWriter(path, { mode: 'batched', maxQueuedFrames: 4, key: testKey() });
    const [first, second, third] = await Promise.all([
      writer.appendGroup([note(1), note(2), note(3)]),
      writer.appendGroup([note(4), note(5)]),
      writer.append(note(6)),
    ]);
    expect(first._tag).toBe('Right');
    expect(second).toMatchObject({ _tag: 'Left', left: { _tag: 'QueueFull' } });
    expect(third._tag).toBe('Right');
    await writer.close();
    expect(framesOf(readLog(path)).map((f) => f.seq)).toEqual([1, 2, 3, 4]);
  });

  it('a crash before the head update drops the whole group: never part of it', async () => {
    const path = dir();
    const layout = stateDirLayout(path);
    let writer = await openWriter(path, { key: testKey() });
    await mustAppend(writer, note(1));
    copyFileSync(layout.headPath, `${layout.headPath}.saved`);
    expect((await writer.appendGroup([note(2), note(3)]))._tag).toBe('Right');
    await writer.close();
    // The state a crash between the group's fdatasync and its head update leaves.
    copyFileSync(`${layout.headPath}.saved`, layout.headPath);
    writer = await openWriter(path, { key: testKey() });
    expect(writer.recovery).toMatchObject({ droppedFrames: 2, afterSeq: 1 });
    await writer.close();
    expect(framesOf(readLog(path)).map((f) => f.kind)).toEqual(['test.note', RECOVERED_KIND]);
  });
});

describe('append errors are values', () => {
  it('bad input fails before taking a seq', async () => {
    const path = dir();
    const writer = await openWriter(path);
    const bad = await writer.append({ ...note(1), kind: 'no spaces allowed' });
    expect(bad).toMatchObject({ _tag: 'Left', left: { _tag: 'FrameInputError', field: 'kind' } });
    expect(writer.nextSeq).toBe(1);
    await mustAppend(writer, note(1));
    await writer.close();
    expect(await writer.append(note(2))).toEqual({ _tag: 'Left', left: { _tag: 'LedgerClosed' } });
  });

  it('a full queue refuses instead of growing', async () => {
    const path = dir();
    const writer = await openWriter(path, { mode: 'batched', maxQueuedFrames: 5, key: testKey() });
    const results = await Promise.all(Array.from({ length: 8 }, () => writer.append(note(0))));
    expect(results.filter((r) => r._tag === 'Left' && r.left._tag === 'QueueFull').length).toBe(3);
    await writer.close();
    expect(inspect(path).failure).toBeUndefined();
  });

  it('payloads over the bound are refused', async () => {
    const path = dir();
    const writer = await openWriter(path, { maxPayloadBytes: 100 });
    expect(await writer.append(note(1, { big: 'x'.repeat(200) }))).toMatchObject({
      _tag: 'Left',
      left: { field: 'payload' },
    });
    await writer.close();
  });
});

describe('locking', () => {
  it('a second writer on the same log is refused while the first lives', async () => {
    const path = dir();
    const first = await openWriter(path);
    const second = await LedgerWriter.open(stateDirLayout(path));
    expect(second).toMatchObject({ _tag: 'Left', left: { _tag: 'LedgerLocked' } });
    await first.close();
    const third = await LedgerWriter.open(stateDirLayout(path));
    expect(third._tag).toBe('Right');
    if (third._tag === 'Right') await third.right.close();
  });

  it("a dead writer's lock is taken over", async () => {
    const path = dir();
    writeFileSync(`${stateDirLayout(path).logPath}.lock`, '999999999\n');
    const writer = await openWriter(path);
    await writer.close();
  });
});

describe('crash recovery on open', () => {
  /** Builds the state a crash leaves: frame n+1 half written, head still at n. */
  async function crashState(path: string, keep: number, cutInside: number): Promise<void> {
    const layout = stateDirLayout(path);
    await writeNotes(path, keep, { key: testKey() });
    copyFileSync(layout.headPath, `${layout.headPath}.saved`);
    const before = statSync(layout.logPath).size;
    await writeNotes(path, 1, { key: testKey() });
    copyFileSync(`${layout.headPath}.saved`, layout.headPath);
    if (before + cutInside < statSync(layout.logPath).size) truncateSync(layout.logPath, before + cutInside);
  }

  it('a torn last frame is reported as a torn tail, not tampering, then truncated under ledger.recovered', async () => {
    const path = dir();
    await crashState(path, 5, 37);
    const before = inspect(path);
    expect(before.failure).toBeUndefined();
    expect(before.chain.tornTail).toMatchObject({ afterSeq: 5, bytes: 37 });

    const writer = await openWriter(path, { key: testKey(), clockMs: () => 1_700_000_999_000 });
    expect(writer.recovery).toEqual({
      truncatedBytes: 37,
      droppedFrames: 0,
      afterSeq: 5,
      zeroFilled: false,
      recoveredSeq: 6,
    });
    await mustAppend(writer, note(7));
    await writer.close();

    const frames = framesOf(readLog(path));
    expect(frames.map((f) => f.kind)).toEqual([...Array(5).fill('test.note'), RECOVERED_KIND, 'test.note']);
    const after = inspect(path);
    expect(after.failure).toBeUndefined();
    expect(after.chain.tornTail).toBeUndefined();
  });

  it('a zero-filled tail past the head is a torn tail too', async () => {
    const path = dir();
    await writeNotes(path, 3, { key: testKey() });
    const layout = stateDirLayout(path);
    writeFileSync(layout.logPath, new Uint8Array(4096), { flag: 'a' });
    expect(inspect(path).chain.tornTail).toMatchObject({ zeroFilled: true, bytes: 4096 });
    const writer = await openWriter(path, { key: testKey() });
    expect(writer.recovery?.truncatedBytes).toBe(4096);
    await writer.close();
    expect(inspect(path).ok).toBe(true);
  });

  it('complete frames past the head (crash before the head update) were never acknowledged: cut back under ledger.recovered', async () => {
    const path = dir();
    await crashState(path, 4, 10_000); // cut beyond the end: the whole frame 5 survives
    const size = statSync(stateDirLayout(path).logPath).size;
    const report = inspect(path);
    expect(report.ok).toBe(true);
    expect(report.chain.framesPastHead).toBe(1);
    const writer = await openWriter(path, { key: testKey() });
    // Its append never resolved (the head did not name it): nothing acted on it, so it goes.
    expect(writer.recovery).toMatchObject({ droppedFrames: 1, afterSeq: 4, recoveredSeq: 5 });
    const head = report.chain.head;
    expect(writer.recovery?.truncatedBytes).toBe(size - (head._tag === 'Present' ? head.head.end : 0));
    expect(writer.nextSeq).toBe(6);
    await writer.close();
    const frames = framesOf(readLog(path));
    expect(frames.map((f) => f.kind)).toEqual([...Array(4).fill('test.note'), RECOVERED_KIND]);
    expect(inspect(path)).toMatchObject({ ok: true, chain: { framesPastHead: 0 } });
  });

  it('a frame past the head with a whole page of zeros (some pages of the write reached the disk) is a torn tail; CONTROL: one flipped byte there is damage', async () => {
    for (const damage of ['zero page', 'flipped byte'] as const) {
      const path = dir();
      const layout = stateDirLayout(path);
      await writeNotes(path, 3, { key: testKey() });
      copyFileSync(layout.headPath, `${layout.headPath}.saved`);
      const start = statSync(layout.logPath).size;
      const writer = await openWriter(path, { key: testKey() });
      await mustAppend(writer, note(4, { big: 'x'.repeat(3 * 4096) }));
      await writer.close();
      copyFileSync(`${layout.headPath}.saved`, layout.headPath);
      const bytes = readLog(path);
      const page = Math.ceil((start + 1) / 4096) * 4096;
      if (damage === 'zero page') bytes.fill(0, page, page + 4096);
      else bytes[page + 100]! ^= 1;
      writeFileSync(layout.logPath, bytes);
      const opened = await LedgerWriter.open({ ...layout, key: testKey() });
      if (damage === 'zero page') {
        if (opened._tag === 'Left') throw new Error(JSON.stringify(opened.left));
        expect(opened.right.recovery).toMatchObject({ truncatedBytes: bytes.length - start, afterSeq: 3 });
        await opened.right.close();
        expect(inspect(path).ok).toBe(true);
      } else {
        expect(opened).toMatchObject({
          _tag: 'Left',
          left: { _tag: 'LedgerDamaged', failure: { reason: 'bad-hash' } },
        });
      }
    }
  });

  it('refuses to append to a log that does not check out', async () => {
    const path = dir();
    await writeNotes(path, 4, { key: testKey() });
    const bytes = readLog(path);
    bytes[bytes.length - 50]! ^= 1;
    writeFileSync(stateDirLayout(path).logPath, bytes);
    const opened = await LedgerWriter.open({ ...stateDirLayout(path), key: testKey() });
    expect(opened).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerDamaged', failure: { reason: 'head-mismatch' } },
    });
  });

  it('refuses a head signed with another key', async () => {
    const path = dir();
    await writeNotes(path, 2, { key: testKey(1) });
    const opened = await LedgerWriter.open({ ...stateDirLayout(path), key: testKey(2) });
    expect(opened).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerDamaged', failure: { reason: 'head-mismatch' } },
    });
    expect(inspect(path, testKey(2)).failure?.reason).toBe('head-mismatch');
    expect(inspect(path, testKey(1)).ok).toBe(true);
  });
});
