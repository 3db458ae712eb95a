/**
 * The worktree gate: host-side tool operations and sandboxed commands in one
 * worktree never overlap.
 *
 * Descriptor verification (see `atomic-write.ts`) makes each write land
 * inside the root even while a sandboxed process swaps directories for
 * symlinks, but only exclusion makes the race impossible in the first place.
 * The runtime must route every host-side tool operation (writes, edits,
 * diffs, and also reads, searches and git runs that must see a consistent
 * tree) through `withToolWrite`, and every sandboxed command in that worktree
 * through `withSandboxRun`.
 *
 * Tool operations share the gate with each other (each is atomic on its
 * own); a sandboxed run holds it alone. Waiters are served in arrival order,
 * so a queued sandbox run is not starved by a stream of tool operations.
 * Gate state is keyed by the root's real path: every `WorktreeGate.for(root)`
 * for the same directory shares one state, created on demand and dropped
 * when idle, so memory is bounded by the number of busy roots.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { WorktreeRoot } from './worktree-root.js';

export interface GateError {
  readonly _tag: 'GateQueueFull' | 'GateAborted';
  readonly message: string;
}

export interface GateOptions {
  /** Aborting while waiting gives up the place in the queue (a `GateAborted` result). */
  readonly signal?: AbortSignal;
}

export type GateMode = 'tool' | 'sandbox';

export interface GateSnapshot {
  /** Who holds the gate now, or null when idle. */
  readonly mode: GateMode | null;
  readonly active: number;
  readonly queued: number;
}

/** Bound on waiters per root; more is a runaway caller, reported as `GateQueueFull`. */
export const MAX_GATE_WAITERS = 1024;

interface Waiter {
  readonly mode: GateMode;
  readonly admit: () => void;
}

interface GateState {
  mode: GateMode | null;
  active: number;
  readonly queue: Waiter[];
}

const states = new Map<string, GateState>();

function canAdmit(state: GateState, mode: GateMode): boolean {
  if (state.active === 0) return true;
  return mode === 'tool' && state.mode === 'tool';
}

export class WorktreeGate {
  readonly #rootPath: string;

  private constructor(rootPath: string) {
    this.#rootPath = rootPath;
  }

  /** The gate of `root`'s directory. */
  static for(root: WorktreeRoot): WorktreeGate {
    return new WorktreeGate(root.path);
  }

  get rootPath(): string {
    return this.#rootPath;
  }

  /** Runs a host-side tool operation; waits while a sandboxed run holds the worktree. */
  withToolWrite<T>(fn: () => T | Promise<T>, options: GateOptions = {}): Promise<Result<GateError, T>> {
    return this.#run('tool', fn, options);
  }

  /** Runs a sandboxed command; waits until no tool operation (or other run) holds the worktree. */
  withSandboxRun<T>(fn: () => T | Promise<T>, options: GateOptions = {}): Promise<Result<GateError, T>> {
    return this.#run('sandbox', fn, options);
  }

  snapshot(): GateSnapshot {
    const state = states.get(this.#rootPath);
    return state === undefined
      ? { mode: null, active: 0, queued: 0 }
      : { mode: state.mode, active: state.active, queued: state.queue.length };
  }

  #state(): GateState {
    let state = states.get(this.#rootPath);
    if (state === undefined) {
      state = { mode: null, active: 0, queue: [] };
      states.set(this.#rootPath, state);
    }
    return state;
  }

  async #run<T>(mode: GateMode, fn: () => T | Promise<T>, options: GateOptions): Promise<Result<GateError, T>> {
    const acquired = await this.#acquire(mode, options.signal);
    if (acquired !== null) return err(acquired);
    try {
      return ok(await fn());
    } finally {
      this.#release();
    }
  }

  #acquire(mode: GateMode, signal: AbortSignal | undefined): Promise<GateError | null> {
    if (signal?.aborted === true) return Promise.resolve({ _tag: 'GateAborted', message: 'aborted before waiting' });
    const state = this.#state();
    if (state.queue.length === 0 && canAdmit(state, mode)) {
      state.mode = mode;
      state.active += 1;
      return Promise.resolve(null);
    }
    if (state.queue.length >= MAX_GATE_WAITERS) {
      return Promise.resolve({ _tag: 'GateQueueFull', message: `more than ${MAX_GATE_WAITERS} waiters` });
    }
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const index = state.queue.indexOf(waiter);
        if (index < 0) return;
        state.queue.splice(index, 1);
        this.#pump(state);
        resolve({ _tag: 'GateAborted', message: 'aborted while waiting for the worktree gate' });
      };
      const waiter: Waiter = {
        mode,
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(null);
        },
      };
      state.queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #release(): void {
    const state = this.#state();
    state.active -= 1;
    if (state.active === 0) state.mode = null;
    this.#pump(state);
  }

  #pump(state: GateState): void {
    while (state.queue.length > 0) {
      const head = state.queue[0] as Waiter;
      if (!canAdmit(state, head.mode)) break;
      state.queue.shift();
      state.mode = head.mode;
      state.active += 1;
      head.admit();
    }
    if (state.active === 0 && state.queue.length === 0) states.delete(this.#rootPath);
  }
}
