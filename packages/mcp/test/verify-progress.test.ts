import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ProgressNote, VerifyProgress } from '../src/index.js';

function recorder(): { notes: ProgressNote[]; progress: VerifyProgress } {
  const notes: ProgressNote[] = [];
  const progress = new VerifyProgress(async (note) => {
    notes.push(note);
  });
  return { notes, progress };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('verify progress notes', () => {
  it('a step settles only once its note is written, and never rejects (the last one goes out before the answer)', async () => {
    const writes: (() => void)[] = [];
    const progress = new VerifyProgress(
      () =>
        new Promise<void>((resolve, reject) => {
          writes.push(writes.length === 0 ? resolve : () => reject(new Error('client went away')));
        }),
    );
    let settled = false;
    const first = progress.step('verification passed').then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    writes[0]?.();
    await first;
    expect(settled).toBe(true);
    const second = progress.step('again');
    writes[1]?.();
    await expect(second).resolves.toBeUndefined();
  });

  it('names each sandbox event and counts up by one', () => {
    const { notes, progress } = recorder();
    progress.step('verify accepted');
    progress.event({ kind: 'command-started', purpose: 'verify', argv: ['npm', 'test'] });
    progress.event({ kind: 'command-finished', purpose: 'verify', exitCode: 1, outputBytes: 10, timedOut: false });
    progress.event({ kind: 'command-finished', purpose: 'baseline', exitCode: null, outputBytes: 0, timedOut: true });
    expect(notes).toEqual([
      { progress: 1, message: 'verify accepted' },
      { progress: 2, message: 'verify run started in the sandbox: npm test' },
      { progress: 3, message: 'verify run finished: exit 1, 10 bytes of output' },
      { progress: 4, message: 'baseline run finished: timed out, 0 bytes of output' },
    ]);
  });

  it('reports output only when its total passes a doubling, per run', () => {
    const { notes, progress } = recorder();
    for (let total = 100; total <= 100_000; total += 100)
      progress.event({ kind: 'command-output', purpose: 'verify', outputBytes: total });
    progress.event({ kind: 'command-output', purpose: 'baseline', outputBytes: 5_000 });
    const totals = notes.map((n) => Number(/(\d+) bytes/.exec(n.message)?.[1]));
    // 1 KiB, 2 KiB, … 64 KiB for verify (7 notes), then the baseline's first report.
    expect(totals).toEqual([1_100, 2_100, 4_100, 8_200, 16_400, 32_800, 65_600, 5_000]);
  });

  it('a send that fails is ignored (the client went away)', async () => {
    const progress = new VerifyProgress(() => Promise.reject(new Error('closed')));
    expect(() => progress.step('x')).not.toThrow();
    expect(progress.sent).toBe(1);
  });

  it('the keep-alive repeats the last step only while nothing else was said', () => {
    vi.useFakeTimers();
    const { notes, progress } = recorder();
    progress.startKeepAlive(1_000);
    progress.step('verify run started in the sandbox: npm test');
    vi.advanceTimersByTime(1_000); // a step was said in this period: no repeat
    expect(notes).toHaveLength(1);
    vi.advanceTimersByTime(1_000);
    vi.advanceTimersByTime(1_000);
    expect(notes.map((n) => n.message)).toEqual([
      'verify run started in the sandbox: npm test',
      'still working: verify run started in the sandbox: npm test',
      'still working: verify run started in the sandbox: npm test',
    ]);
    progress.stop();
    vi.advanceTimersByTime(5_000);
    expect(notes).toHaveLength(3);
  });
});
