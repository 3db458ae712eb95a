/**
 * Tasks and their phase. The catalog of legal moves lives in the database
 * (`crust_phase_edges`) and a trigger enforces it; this module takes the row
 * lock, applies the move and turns the trigger's refusals into values.
 */
import { err, isId, ok, type Result, type TaskId } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { Db } from './db.js';
import { DbDate, DbInt, decodeRow, nullable } from './db-values.js';
import { catchStateErrors, invalidInput, isUniqueViolation, type StateError } from './errors.js';

export const TASK_PHASES = ['INIT', 'PLAN', 'IMPLEMENT', 'VERIFY', 'APPROVAL_GATE', 'COMMITTED', 'ABORTED'] as const;
export type TaskPhase = (typeof TASK_PHASES)[number];
export const TERMINAL_PHASES: readonly TaskPhase[] = ['COMMITTED', 'ABORTED'];

export const isTaskPhase = (value: unknown): value is TaskPhase =>
  typeof value === 'string' && (TASK_PHASES as readonly string[]).includes(value);

const Phase = new t.Type<TaskPhase, string, unknown>(
  'TaskPhase',
  isTaskPhase,
  (input, context) => (isTaskPhase(input) ? t.success(input) : t.failure(input, context)),
  (phase) => phase,
);

export interface TaskRecord {
  readonly id: TaskId;
  readonly title: string;
  readonly phase: TaskPhase;
  /** Number of phase changes so far. */
  readonly phaseSeq: number;
  /** VERIFY -> IMPLEMENT moves so far. */
  readonly revisits: number;
  readonly maxRevisits: number;
  readonly createdAt: Date;
  readonly phaseChangedAt: Date;
}

const TaskRow = t.type({
  id: t.string,
  title: t.string,
  phase: Phase,
  phase_seq: DbInt,
  revisits: DbInt,
  max_revisits: DbInt,
  created_at: DbDate,
  phase_changed_at: DbDate,
});

const TASK_COLUMNS = 'id, title, phase, phase_seq, revisits, max_revisits, created_at, phase_changed_at';

const toTask = (row: unknown): TaskRecord => {
  const r = decodeRow(TaskRow, row, 'task');
  return {
    id: r.id as TaskId,
    title: r.title,
    phase: r.phase,
    phaseSeq: r.phase_seq,
    revisits: r.revisits,
    maxRevisits: r.max_revisits,
    createdAt: r.created_at,
    phaseChangedAt: r.phase_changed_at,
  };
};

export interface CreateTaskInput {
  readonly id: TaskId;
  readonly title?: string;
  /** Budget of VERIFY -> IMPLEMENT revisits, 0..100; default 3. */
  readonly maxRevisits?: number;
}

export const MAX_TITLE_BYTES = 4096;

export async function createTask(db: Db, input: CreateTaskInput): Promise<Result<StateError, TaskRecord>> {
  if (!isId('TaskId', input.id)) return err(invalidInput('id', 'expected a TaskId'));
  const title = input.title ?? '';
  if (Buffer.byteLength(title, 'utf8') > MAX_TITLE_BYTES) return err(invalidInput('title', 'too long'));
  const maxRevisits = input.maxRevisits ?? 3;
  if (!Number.isSafeInteger(maxRevisits) || maxRevisits < 0 || maxRevisits > 100) {
    return err(invalidInput('maxRevisits', 'expected 0..100'));
  }
  try {
    const inserted = await db.query(
      `INSERT INTO crust_tasks (id, title, max_revisits) VALUES ($1::text, $2::text, $3::int4) RETURNING ${TASK_COLUMNS}`,
      [input.id, title, maxRevisits],
    );
    return ok(toTask(inserted.rows[0]));
  } catch (error) {
    if (isUniqueViolation(error)) return err({ _tag: 'AlreadyExists', entity: 'task', id: input.id });
    throw error;
  }
}

export async function getTask(db: Db, id: TaskId): Promise<TaskRecord | null> {
  const found = await db.query(`SELECT ${TASK_COLUMNS} FROM crust_tasks WHERE id = $1::text`, [id]);
  return found.rows.length === 0 ? null : toTask(found.rows[0]);
}

export interface TransitionOptions {
  /** Refuse (PhaseConflict) unless the task is in this phase when locked: a compare-and-set. */
  readonly expectedFrom?: TaskPhase;
}

/**
 * Moves a task to `to` inside a transaction holding the task's row lock. The
 * database trigger decides legality (catalog edge, revisit budget,
 * verification and apply preconditions).
 */
export function transitionTask(
  db: Db,
  id: TaskId,
  to: TaskPhase,
  options: TransitionOptions = {},
): Promise<Result<StateError, TaskRecord>> {
  if (!isTaskPhase(to)) return Promise.resolve(err(invalidInput('to', 'unknown phase')));
  return catchStateErrors(() =>
    db.transaction(async (tx): Promise<Result<StateError, TaskRecord>> => {
      const locked = await tx.query<{ phase: string }>('SELECT phase FROM crust_tasks WHERE id = $1::text FOR UPDATE', [
        id,
      ]);
      const current = locked.rows[0];
      if (current === undefined) return err({ _tag: 'NotFound', entity: 'task', id });
      if (options.expectedFrom !== undefined && current.phase !== options.expectedFrom) {
        return err({ _tag: 'PhaseConflict', taskId: id, expected: options.expectedFrom, actual: current.phase });
      }
      // Same phase is not a move (the trigger lets it through so other columns stay editable).
      if (current.phase === to) return err({ _tag: 'IllegalTransition', taskId: id, from: to, to });
      const updated = await tx.query(
        `UPDATE crust_tasks SET phase = $2::text WHERE id = $1::text RETURNING ${TASK_COLUMNS}`,
        [id, to],
      );
      return ok(toTask(updated.rows[0]));
    }),
  );
}

export interface PhaseHistoryEntry {
  readonly phaseSeq: number;
  readonly from: TaskPhase | null;
  readonly to: TaskPhase;
  readonly at: Date;
}

const HistoryRow = t.type({ phase_seq: DbInt, from_phase: nullable(Phase), to_phase: Phase, at: DbDate });

/** The task's phase changes, oldest first (bounded by the phase count of one task). */
export async function taskPhaseHistory(db: Db, id: TaskId): Promise<readonly PhaseHistoryEntry[]> {
  const rows = await db.query(
    `SELECT phase_seq, from_phase, to_phase, at FROM crust_task_phase_history
      WHERE task_id = $1::text ORDER BY phase_seq LIMIT 10000`,
    [id],
  );
  return rows.rows.map((row) => {
    const r = decodeRow(HistoryRow, row, 'phase history');
    return { phaseSeq: r.phase_seq, from: r.from_phase, to: r.to_phase, at: r.at };
  });
}

export interface PhaseEdge {
  readonly from: TaskPhase;
  readonly to: TaskPhase;
}

/** The transition catalog as the database holds it. */
export async function phaseCatalog(db: Db): Promise<readonly PhaseEdge[]> {
  const rows = await db.query('SELECT from_phase, to_phase FROM crust_phase_edges ORDER BY from_phase, to_phase');
  return rows.rows.map((row) => {
    const r = decodeRow(t.type({ from_phase: Phase, to_phase: Phase }), row, 'phase edge');
    return { from: r.from_phase, to: r.to_phase };
  });
}
