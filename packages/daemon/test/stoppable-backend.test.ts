/**
 * Red team: the daemon wraps each job's backend so the daemon's own stop reaches the worker. The
 * wrapper must pass the rest of the backend's contract through: `close` (runTask calls it once when
 * the task ends, to stop what the backend holds across attempts, such as a worker's MCP servers)
 * and `worksBeforeRun`. Without them a daemon task would never release what a pack backend holds.
 */
import type { BackendContext, BackendResult, CodingBackend, WorkerInput } from '@crustcore/verify';
import { describe, expect, it } from 'vitest';
import { stoppableBackend } from '../src/run-job.js';

/** A backend holding something for the task's life, as a worker with MCP servers does (methods on its prototype). */
class HoldingBackend implements CodingBackend {
  readonly name = 'holding';
  readonly worksBeforeRun = true;
  closed = 0;
  run(_input: WorkerInput, _context: BackendContext): Promise<BackendResult> {
    return Promise.reject(new Error('not run in this test'));
  }
  async close(): Promise<void> {
    this.closed += 1;
  }
}

describe("the daemon's stoppable backend", () => {
  it("passes close and worksBeforeRun through to the job's backend", async () => {
    const backend = new HoldingBackend();
    const wrapped = stoppableBackend(backend, new AbortController().signal);
    expect(wrapped.worksBeforeRun).toBe(true);
    await wrapped.close?.();
    expect(backend.closed).toBe(1);
  });

  it('CONTROL: a backend without them gets none (runTask then has nothing to close)', () => {
    const bare: CodingBackend = { name: 'bare', run: () => Promise.reject(new Error('not run')) };
    const wrapped = stoppableBackend(bare, new AbortController().signal);
    expect(wrapped.close).toBeUndefined();
    expect(wrapped.worksBeforeRun).toBeUndefined();
  });
});
