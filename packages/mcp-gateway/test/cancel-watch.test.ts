/**
 * CancelWatch: one abort listener per caller signal for a session's life (not one per call), bounded
 * when callers make a signal per call, and all removed when the session closes.
 */
import { describe, expect, it } from 'vitest';
import { CancelWatch, MAX_WATCHED_SIGNALS } from '../src/client/cancel-watch.js';

const watching = () => {
  let cancels = 0;
  const watch = new CancelWatch(() => {
    cancels += 1;
  });
  return { watch, cancels: () => cancels };
};

describe('CancelWatch', () => {
  it('a task-long signal gets one listener however many calls it carries', () => {
    const { watch, cancels } = watching();
    const task = new AbortController();
    for (let call = 0; call < 100; call += 1) {
      watch.begin(task.signal);
      watch.end(task.signal);
    }
    expect(watch.watched).toBe(1);
    // Aborted with no call in flight: nothing to stop.
    task.abort();
    expect(cancels()).toBe(0);
  });

  it('a signal aborted while one of its calls is in flight cancels; CONTROL: another signal in flight does not', () => {
    const { watch, cancels } = watching();
    const task = new AbortController();
    const other = new AbortController();
    watch.begin(task.signal);
    watch.begin(task.signal);
    watch.end(task.signal);
    watch.begin(other.signal);
    other.abort();
    expect(cancels()).toBe(1);
    task.abort();
    expect(cancels()).toBe(2);
  });

  it('signals made per call are let go in batches: the listeners held stay bounded', () => {
    const { watch, cancels } = watching();
    const signals: AbortController[] = [];
    for (let call = 0; call < 10 * MAX_WATCHED_SIGNALS; call += 1) {
      const own = new AbortController();
      signals.push(own);
      watch.begin(own.signal);
      watch.end(own.signal);
      expect(watch.watched).toBeLessThanOrEqual(MAX_WATCHED_SIGNALS);
    }
    // One still in flight is never let go, however many come after it.
    const running = new AbortController();
    watch.begin(running.signal);
    for (const own of signals.slice(0, 3 * MAX_WATCHED_SIGNALS)) {
      watch.begin(own.signal);
      watch.end(own.signal);
    }
    running.abort();
    expect(cancels()).toBe(1);
  });

  it('dispose removes every listener: an abort afterwards reaches nothing', () => {
    const { watch, cancels } = watching();
    const task = new AbortController();
    watch.begin(task.signal);
    watch.dispose();
    expect(watch.watched).toBe(0);
    task.abort();
    expect(cancels()).toBe(0);
    // A call begun on a disposed watch (a closed session) adds no listener.
    const later = new AbortController();
    watch.begin(later.signal);
    expect(watch.watched).toBe(0);
  });
});
