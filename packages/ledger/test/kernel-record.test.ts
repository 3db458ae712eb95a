import { createKernel, decodeKernelEvent, type KernelEvent, makeId } from '@crustcore/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { ACTIONS_KIND, inspectLog, kernelReplay, recordKernelStep, stateDirLayout } from '../src/index.js';
import { framesOf, openWriter, readLog, tempDir, testKey } from './helpers.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const taskId = makeId('TaskId', 'k1');
const event = (fields: Record<string, unknown>): KernelEvent => {
  const decoded = decodeKernelEvent(fields);
  if (decoded._tag === 'Left') throw new Error(JSON.stringify(decoded.left));
  return decoded.right;
};

describe('recording real kernel steps', () => {
  it('writes event + kernel.actions pairs that replay on a fresh kernel', async () => {
    const d = tempDir('kernel-record-');
    dirs.push(d);
    const key = testKey(5);
    const writer = await openWriter(d.path, { key });
    const kernel = createKernel();
    const created = await recordKernelStep(writer, kernel, (seq) =>
      event({
        kind: 'TaskCreated',
        seq,
        at: 1000,
        taskId,
        goal: 'g',
        profile: 'supervised',
        approvalMode: 'ask',
        canAsk: true,
      }),
    );
    expect(created).toMatchObject({ _tag: 'Right', right: { event: { seq: 1 }, actionsFrame: { seq: 2 } } });
    await recordKernelStep(writer, kernel, (seq) =>
      event({ kind: 'WorkspaceReady', seq, at: 1500, taskId, baseCommit: 'abc' }),
    );
    // An event stamped with another seq than the frame it would get is refused before anything is written.
    const wrong = await recordKernelStep(writer, kernel, () =>
      event({ kind: 'TaskPlanned', seq: 99, at: 2000, taskId, summary: 's' }),
    );
    expect(wrong).toEqual({ _tag: 'Left', left: { _tag: 'SeqMismatch', expected: 5, got: 99 } });
    await writer.close();

    const frames = framesOf(readLog(d.path));
    expect(frames.map((f) => f.kind)).toEqual(['TaskCreated', ACTIONS_KIND, 'WorkspaceReady', ACTIONS_KIND]);
    expect(frames[0]?.timestampMs).toBe(1000);
    const report = inspectLog({ ...stateDirLayout(d.path), key, kernel: kernelReplay(), replay: true });
    expect(report.failure).toBeUndefined();
    expect(report.replay).toMatchObject({ events: 2, unanswered: [], finalStateHash: kernel.stateHash() });
  });
});
