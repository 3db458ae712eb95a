/**
 * Staged diffs: a worker's edits held in the database, never on disk, until
 * an apply journal writes them after verification and approval. Each diff
 * keeps the base preimage and the staged content as blobs (for drift checks
 * and rollback). Staging a file again supersedes its earlier diff.
 *
 * The staged content hash binds verification to exactly what is staged: one
 * line per active diff, `path TAB base TAB staged LF` ("-" for an absent
 * side), sorted by the UTF-8 bytes of the path, hashed with SHA-256. The
 * database computes it (`crust_staged_content_hash`); `computeStagedContentHash`
 * is the same function in TypeScript.
 */
import { err, type Hash32, ok, type Result, sha256Hex, type TaskId } from '@crustcore/kernel';
import * as t from 'io-ts';
import { putBlob } from './blobs.js';
import type { Db } from './db.js';
import { DbBigInt, DbDate, decodeRow, nullable } from './db-values.js';
import { catchStateErrors, invalidInput, type StateError } from './errors.js';
import { fenceOf, type JobLease } from './jobs.js';

export const STAGED_DIFF_STATUSES = ['PENDING', 'APPLYING', 'APPLIED', 'REJECTED', 'SUPERSEDED'] as const;
export type StagedDiffStatus = (typeof STAGED_DIFF_STATUSES)[number];
const ACTIVE: readonly StagedDiffStatus[] = ['PENDING', 'APPLYING', 'APPLIED'];

export const MAX_DIFF_BYTES = 4 * 1024 * 1024;

const isStagedDiffStatus = (value: unknown): value is StagedDiffStatus =>
  typeof value === 'string' && (STAGED_DIFF_STATUSES as readonly string[]).includes(value);

const Status = new t.Type<StagedDiffStatus, string, unknown>(
  'StagedDiffStatus',
  isStagedDiffStatus,
  (input, context) => (isStagedDiffStatus(input) ? t.success(input) : t.failure(input, context)),
  (status) => status,
);

/**
 * Why a repository-relative path is not acceptable, or null. Normalized POSIX
 * form only: no leading or trailing slash, no empty, `.` or `..` segment, no
 * tab or newline (they delimit the content hash).
 */
export function relativePathProblem(path: string): string | null {
  if (path.length === 0 || Buffer.byteLength(path, 'utf8') > 4096) return 'expected 1..4096 bytes';
  if (/[\t\n\r\0]/.test(path)) return 'contains a control character';
  if (path.startsWith('/') || path.endsWith('/')) return 'must be relative, without a trailing slash';
  if (path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    return 'has an empty, "." or ".." segment';
  }
  return null;
}

export interface StagedDiffRecord {
  readonly id: bigint;
  readonly taskId: TaskId;
  readonly filePath: string;
  /** Null: the file is new. */
  readonly baseSha256: Hash32 | null;
  /** Null: the file is deleted. */
  readonly stagedSha256: Hash32 | null;
  readonly diff: string;
  readonly explanation: string;
  readonly status: StagedDiffStatus;
  readonly createdAt: Date;
}

const DiffRow = t.type({
  id: DbBigInt,
  task_id: t.string,
  file_path: t.string,
  base_sha256: nullable(t.string),
  staged_sha256: nullable(t.string),
  diff_content: t.string,
  explanation: t.string,
  status: Status,
  created_at: DbDate,
});

const DIFF_COLUMNS =
  'id::text AS id, task_id, file_path, base_sha256, staged_sha256, diff_content, explanation, status, created_at';

const toDiff = (row: unknown): StagedDiffRecord => {
  const r = decodeRow(DiffRow, row, 'staged diff');
  return {
    id: r.id,
    taskId: r.task_id as TaskId,
    filePath: r.file_path,
    baseSha256: r.base_sha256 as Hash32 | null,
    stagedSha256: r.staged_sha256 as Hash32 | null,
    diff: r.diff_content,
    explanation: r.explanation,
    status: r.status,
    createdAt: r.created_at,
  };
};

export interface StageDiffInput {
  readonly taskId: TaskId;
  /** Repository-relative, normalized. */
  readonly filePath: string;
  /** Content before the edit; null for a new file. */
  readonly base: Uint8Array | string | null;
  /** Content after the edit; null for a deletion. */
  readonly staged: Uint8Array | string | null;
  /** The unified diff shown to reviewers. */
  readonly diff: string;
  readonly explanation?: string;
  /** When a worker stages, its lease: the database refuses a stale one. */
  readonly lease?: JobLease;
}

/** Stages one file's edit (task must be in IMPLEMENT; the database checks). */
export function stageDiff(db: Db, input: StageDiffInput): Promise<Result<StateError, StagedDiffRecord>> {
  const pathProblem = relativePathProblem(input.filePath);
  if (pathProblem !== null) return Promise.resolve(err(invalidInput('filePath', pathProblem)));
  if (input.base === null && input.staged === null) {
    return Promise.resolve(err(invalidInput('staged', 'base and staged cannot both be absent')));
  }
  if (Buffer.byteLength(input.diff, 'utf8') > MAX_DIFF_BYTES) {
    return Promise.resolve(err(invalidInput('diff', `larger than ${MAX_DIFF_BYTES} bytes`)));
  }
  const explanation = input.explanation ?? '';
  if (Buffer.byteLength(explanation, 'utf8') > 65_536) {
    return Promise.resolve(err(invalidInput('explanation', 'too long')));
  }
  const fence = input.lease === undefined ? null : fenceOf(input.lease);
  return catchStateErrors(() =>
    db.transaction(async (tx): Promise<Result<StateError, StagedDiffRecord>> => {
      let baseSha: string | null = null;
      if (input.base !== null) {
        const stored = await putBlob(tx, input.base);
        if (stored._tag === 'Left') return stored;
        baseSha = stored.right.sha256;
      }
      let stagedSha: string | null = null;
      if (input.staged !== null) {
        const stored = await putBlob(tx, input.staged);
        if (stored._tag === 'Left') return stored;
        stagedSha = stored.right.sha256;
      }
      await tx.query(
        `UPDATE crust_staged_diffs SET status = 'SUPERSEDED'
          WHERE task_id = $1::text AND file_path = $2::text AND status = 'PENDING'`,
        [input.taskId, input.filePath],
      );
      const inserted = await tx.query(
        `INSERT INTO crust_staged_diffs
           (task_id, file_path, base_sha256, staged_sha256, diff_content, explanation, job_id, fence_token)
         VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::int8)
         RETURNING ${DIFF_COLUMNS}`,
        [
          input.taskId,
          input.filePath,
          baseSha,
          stagedSha,
          input.diff,
          explanation,
          fence?.jobId ?? null,
          fence?.token ?? null,
        ],
      );
      return ok(toDiff(inserted.rows[0]));
    }),
  );
}

export async function listStagedDiffs(
  db: Db,
  taskId: TaskId,
  options: { readonly activeOnly?: boolean; readonly limit?: number } = {},
): Promise<readonly StagedDiffRecord[]> {
  const rows = await db.query(
    `SELECT ${DIFF_COLUMNS} FROM crust_staged_diffs
      WHERE task_id = $1::text AND ($2::bool = false OR status IN ('PENDING', 'APPLYING', 'APPLIED'))
      ORDER BY file_path COLLATE "C", id LIMIT $3::int4`,
    [taskId, options.activeOnly ?? true, Math.max(1, Math.min(options.limit ?? 10_000, 100_000))],
  );
  return rows.rows.map(toDiff);
}

/** Withdraws a pending diff (a reviewer or the worker dropped it). */
export function rejectStagedDiff(db: Db, id: bigint): Promise<Result<StateError, StagedDiffRecord>> {
  return catchStateErrors(async () => {
    const updated = await db.query(
      `UPDATE crust_staged_diffs SET status = 'REJECTED' WHERE id = $1::int8 AND status = 'PENDING' RETURNING ${DIFF_COLUMNS}`,
      [id.toString()],
    );
    const row = updated.rows[0];
    return row === undefined ? err({ _tag: 'NotFound', entity: 'stagedDiff', id: id.toString() }) : ok(toDiff(row));
  });
}

/** The staged content hash of a task, computed by the database. */
export async function stagedContentHash(db: Db, taskId: TaskId): Promise<Hash32> {
  const result = await db.query<{ hash: string }>('SELECT crust_staged_content_hash($1::text) AS hash', [taskId]);
  return result.rows[0]?.hash as Hash32;
}

export interface StagedContentEntry {
  readonly filePath: string;
  readonly baseSha256: string | null;
  readonly stagedSha256: string | null;
}

const byUtf8 = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** `crust_staged_content_hash` in TypeScript, over the active diffs given. */
export function computeStagedContentHash(entries: readonly StagedContentEntry[]): Hash32 {
  const lines = [...entries]
    .sort((a, b) => byUtf8(a.filePath, b.filePath))
    .map((entry) => `${entry.filePath}\t${entry.baseSha256 ?? '-'}\t${entry.stagedSha256 ?? '-'}\n`);
  return sha256Hex(lines.join(''));
}

export const isActiveStagedDiff = (diff: StagedDiffRecord): boolean => ACTIVE.includes(diff.status);
