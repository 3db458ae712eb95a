/**
 * The worker's pool slot, reset while the ledger opens and the environment
 * is detected: each costs process starts or a stat pass, and none reads what
 * the others write. The task's workspace takes it (the same
 * `createTaskWorktree` call it would have made, a few milliseconds sooner);
 * a task that ends before that gives the slot back.
 */
import type { Result } from '@crustcore/kernel';
import {
  createTaskWorktree,
  type Repository,
  removeTaskWorktree,
  type TaskWorktree,
  type WorktreeError,
} from '@crustcore/verify';

export type WorkspaceMade = Promise<Result<WorktreeError, TaskWorktree>>;

/** The worker's slot for a task of `repo` at `ref` (HEAD when absent): the one call that makes it. */
export function taskWorkspace(
  task: { readonly taskId: string; readonly home: string; readonly ref?: string },
  repo: Repository,
  nowMs: number,
): WorkspaceMade {
  return createTaskWorktree({
    repo,
    taskId: task.taskId,
    purpose: 'task',
    home: task.home,
    pool: true,
    nowMs,
    ...(task.ref === undefined ? {} : { ref: task.ref }),
  });
}

export class WarmWorkspace {
  #pending: WorkspaceMade | null;

  constructor(pending: WorkspaceMade) {
    this.#pending = pending;
    // Awaited by whoever takes it or by release(); never an unhandled rejection meanwhile.
    this.#pending.catch(() => undefined);
  }

  /** Starts making the worker's slot now (taskWorkspace). */
  static forTask(...args: Parameters<typeof taskWorkspace>): WarmWorkspace {
    return new WarmWorkspace(taskWorkspace(...args));
  }

  /** Runs `step`; if it throws, the slot is given back before the error goes on. */
  async releasedIfThrows<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      await this.release();
      throw error;
    }
  }

  /** The slot being made, once; null after that (the taker owns it then). */
  take(): WorkspaceMade | null {
    const pending = this.#pending;
    this.#pending = null;
    return pending;
  }

  /** Gives the slot back unless it was taken. Safe to call twice. */
  async release(): Promise<void> {
    const pending = this.take();
    if (pending === null) return;
    const made = await pending.catch(() => null);
    if (made?._tag === 'Right') await removeTaskWorktree(made.right);
  }
}
