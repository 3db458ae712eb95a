/** Moves a task along legal edges to a phase, recording what the database requires on the way. */
import type { TaskId } from '@crustcore/kernel';
import {
  createTask,
  type Db,
  recordVerificationRun,
  stagedContentHash,
  type TaskPhase,
  transitionTask,
} from '../src/index.js';
import { right, taskId } from './assertions.js';

const PATHS: Readonly<Record<TaskPhase, readonly TaskPhase[]>> = {
  INIT: [],
  PLAN: ['PLAN'],
  IMPLEMENT: ['PLAN', 'IMPLEMENT'],
  VERIFY: ['PLAN', 'IMPLEMENT', 'VERIFY'],
  APPROVAL_GATE: ['PLAN', 'IMPLEMENT', 'VERIFY', 'APPROVAL_GATE'],
  COMMITTED: ['PLAN', 'IMPLEMENT', 'VERIFY', 'APPROVAL_GATE', 'COMMITTED'],
  ABORTED: ['ABORTED'],
};

export async function recordPassingRun(db: Db, id: TaskId): Promise<bigint> {
  const run = await recordVerificationRun(db, {
    taskId: id,
    stagedHash: await stagedContentHash(db, id),
    argv: ['npm', 'test'],
    sandboxProfile: 'bwrap-default',
    exitCode: 0,
    durationMs: 12,
  });
  return right(run).id;
}

export async function driveTo(db: Db, id: TaskId, target: TaskPhase): Promise<void> {
  for (const phase of PATHS[target]) {
    if (phase === 'APPROVAL_GATE') await recordPassingRun(db, id);
    right(await transitionTask(db, id, phase));
  }
}

export async function newTaskIn(db: Db, phase: TaskPhase, maxRevisits?: number): Promise<TaskId> {
  const id = taskId();
  right(await createTask(db, { id, title: `task in ${phase}`, ...(maxRevisits === undefined ? {} : { maxRevisits }) }));
  await driveTo(db, id, phase);
  return id;
}
