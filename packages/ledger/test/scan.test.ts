import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeSha256, scanBytes, scanFile, scanFileYielding, stateDirLayout } from '../src/index.js';
import { readLog, tempDir, writeNotes } from './helpers.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function collect(scan: (visit: (f: { seq: number; offset: number; length: number }) => boolean) => unknown) {
  const seen: Array<[number, number, number]> = [];
  const end = scan((f) => {
    seen.push([f.seq, f.offset, f.length]);
    return true;
  });
  return { seen, end };
}

describe('scanning a file in chunks', () => {
  it('reports the same frames at the same file offsets whatever the chunk size, from any start', async () => {
    const d = tempDir('scan-');
    dirs.push(d);
    await writeNotes(d.path, 40);
    const { logPath } = stateDirLayout(d.path);
    const bytes = readLog(d.path);
    const whole = collect((v) => scanBytes(bytes, 0, nodeSha256, v));
    for (const chunk of [1, 7, 100, 333, 4096, 1 << 20]) {
      expect(collect((v) => scanFile(logPath, 0, nodeSha256, v, chunk))).toEqual(whole);
    }
    const start = whole.seen[10]![1];
    const fromMiddle = collect((v) => scanFile(logPath, start, nodeSha256, v, 50));
    expect(fromMiddle.seen).toEqual(whole.seen.slice(10));
  });

  it('reports a torn tail at its file offset, and whether it is all zeros', async () => {
    const d = tempDir('scan-');
    dirs.push(d);
    await writeNotes(d.path, 5);
    const { logPath } = stateDirLayout(d.path);
    const size = readLog(d.path).length;
    writeFileSync(logPath, readLog(d.path).subarray(0, size - 20));
    const cut = collect((v) => scanFile(logPath, 0, nodeSha256, v, 64));
    expect(cut.seen).toHaveLength(4);
    expect(cut.end).toMatchObject({ _tag: 'Incomplete', offset: cut.seen[3]![1] + cut.seen[3]![2], zeroFilled: false });
    writeFileSync(join(d.path, 'zeros.log'), new Uint8Array(3000));
    expect(scanFile(join(d.path, 'zeros.log'), 0, nodeSha256, () => true, 100)).toMatchObject({
      _tag: 'Corrupt',
      offset: 0,
      zeroFilled: true,
    });
  });

  it('scanFileYielding: the same frames and ends as scanFile, and the event loop gets turns while it scans', async () => {
    const d = tempDir('scan-');
    dirs.push(d);
    await writeNotes(d.path, 30);
    const { logPath } = stateDirLayout(d.path);
    const seen: number[] = [];
    // Scheduled before the scan starts: it can only run if the scan gives the loop a turn (sliceMs 0: after every frame).
    let turnAtFrame = -1;
    setImmediate(() => {
      turnAtFrame = seen.length;
    });
    const end = await scanFileYielding(
      logPath,
      0,
      nodeSha256,
      (f) => {
        seen.push(f.seq);
        return true;
      },
      0,
    );
    expect(collect((v) => scanFile(logPath, 0, nodeSha256, v)).seen.map(([seq]) => seq)).toEqual(seen);
    expect(end).toEqual(scanFile(logPath, 0, nodeSha256, () => true));
    expect(turnAtFrame).toBeGreaterThan(0);
    expect(turnAtFrame).toBeLessThan(seen.length);
    // Stopping: the same offset as scanFile's.
    const stopAt = (v: { seq: number }) => v.seq < 12;
    expect(await scanFileYielding(logPath, 0, nodeSha256, stopAt, 0)).toEqual(scanFile(logPath, 0, nodeSha256, stopAt));
    // A torn tail ends both the same way.
    writeFileSync(logPath, readLog(d.path).subarray(0, readLog(d.path).length - 9));
    expect(await scanFileYielding(logPath, 0, nodeSha256, () => true)).toEqual(
      scanFile(logPath, 0, nodeSha256, () => true),
    );
  });
});
