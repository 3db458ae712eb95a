/**
 * Verification runs, bound to the staged content they verified. The database
 * accepts a run only for the content staged right now (its trigger recomputes
 * the staged content hash), and a "passed" run is only ever a run whose exit
 * code was 0 (a generated column). "Verified" therefore always means "this
 * exact content passed", never "the latest row says so".
 */
import { err, type Hash32, isHash32, ok, type Result, type TaskId } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { Db } from './db.js';
import { DbBigInt, DbDate, DbInt, decodeRow, nullable } from './db-values.js';
import { catchStateErrors, invalidInput, type StateError } from './errors.js';
import { fenceOf, type JobLease } from './jobs.js';

export interface VerificationRunInput {
  readonly taskId: TaskId;
  /** The staged content hash the run verified (see `stagedContentHash`). */
  readonly stagedHash: Hash32;
  readonly argv: readonly string[];
  readonly sandboxProfile: string;
  readonly exitCode: number;
  readonly durationMs: number;
  readonly stdoutSha256?: Hash32;
  readonly stderrSha256?: Hash32;
  /** When a worker records the run, its lease (fenced). */
  readonly lease?: JobLease;
}

export interface VerificationRunRecord {
  readonly id: bigint;
  readonly taskId: TaskId;
  readonly stagedHash: Hash32;
  readonly argv: readonly string[];
  readonly sandboxProfile: string;
  readonly exitCode: number;
  readonly passed: boolean;
  readonly durationMs: number;
  readonly stdoutSha256: Hash32 | null;
  readonly stderrSha256: Hash32 | null;
  readonly recordedAt: Date;
}

const RunRow = t.type({
  id: DbBigInt,
  task_id: t.string,
  staged_hash: t.string,
  argv: t.array(t.string),
  sandbox_profile: t.string,
  exit_code: DbInt,
  passed: t.boolean,
  duration_ms: DbInt,
  stdout_sha256: nullable(t.string),
  stderr_sha256: nullable(t.string),
  recorded_at: DbDate,
});

const RUN_COLUMNS = `id::text AS id, task_id, staged_hash, argv, sandbox_profile, exit_code, passed, duration_ms,
  stdout_sha256, stderr_sha256, recorded_at`;

const toRun = (row: unknown): VerificationRunRecord => {
  const r = decodeRow(RunRow, row, 'verification run');
  return {
    id: r.id,
    taskId: r.task_id as TaskId,
    stagedHash: r.staged_hash as Hash32,
    argv: r.argv,
    sandboxProfile: r.sandbox_profile,
    exitCode: r.exit_code,
    passed: r.passed,
    durationMs: r.duration_ms,
    stdoutSha256: r.stdout_sha256 as Hash32 | null,
    stderrSha256: r.stderr_sha256 as Hash32 | null,
    recordedAt: r.recorded_at,
  };
};

const MAX_ARGV = 1024;

export function recordVerificationRun(
  db: Db,
  input: VerificationRunInput,
): Promise<Result<StateError, VerificationRunRecord>> {
  const invalid = (field: string, reason: string) => Promise.resolve(err(invalidInput(field, reason)));
  if (!isHash32(input.stagedHash)) return invalid('stagedHash', 'expected 64 lowercase hex');
  if (input.argv.length === 0 || input.argv.length > MAX_ARGV) return invalid('argv', 'expected 1..1024 arguments');
  if (!Number.isSafeInteger(input.exitCode) || Math.abs(input.exitCode) > 2 ** 31 - 1) {
    return invalid('exitCode', 'expected an int4');
  }
  if (!Number.isSafeInteger(input.durationMs) || input.durationMs < 0 || input.durationMs > 2 ** 31 - 1) {
    return invalid('durationMs', 'expected a non-negative int4');
  }
  for (const [field, hash] of [
    ['stdoutSha256', input.stdoutSha256],
    ['stderrSha256', input.stderrSha256],
  ] as const) {
    if (hash !== undefined && !isHash32(hash)) return invalid(field, 'expected 64 lowercase hex');
  }
  const fence = input.lease === undefined ? null : fenceOf(input.lease);
  return catchStateErrors(async () => {
    const inserted = await db.query(
      `INSERT INTO crust_verification_runs
         (task_id, staged_hash, argv, sandbox_profile, exit_code, duration_ms, stdout_sha256, stderr_sha256,
          job_id, fence_token)
       VALUES ($1::text, $2::text, ($3::text)::jsonb, $4::text, $5::int4, $6::int4, $7::text, $8::text, $9::text, $10::int8)
       RETURNING ${RUN_COLUMNS}`,
      [
        input.taskId,
        input.stagedHash,
        JSON.stringify(input.argv),
        input.sandboxProfile,
        input.exitCode,
        input.durationMs,
        input.stdoutSha256 ?? null,
        input.stderrSha256 ?? null,
        fence?.jobId ?? null,
        fence?.token ?? null,
      ],
    );
    return ok(toRun(inserted.rows[0]));
  });
}

/** The newest passing run on the content staged now, or null. */
export async function passingRunForCurrentContent(db: Db, taskId: TaskId): Promise<VerificationRunRecord | null> {
  const rows = await db.query(
    `SELECT ${RUN_COLUMNS} FROM crust_verification_runs
      WHERE task_id = $1::text AND passed AND staged_hash = crust_staged_content_hash($1::text)
      ORDER BY id DESC LIMIT 1`,
    [taskId],
  );
  return rows.rows.length === 0 ? null : toRun(rows.rows[0]);
}

export async function listVerificationRuns(
  db: Db,
  taskId: TaskId,
  limit = 100,
): Promise<readonly VerificationRunRecord[]> {
  const rows = await db.query(
    `SELECT ${RUN_COLUMNS} FROM crust_verification_runs WHERE task_id = $1::text ORDER BY id DESC LIMIT $2::int4`,
    [taskId, Math.max(1, Math.min(limit, 10_000))],
  );
  return rows.rows.map(toRun);
}
