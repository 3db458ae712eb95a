import { describe, expect, it } from 'vitest';
import { MAX_GATE_WAITERS, WorktreeGate, WorktreeRoot } from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

/** A promise with its resolver, to hold a gate open until the test says so. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('WorktreeGate', () => {
  it('never lets tool operations and a sandboxed run overlap', async () => {
    const box = makeSandbox();
    const gate = WorktreeGate.for(box.root);
    const log: string[] = [];
    let toolsActive = 0;
    let sandboxActive = 0;
    const tool = (name: string) =>
      gate.withToolWrite(async () => {
        toolsActive += 1;
        expect(sandboxActive).toBe(0);
        log.push(`${name}+`);
        await tick();
        log.push(`${name}-`);
        toolsActive -= 1;
      });
    const run = (name: string) =>
      gate.withSandboxRun(async () => {
        sandboxActive += 1;
        expect(toolsActive).toBe(0);
        expect(sandboxActive).toBe(1);
        log.push(`${name}+`);
        await tick();
        log.push(`${name}-`);
        sandboxActive -= 1;
      });
    const all = await Promise.all([tool('t1'), tool('t2'), run('s1'), tool('t3'), run('s2'), tool('t4')]);
    for (const result of all) right(result);
    // t1 and t2 share; s1 waits for both; t3 waits for s1 (arrival order); s2 after t3; t4 last.
    expect(log).toEqual(['t1+', 't2+', 't1-', 't2-', 's1+', 's1-', 't3+', 't3-', 's2+', 's2-', 't4+', 't4-']);
    expect(gate.snapshot()).toEqual({ mode: null, active: 0, queued: 0 });
  });

  it('is shared by every handle for the same directory', async () => {
    const box = makeSandbox();
    const first = WorktreeGate.for(box.root);
    const second = WorktreeGate.for(right(WorktreeRoot.open(box.rootPath)));
    const hold = latch();
    const running = first.withSandboxRun(() => hold.promise);
    await tick();
    expect(second.snapshot()).toMatchObject({ mode: 'sandbox', active: 1 });
    let toolRan = false;
    const waiting = second.withToolWrite(() => {
      toolRan = true;
    });
    await tick();
    expect(toolRan).toBe(false);
    hold.open();
    right(await running);
    right(await waiting);
    expect(toolRan).toBe(true);
  });

  it('gives up a queued place when aborted, and releases after a throwing operation', async () => {
    const box = makeSandbox();
    const gate = WorktreeGate.for(box.root);
    const hold = latch();
    const running = gate.withSandboxRun(() => hold.promise);
    const controller = new AbortController();
    const waiting = gate.withToolWrite(() => 'never', { signal: controller.signal });
    controller.abort();
    expect(left(await waiting)._tag).toBe('GateAborted');
    hold.open();
    right(await running);
    await expect(
      gate.withToolWrite(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(right(await gate.withSandboxRun(() => 42))).toBe(42);
  });

  it('bounds its queue', async () => {
    const box = makeSandbox();
    const gate = WorktreeGate.for(box.root);
    const hold = latch();
    const running = gate.withSandboxRun(() => hold.promise);
    const waiters = Array.from({ length: MAX_GATE_WAITERS }, () => gate.withToolWrite(() => 1));
    expect(left(await gate.withToolWrite(() => 1))._tag).toBe('GateQueueFull');
    hold.open();
    right(await running);
    for (const waiter of await Promise.all(waiters)) expect(right(waiter)).toBe(1);
  });
});
