/**
 * A kernel event and the kernel's answer to it are one commit (one fdatasync and head update):
 * durable together or not at all. A step that throws, or a commit that fails after the kernel
 * stepped, rolls the kernel back to its state before the event: the kernel never holds a step the
 * log does not.
 */
import { copyFileSync } from 'node:fs';
import { decodePayload, RECOVERED_KIND } from '@crustcore/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { headPathOf, logFrames, type TempLedger, tempLedger } from './spine-helpers.js';
import { submitBatch, TaskScript } from './task-script.js';

let ledger: TempLedger | null = null;
afterEach(() => {
  ledger?.remove();
  ledger = null;
});

const payloadOf = (frame: ReturnType<typeof logFrames>[number]): Record<string, unknown> => {
  const decoded = decodePayload(frame);
  if (decoded._tag === 'Left') throw new Error('payload does not decode');
  return decoded.right as Record<string, unknown>;
};

describe('one commit per kernel step', () => {
  it('every kernel event is followed, in the same commit, by its answer: only the answer carries the commit mark', async () => {
    ledger = tempLedger();
    const spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    while (!script.done) await submitBatch(spine, [script]);
    await spine.close();
    const frames = logFrames(ledger.logPath);
    const answers = frames.filter((f) => f.kind === 'kernel.actions');
    // The whole task: created, ready, planned, proposed, verified, approved, applied, finished.
    expect(answers.length).toBeGreaterThanOrEqual(6);
    for (const answer of answers) {
      const event = frames[frames.indexOf(answer) - 1];
      expect(payloadOf(answer).for, `answer ${answer.seq}`).toBe(event?.seq);
      expect(event?.commit, `event ${event?.seq}`).toBe(false);
      expect(answer.commit).toBe(true);
    }
    expect(ledger.replay().ok).toBe(true);
  });

  it('a crash before the head update drops the event with its answer: the next open neither keeps half nor records an unanswered event', async () => {
    ledger = tempLedger();
    let spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    await submitBatch(spine, [script]);
    await submitBatch(spine, [script]);
    const before = spine.kernel.stateHash();
    const headPath = headPathOf(ledger.logPath);
    copyFileSync(headPath, `${headPath}.saved`);
    await submitBatch(spine, [script]);
    expect(spine.kernel.stateHash()).not.toBe(before);
    await spine.close();
    // What a crash between the commit's fdatasync and its head update leaves.
    copyFileSync(`${headPath}.saved`, headPath);
    spine = await ledger.open({ snapshotEveryFrames: 0 });
    expect(spine.kernel.stateHash()).toBe(before);
    await spine.close();
    const recovered = logFrames(ledger.logPath)
      .filter((f) => f.kind === RECOVERED_KIND)
      .map(payloadOf);
    expect(recovered).toEqual([expect.objectContaining({ reason: 'unacknowledged commit', droppedFrames: 2 })]);
    expect(ledger.replay().ok).toBe(true);
  });

  it('a commit that fails after the step rolls the kernel back: the log holds none of it, and the spine goes on from the state before', async () => {
    ledger = tempLedger();
    let spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    await submitBatch(spine, [script]);
    const framesBefore = logFrames(ledger.logPath).length;
    const before = spine.kernel.stateHash();
    const recorder = spine.recorder;
    const original = recorder.appendStep.bind(recorder);
    let steppedTo: string | undefined;
    // Fault injection: the kernel steps, then the commit fails (a frame too large, a write error).
    recorder.appendStep = (pending, step) =>
      original(pending, (event) => {
        const answered = step(event);
        steppedTo = answered.stateHash;
        throw new Error('injected: the commit failed');
      });
    await expect(spine.submit({ kind: 'WorkspaceReady', taskId: script.taskId, baseCommit: 'base' })).rejects.toThrow(
      'injected',
    );
    recorder.appendStep = original;
    // CONTROL: the step did move the kernel before the commit failed.
    expect(steppedTo).toBeDefined();
    expect(steppedTo).not.toBe(before);
    expect(spine.kernel.stateHash()).toBe(before);
    expect(logFrames(ledger.logPath).length).toBe(framesBefore);
    const again = await spine.submit({ kind: 'WorkspaceReady', taskId: script.taskId, baseCommit: 'base' });
    expect(again.event.seq).toBe(framesBefore + 1);
    const after = spine.kernel.stateHash();
    expect(after).not.toBe(before);
    await spine.close();
    expect(ledger.replay().ok).toBe(true);
    // What the log rebuilds is the state the spine went on with.
    spine = await ledger.open({ snapshotEveryFrames: 0 });
    expect(spine.kernel.stateHash()).toBe(after);
    await spine.close();
  });

  it('a step that throws after changing the kernel is rolled back too; one that throws before writes nothing either', async () => {
    ledger = tempLedger();
    const spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    await submitBatch(spine, [script]);
    const framesBefore = logFrames(ledger.logPath).length;
    const before = spine.kernel.stateHash();
    const recorder = spine.recorder;
    const original = recorder.appendStep.bind(recorder);
    // As a kernel invariant check that fails after the state was changed in place.
    recorder.appendStep = (pending, step) =>
      original(pending, (event) => {
        step(event);
        throw new Error('injected: an invariant failed after the step');
      });
    await expect(spine.submit({ kind: 'WorkspaceReady', taskId: script.taskId, baseCommit: 'base' })).rejects.toThrow(
      'injected',
    );
    expect(spine.kernel.stateHash()).toBe(before);
    recorder.appendStep = (pending) =>
      original(pending, () => {
        throw new Error('injected: the step threw before changing anything');
      });
    await expect(spine.submit({ kind: 'WorkspaceReady', taskId: script.taskId, baseCommit: 'base' })).rejects.toThrow(
      'injected',
    );
    recorder.appendStep = original;
    expect(spine.kernel.stateHash()).toBe(before);
    expect(logFrames(ledger.logPath).length).toBe(framesBefore);
    const step = await spine.submit({ kind: 'WorkspaceReady', taskId: script.taskId, baseCommit: 'base' });
    expect(step.event.seq).toBe(framesBefore + 1);
    await spine.close();
    expect(ledger.replay().ok).toBe(true);
  });
});
