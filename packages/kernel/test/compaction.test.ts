/**
 * TaskCompacted: one kernel lives as long as its ledger, so a finished task is
 * dropped from the state on request. Refused (changing nothing) for an unknown
 * or still-running task; after it, the state is what it was before the task
 * existed, apart from the clock.
 */
import { describe, expect, it } from 'vitest';
import { createKernel, type KernelEvent, makeId } from '../src/index.js';

const T = makeId('TaskId', 'c1');
let seq = 0;
const ev = (e: Record<string, unknown>): KernelEvent =>
  ({ seq: ++seq, at: 1_000 + seq, taskId: T, ...e }) as KernelEvent;

describe('TaskCompacted', () => {
  it('is refused for an unknown task and for a task still running; the state is unchanged', () => {
    const kernel = createKernel();
    expect(kernel.step(ev({ kind: 'TaskCompacted' }))[0]).toMatchObject({ kind: 'Rejected', reason: 'unknown-task' });
    kernel.step(ev({ kind: 'TaskCreated', goal: 'g', profile: 'supervised', approvalMode: 'ask', canAsk: true }));
    const before = kernel.stateHash();
    expect(kernel.step(ev({ kind: 'TaskCompacted' }))[0]).toMatchObject({
      kind: 'Rejected',
      reason: 'illegal-transition',
    });
    expect(kernel.stateHash()).toBe(before);
    expect(kernel.taskStatus(T)).toBe('Created');
  });

  it('drops a finished task: the state is the empty state (same clock) and the id is forgotten', () => {
    const kernel = createKernel();
    kernel.step(ev({ kind: 'TaskCreated', goal: 'g', profile: 'supervised', approvalMode: 'ask', canAsk: true }));
    kernel.step(ev({ kind: 'TaskKilled', reason: 'stop' }));
    expect(kernel.taskStatus(T)).toBe('Killed');
    const times: number[] = [];
    const timed = (e: Record<string, unknown>): KernelEvent => {
      const event = ev(e);
      times.push(event.at);
      return event;
    };
    expect(kernel.step(timed({ kind: 'TaskCompacted' }))).toEqual([]);
    expect(kernel.taskStatus(T)).toBeUndefined();
    // Another kernel whose clock reached the same time through another task, compacted too, has the
    // same state hash: nothing of the task (not even its id) is left, only the clock.
    const other = createKernel();
    const U = makeId('TaskId', 'c2');
    const at = times[0] ?? 0;
    const base = { taskId: U };
    other.step({
      ...base,
      seq: 1,
      at: at - 2,
      kind: 'TaskCreated',
      goal: 'h',
      profile: 'readonly',
      approvalMode: 'deny',
      canAsk: false,
    } as KernelEvent);
    other.step({ ...base, seq: 2, at: at - 1, kind: 'TaskKilled', reason: 'x' } as KernelEvent);
    expect(other.step({ ...base, seq: 3, at, kind: 'TaskCompacted' } as KernelEvent)).toEqual([]);
    expect(kernel.stateHash()).toBe(other.stateHash());
  });
});
