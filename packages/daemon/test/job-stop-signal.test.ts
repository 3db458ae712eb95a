/**
 * A daemon job's stop signal: its time limit fires even after garbage
 * collections (forced here with V8's gc, the way Node 20 lost
 * `AbortSignal.timeout()` inside `AbortSignal.any()`), and the daemon's own
 * stop passes through with its reason. Each wait is on the abort event
 * itself, never on a time window: a lost timer makes the test time out.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { jobStopSignal } from '../src/job-stop-signal.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const aborted = (signal: AbortSignal): Promise<unknown> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));

describe('jobStopSignal', () => {
  it('times out after garbage collections, with a TimeoutError', async () => {
    const stop = new AbortController();
    const job = jobStopSignal(stop.signal, 200);
    const reason = aborted(job.signal);
    // One hop to a new macrotask, so nothing made above is still kept alive for the job that made it
    // (a WeakRef's target is kept until its job ends); then the collections, synchronously: no timer
    // can fire inside synchronous code, so the signal is still waiting after them however long they
    // take (under load a forced collection can outlast the 200 ms; awaited between them, the timer
    // fired first).
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 5; i += 1) collectGarbage();
    expect(job.signal.aborted).toBe(false);
    expect(((await reason) as DOMException).name).toBe('TimeoutError');
    job.dispose();
  });

  it("passes the daemon's stop through with its reason, also when it came first", async () => {
    const kill = new Error('killed by crustcore kill');
    const stop = new AbortController();
    const job = jobStopSignal(stop.signal, 60_000);
    const reason = aborted(job.signal);
    stop.abort(kill);
    expect(await reason).toBe(kill);
    job.dispose();
    const early = new AbortController();
    early.abort(kill);
    const late = jobStopSignal(early.signal, 60_000);
    expect(late.signal.aborted).toBe(true);
    expect(late.signal.reason).toBe(kill);
    late.dispose();
  });

  it('after dispose, neither the timer nor the stop reaches it', async () => {
    const stop = new AbortController();
    const job = jobStopSignal(stop.signal, 1);
    job.dispose();
    // The 1 ms timer would have fired by the time a 20 ms one does, had dispose not cleared it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    stop.abort(new Error('late'));
    expect(job.signal.aborted).toBe(false);
  });
});
