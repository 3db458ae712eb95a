/**
 * Apply journals: the write-ahead record of putting a task's staged diffs on
 * disk. PENDING -> APPLYING -> APPLIED, or ROLLED_BACK from PENDING or
 * APPLYING. The database opens one only in APPROVAL_GATE with a passing
 * verification run on the staged content, allows one active journal per task,
 * and moves the task's diffs along with the journal's status.
 *
 * The file writes themselves (drift check, temp sibling, fsync, rename) belong
 * to the verify package; after a crash, `inFlightApplyJournals` lists what was
 * APPLYING so recovery can restore base preimages (kept as blobs) and roll back.
 */
import { err, type Hash32, ok, type Result, type TaskId } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { Db } from './db.js';
import { DbBigInt, DbDate, decodeRow, nullable } from './db-values.js';
import { catchStateErrors, isUniqueViolation, type StateError } from './errors.js';

export const APPLY_JOURNAL_STATUSES = ['PENDING', 'APPLYING', 'APPLIED', 'ROLLED_BACK'] as const;
export type ApplyJournalStatus = (typeof APPLY_JOURNAL_STATUSES)[number];

const isJournalStatus = (value: unknown): value is ApplyJournalStatus =>
  typeof value === 'string' && (APPLY_JOURNAL_STATUSES as readonly string[]).includes(value);

const Status = new t.Type<ApplyJournalStatus, string, unknown>(
  'ApplyJournalStatus',
  isJournalStatus,
  (input, context) => (isJournalStatus(input) ? t.success(input) : t.failure(input, context)),
  (status) => status,
);

export interface ApplyEntry {
  readonly diffId: bigint;
  readonly filePath: string;
  readonly baseSha256: Hash32 | null;
  readonly stagedSha256: Hash32 | null;
}

export interface ApplyJournalRecord {
  readonly id: bigint;
  readonly taskId: TaskId;
  readonly verificationRunId: bigint;
  readonly stagedHash: Hash32;
  readonly status: ApplyJournalStatus;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** The diffs this journal writes, sorted by path. */
  readonly entries: readonly ApplyEntry[];
}

const JournalRow = t.type({
  id: DbBigInt,
  task_id: t.string,
  verification_run_id: DbBigInt,
  staged_hash: t.string,
  status: Status,
  created_at: DbDate,
  updated_at: DbDate,
});

const EntryRow = t.type({
  id: DbBigInt,
  file_path: t.string,
  base_sha256: nullable(t.string),
  staged_sha256: nullable(t.string),
});

const JOURNAL_COLUMNS =
  'id::text AS id, task_id, verification_run_id::text AS verification_run_id, staged_hash, status, created_at, updated_at';

async function withEntries(db: Db, row: unknown): Promise<ApplyJournalRecord> {
  const r = decodeRow(JournalRow, row, 'apply journal');
  const entries = await db.query(
    `SELECT id::text AS id, file_path, base_sha256, staged_sha256 FROM crust_staged_diffs
      WHERE task_id = $1::text AND status IN ('PENDING', 'APPLYING', 'APPLIED')
      ORDER BY file_path COLLATE "C" LIMIT 100000`,
    [r.task_id],
  );
  return {
    id: r.id,
    taskId: r.task_id as TaskId,
    verificationRunId: r.verification_run_id,
    stagedHash: r.staged_hash as Hash32,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    entries: entries.rows.map((entryRow) => {
      const e = decodeRow(EntryRow, entryRow, 'apply entry');
      return {
        diffId: e.id,
        filePath: e.file_path,
        baseSha256: e.base_sha256 as Hash32 | null,
        stagedSha256: e.staged_sha256 as Hash32 | null,
      };
    }),
  };
}

/** Opens a PENDING journal for the task's staged content, justified by a passing run on it. */
export function openApplyJournal(
  db: Db,
  input: { readonly taskId: TaskId; readonly verificationRunId: bigint },
): Promise<Result<StateError, ApplyJournalRecord>> {
  return catchStateErrors(async () => {
    try {
      const inserted = await db.query(
        `INSERT INTO crust_apply_journals (task_id, verification_run_id, staged_hash)
         VALUES ($1::text, $2::int8, crust_staged_content_hash($1::text))
         RETURNING ${JOURNAL_COLUMNS}`,
        [input.taskId, input.verificationRunId.toString()],
      );
      return ok(await withEntries(db, inserted.rows[0]));
    } catch (error) {
      if (isUniqueViolation(error)) return err({ _tag: 'AlreadyExists', entity: 'journal', id: input.taskId });
      throw error;
    }
  });
}

/** Moves a journal along its catalog (the database refuses other moves and cascades to the diffs). */
export async function advanceApplyJournal(
  db: Db,
  journalId: bigint,
  to: Exclude<ApplyJournalStatus, 'PENDING'>,
): Promise<Result<StateError, ApplyJournalRecord>> {
  const notFound: StateError = { _tag: 'NotFound', entity: 'journal', id: journalId.toString() };
  const moved = await catchStateErrors(async () => {
    const updated = await db.query(
      'UPDATE crust_apply_journals SET status = $2::text WHERE id = $1::int8 RETURNING id',
      [journalId.toString(), to],
    );
    return updated.rows.length === 0 ? err(notFound) : ok(undefined);
  });
  if (moved._tag === 'Left') return moved;
  const journal = await getApplyJournal(db, journalId);
  return journal === null ? err(notFound) : ok(journal);
}

export async function getApplyJournal(db: Db, journalId: bigint): Promise<ApplyJournalRecord | null> {
  const rows = await db.query(`SELECT ${JOURNAL_COLUMNS} FROM crust_apply_journals WHERE id = $1::int8`, [
    journalId.toString(),
  ]);
  return rows.rows.length === 0 ? null : withEntries(db, rows.rows[0]);
}

/** Journals left APPLYING (a crash mid-apply): recovery rolls each back or forward. */
export async function inFlightApplyJournals(db: Db, limit = 100): Promise<readonly ApplyJournalRecord[]> {
  const rows = await db.query(
    `SELECT ${JOURNAL_COLUMNS} FROM crust_apply_journals WHERE status = 'APPLYING' ORDER BY id LIMIT $1::int4`,
    [Math.max(1, Math.min(limit, 10_000))],
  );
  const journals: ApplyJournalRecord[] = [];
  for (const row of rows.rows) journals.push(await withEntries(db, row));
  return journals;
}
