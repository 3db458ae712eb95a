/**
 * The task state machine: the roadmap's TaskStatus reconciled with Krusch's
 * phase graph INIT → PLAN → IMPLEMENT → VERIFY → APPROVAL_GATE → COMMITTED /
 * ABORTED. Every legal edge is in TASK_TRANSITIONS and nowhere else; the
 * kernel refuses any other move as a value.
 */
export const TASK_STATUSES = [
  'Created',
  'Queued',
  'Planning',
  'Running',
  'Verifying',
  'Retrying',
  'AwaitingApproval',
  'AwaitingUserReview',
  'Integrating',
  'Blocked',
  'Completed',
  'Failed',
  'Killed',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const PHASES = ['INIT', 'PLAN', 'IMPLEMENT', 'VERIFY', 'APPROVAL_GATE', 'COMMITTED', 'ABORTED'] as const;
export type Phase = (typeof PHASES)[number];

/** Phase of each status. `Blocked` takes the phase of the status it paused. */
export const PHASE_OF: Readonly<Record<Exclude<TaskStatus, 'Blocked'>, Phase>> = {
  Created: 'INIT',
  Queued: 'INIT',
  Planning: 'PLAN',
  Running: 'IMPLEMENT',
  Retrying: 'IMPLEMENT',
  Verifying: 'VERIFY',
  AwaitingApproval: 'APPROVAL_GATE',
  AwaitingUserReview: 'APPROVAL_GATE',
  Integrating: 'APPROVAL_GATE',
  Completed: 'COMMITTED',
  Failed: 'ABORTED',
  Killed: 'ABORTED',
};

const ABORT = ['Failed', 'Killed'] as const;

/**
 * The one catalog of legal status changes. `Verifying → Retrying` is the
 * VERIFY → IMPLEMENT revisit edge (and `Running → Retrying` an attempt that
 * produced no patch); the kernel charges both against the task's revisit budget.
 * `Blocked` (a task paused by its exhausted budget) only ends: no adapter
 * resumes a task, so the kernel has no edge back.
 */
export const TASK_TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  Created: ['Queued', 'Planning', 'Blocked', ...ABORT],
  Queued: ['Planning', 'Blocked', ...ABORT],
  Planning: ['Running', 'Blocked', ...ABORT],
  Running: ['Verifying', 'Retrying', 'Blocked', ...ABORT],
  Verifying: ['AwaitingApproval', 'Retrying', 'Blocked', ...ABORT],
  Retrying: ['Running', 'Blocked', ...ABORT],
  AwaitingApproval: ['Integrating', 'AwaitingUserReview', 'Blocked', ...ABORT],
  AwaitingUserReview: ['Completed', ...ABORT],
  Integrating: ['Completed', ...ABORT],
  Blocked: [...ABORT],
  Completed: [],
  Failed: [],
  Killed: [],
};

export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['Completed', 'Failed', 'Killed']);

export const isLegalTransition = (from: TaskStatus, to: TaskStatus): boolean => TASK_TRANSITIONS[from].includes(to);

export const phaseOf = (status: TaskStatus, pausedFrom?: TaskStatus): Phase =>
  status === 'Blocked'
    ? pausedFrom === undefined || pausedFrom === 'Blocked'
      ? 'INIT'
      : PHASE_OF[pausedFrom]
    : PHASE_OF[status];

/**
 * The phase graph the status catalog implies: one `[from, to]` pair for each
 * status edge that changes phase (a `Blocked` task keeps the phase of the
 * status it paused). The state plane's SQL catalog (`crust_phase_edges`) is
 * pinned to this set by packages/state/test/phase-catalog.test.ts.
 */
export function phaseEdges(): readonly (readonly [Phase, Phase])[] {
  const seen = new Map<string, readonly [Phase, Phase]>();
  const add = (from: Phase, to: Phase): undefined => {
    if (from !== to) seen.set(`${from}>${to}`, [from, to]);
  };
  for (const from of TASK_STATUSES) {
    if (from === 'Blocked') continue;
    for (const to of TASK_TRANSITIONS[from]) {
      if (to !== 'Blocked') add(PHASE_OF[from], PHASE_OF[to as Exclude<TaskStatus, 'Blocked'>]);
      else for (const out of TASK_TRANSITIONS.Blocked) add(PHASE_OF[from], phaseOf(out));
    }
  }
  return [...seen.values()];
}
