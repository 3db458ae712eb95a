/**
 * Jobs with leases and fencing tokens.
 *
 * - A worker claims the oldest available job with `FOR UPDATE SKIP LOCKED`,
 *   so competing workers never wait on each other and never share a job.
 * - Each grant takes a new token from the database's fencing sequence. Every
 *   worker write names its token; the database refuses it unless that token is
 *   the job's current one, the job is still leased and the lease has not run
 *   out on the database's clock (`now()`; worker clocks are not trusted).
 * - A lease that runs out is recovered by `recoverExpiredLeases`: Expired,
 *   then requeued (Retrying, attempt + 1, the kernel's exponential backoff) or
 *   Failed after the last attempt. Jobs past their deadline are stopped.
 * - Status changes follow the catalog `crust_job_status_edges`, enforced by a
 *   trigger.
 */
import { err, isId, type JobId, type Json, ok, type Result, type TaskId } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { Db, DbExecutor } from './db.js';
import { DbBigInt, DbDate, DbInt, DbJson, decodeRow, encodeJson, nullable } from './db-values.js';
import { catchStateErrors, type IllegalJobStatus, invalidInput, isUniqueViolation, type StateError } from './errors.js';

export const JOB_STATUSES = [
  'Queued',
  'Leased',
  'Running',
  'HeartbeatMissing',
  'Retrying',
  'Completed',
  'Failed',
  'Killed',
  'Expired',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/**
 * The job machine. Its one authority is the database: `crust_job_status_edges`
 * and its trigger (migration 3) refuse any other move, for every daemon on
 * every host, with leases fenced by tokens from one sequence. This table is
 * the same catalog for TypeScript readers; suite-jobs.ts pins the two. (The
 * kernel had a second, in-process copy that no adapter drove; it was removed:
 * docs/daemon.md, "One job machine".)
 */
export const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  Queued: ['Leased', 'Killed'],
  Leased: ['Running', 'HeartbeatMissing', 'Expired', 'Completed', 'Failed', 'Killed', 'Retrying'],
  Running: ['HeartbeatMissing', 'Expired', 'Completed', 'Failed', 'Killed', 'Retrying'],
  HeartbeatMissing: ['Running', 'Expired', 'Completed', 'Failed', 'Killed', 'Retrying'],
  Expired: ['Retrying', 'Failed'],
  Retrying: ['Leased', 'Killed', 'Failed'],
  Completed: [],
  Failed: [],
  Killed: [],
};

export interface RetryPolicy {
  readonly maxAttempts: number;
  /** Backoff before attempt n (n ≥ 2) is baseDelayMs × 2^(n−2), capped. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000 };

export const LIVE_JOB_STATUSES: readonly JobStatus[] = ['Leased', 'Running', 'HeartbeatMissing'];
export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['Completed', 'Failed', 'Killed'];

export const isJobStatus = (value: unknown): value is JobStatus =>
  typeof value === 'string' && (JOB_STATUSES as readonly string[]).includes(value);

const Status = new t.Type<JobStatus, string, unknown>(
  'JobStatus',
  isJobStatus,
  (input, context) => (isJobStatus(input) ? t.success(input) : t.failure(input, context)),
  (status) => status,
);

/** Bounds. Lease durations are parameters; these only keep them sane. */
export const JOB_LIMITS = {
  minLeaseMs: 50,
  maxLeaseMs: 86_400_000,
  maxAttempts: 100,
  maxBackoffMs: 86_400_000,
  maxPayloadBytes: 1_048_576,
  maxBudgetBytes: 65_536,
  maxMessageBytes: 65_536,
  maxOwnerBytes: 256,
  maxKinds: 64,
  maxRecoverBatch: 10_000,
} as const;

export interface JobRecord {
  readonly id: JobId;
  readonly taskId: TaskId | null;
  readonly kind: string;
  readonly payload: Json;
  /** Budget record (opaque to the state plane, owned by the kernel's budgets). */
  readonly budget: Json;
  readonly status: JobStatus;
  readonly attempt: number;
  /** Attempts in all, and the backoff before attempt n ≥ 2: baseDelayMs × 2^(n−2), at most maxDelayMs. */
  readonly retryPolicy: RetryPolicy;
  readonly deadlineAt: Date | null;
  readonly availableAt: Date;
  readonly owner: string | null;
  readonly fenceToken: bigint | null;
  readonly leaseMs: number | null;
  readonly leasedAt: Date | null;
  readonly leaseExpiresAt: Date | null;
  readonly heartbeatAt: Date | null;
  /** Set by the worker at start, e.g. `pid:1234@host`, so the daemon can signal it. */
  readonly processHandle: string | null;
  /** Cancellation token: the worker sees it on its next heartbeat. */
  readonly cancelRequested: boolean;
  readonly result: Json | null;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const JobRow = t.type({
  id: t.string,
  task_id: nullable(t.string),
  kind: t.string,
  payload: DbJson,
  budget: DbJson,
  status: Status,
  attempt: DbInt,
  max_attempts: DbInt,
  retry_base_delay_ms: DbInt,
  retry_max_delay_ms: DbInt,
  deadline_at: nullable(DbDate),
  available_at: DbDate,
  owner: nullable(t.string),
  fence_token: nullable(DbBigInt),
  lease_ms: nullable(DbInt),
  leased_at: nullable(DbDate),
  lease_expires_at: nullable(DbDate),
  heartbeat_at: nullable(DbDate),
  process_handle: nullable(t.string),
  cancel_requested: t.boolean,
  result: nullable(DbJson),
  last_error: nullable(t.string),
  created_at: DbDate,
  updated_at: DbDate,
});

const JOB_COLUMNS = `id, task_id, kind, payload, budget, status, attempt, max_attempts, retry_base_delay_ms,
  retry_max_delay_ms, deadline_at,
  available_at, owner, fence_token::text AS fence_token, lease_ms, leased_at, lease_expires_at, heartbeat_at,
  process_handle, cancel_requested, result, last_error, created_at, updated_at`;

/** Same columns, qualified for UPDATE … FROM statements. */
const JOB_COLUMNS_QUALIFIED = JOB_COLUMNS.split(',')
  .map((column) => `j.${column.trim()}`)
  .join(', ');

const toJob = (row: unknown): JobRecord => {
  const r = decodeRow(JobRow, row, 'job');
  return {
    id: r.id as JobId,
    taskId: r.task_id as TaskId | null,
    kind: r.kind,
    payload: r.payload,
    budget: r.budget,
    status: r.status,
    attempt: r.attempt,
    retryPolicy: {
      maxAttempts: r.max_attempts,
      baseDelayMs: r.retry_base_delay_ms,
      maxDelayMs: r.retry_max_delay_ms,
    },
    deadlineAt: r.deadline_at,
    availableAt: r.available_at,
    owner: r.owner,
    fenceToken: r.fence_token,
    leaseMs: r.lease_ms,
    leasedAt: r.leased_at,
    leaseExpiresAt: r.lease_expires_at,
    heartbeatAt: r.heartbeat_at,
    processHandle: r.process_handle,
    cancelRequested: r.cancel_requested,
    result: r.result,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
};

let mintLease: (job: JobRecord) => JobLease;
/**
 * Reads the fence through the private fields, so a look-alike plain object
 * (which the types already reject) fails with a TypeError at run time too.
 * Internal to this package.
 */
let readFence: (lease: JobLease) => { readonly jobId: JobId; readonly token: string };
export const fenceOf = (lease: JobLease): { readonly jobId: JobId; readonly token: string } => readFence(lease);

/**
 * A granted lease: the job, its owner and the fencing token of this grant.
 * Only `claimJob` mints one (private constructor and fields: a plain object
 * does not type-check as a lease). The database still checks the token on
 * every write, so a lease kept past its re-grant is refused there.
 */
export class JobLease {
  readonly #job: JobRecord;
  readonly #token: bigint;
  readonly #owner: string;

  private constructor(job: JobRecord, token: bigint, owner: string) {
    this.#job = job;
    this.#token = token;
    this.#owner = owner;
  }

  static {
    mintLease = (job: JobRecord): JobLease => {
      if (job.fenceToken === null || job.owner === null || job.status !== 'Leased') {
        throw new Error(`job ${job.id} is not freshly leased`);
      }
      return new JobLease(job, job.fenceToken, job.owner);
    };
    readFence = (lease) => ({ jobId: lease.#job.id, token: lease.#token.toString() });
  }

  get jobId(): JobId {
    return this.#job.id;
  }
  get token(): bigint {
    return this.#token;
  }
  get owner(): string {
    return this.#owner;
  }
  /** The job as it was when claimed. */
  get job(): JobRecord {
    return this.#job;
  }
  get attempt(): number {
    return this.#job.attempt;
  }
  get kind(): string {
    return this.#job.kind;
  }
  get payload(): Json {
    return this.#job.payload;
  }
  get taskId(): TaskId | null {
    return this.#job.taskId;
  }
  /** Expiry at grant time (the database clock); heartbeats extend it. */
  get leaseExpiresAt(): Date | null {
    return this.#job.leaseExpiresAt;
  }

  toString(): string {
    return `JobLease(${this.#job.id}#${this.#token})`;
  }
}

export interface EnqueueJobInput {
  readonly id: JobId;
  /** What kind of work, e.g. `agent.turn` or `verify`; workers claim by kind. */
  readonly kind: string;
  readonly taskId?: TaskId;
  readonly payload?: Json;
  readonly budget?: Json;
  /** Overrides of DEFAULT_RETRY_POLICY (maxAttempts 1..100, delays 0..24 h). */
  readonly retry?: Partial<RetryPolicy>;
  /** Stop the job this long after enqueue if it has not finished (a bound on its whole life). */
  readonly deadlineMs?: number;
  /** Not claimable until this long after enqueue. */
  readonly delayMs?: number;
}

const KIND = /^[a-z][a-z0-9_.-]{0,63}$/;

const inRange = (value: number, min: number, max: number): boolean =>
  Number.isSafeInteger(value) && value >= min && value <= max;

export async function enqueueJob(db: Db, input: EnqueueJobInput): Promise<Result<StateError, JobRecord>> {
  if (!isId('JobId', input.id)) return err(invalidInput('id', 'expected a JobId'));
  if (!KIND.test(input.kind)) return err(invalidInput('kind', 'expected [a-z][a-z0-9_.-]{0,63}'));
  if (input.taskId !== undefined && !isId('TaskId', input.taskId))
    return err(invalidInput('taskId', 'expected a TaskId'));
  const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...input.retry };
  if (!inRange(retry.maxAttempts, 1, JOB_LIMITS.maxAttempts)) return err(invalidInput('retry.maxAttempts', '1..100'));
  if (
    !inRange(retry.baseDelayMs, 0, JOB_LIMITS.maxBackoffMs) ||
    !inRange(retry.maxDelayMs, 0, JOB_LIMITS.maxBackoffMs)
  ) {
    return err(invalidInput('retry', 'delays must be 0..86400000 ms'));
  }
  if (input.deadlineMs !== undefined && !inRange(input.deadlineMs, 1, 365 * JOB_LIMITS.maxLeaseMs)) {
    return err(invalidInput('deadlineMs', 'out of range'));
  }
  const delayMs = input.delayMs ?? 0;
  if (!inRange(delayMs, 0, JOB_LIMITS.maxLeaseMs)) return err(invalidInput('delayMs', 'out of range'));
  const payload = encodeJson(input.payload ?? {}, 'payload', JOB_LIMITS.maxPayloadBytes);
  if (payload._tag === 'Left') return payload;
  const budget = encodeJson(input.budget ?? {}, 'budget', JOB_LIMITS.maxBudgetBytes);
  if (budget._tag === 'Left') return budget;
  try {
    const inserted = await db.query(
      `INSERT INTO crust_jobs (id, kind, task_id, payload, budget, max_attempts, retry_base_delay_ms, retry_max_delay_ms,
                               deadline_at, available_at)
       VALUES ($1::text, $2::text, $3::text, ($4::text)::jsonb, ($5::text)::jsonb, $6::int4, $7::int4, $8::int4,
               now() + $9::float8 * interval '1 millisecond', now() + $10::int4 * interval '1 millisecond')
       RETURNING ${JOB_COLUMNS}`,
      [
        input.id,
        input.kind,
        input.taskId ?? null,
        payload.right,
        budget.right,
        retry.maxAttempts,
        retry.baseDelayMs,
        retry.maxDelayMs,
        input.deadlineMs ?? null,
        delayMs,
      ],
    );
    return ok(toJob(inserted.rows[0]));
  } catch (error) {
    if (isUniqueViolation(error)) return err({ _tag: 'AlreadyExists', entity: 'job', id: input.id });
    throw error;
  }
}

export async function getJob(db: DbExecutor, id: JobId): Promise<JobRecord | null> {
  const found = await db.query(`SELECT ${JOB_COLUMNS} FROM crust_jobs WHERE id = $1::text`, [id]);
  return found.rows.length === 0 ? null : toJob(found.rows[0]);
}

export interface ClaimOptions {
  /** Who holds the lease (worker id); recorded on the job. */
  readonly owner: string;
  /** Lease duration on the database clock. */
  readonly leaseMs: number;
  /** Only these kinds (at most 64); all kinds when omitted. */
  readonly kinds?: readonly string[];
}

/**
 * Leases the oldest available job, or returns null when none is available.
 * One statement: the candidate row is locked with SKIP LOCKED and granted a
 * new fencing token in the same UPDATE.
 */
export async function claimJob(db: DbExecutor, options: ClaimOptions): Promise<Result<StateError, JobLease | null>> {
  const ownerBytes = Buffer.byteLength(options.owner, 'utf8');
  if (ownerBytes < 1 || ownerBytes > JOB_LIMITS.maxOwnerBytes)
    return err(invalidInput('owner', 'expected 1..256 bytes'));
  if (!inRange(options.leaseMs, JOB_LIMITS.minLeaseMs, JOB_LIMITS.maxLeaseMs)) {
    return err(invalidInput('leaseMs', `expected ${JOB_LIMITS.minLeaseMs}..${JOB_LIMITS.maxLeaseMs}`));
  }
  const kinds = options.kinds;
  if (kinds !== undefined && (kinds.length > JOB_LIMITS.maxKinds || !kinds.every((kind) => KIND.test(kind)))) {
    return err(invalidInput('kinds', 'expected at most 64 job kinds'));
  }
  const claimed = await db.query(
    `WITH candidate AS (
       SELECT id FROM crust_jobs
        WHERE status IN ('Queued', 'Retrying') AND available_at <= now()
          AND (deadline_at IS NULL OR deadline_at > now())
          AND ($3::text IS NULL OR kind IN (SELECT jsonb_array_elements_text(($3::text)::jsonb)))
        ORDER BY available_at, seq
        LIMIT 1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE crust_jobs j
        SET status = 'Leased', owner = $1::text, fence_token = nextval('crust_fence_seq'),
            lease_ms = $2::int4, leased_at = now(), heartbeat_at = now(),
            lease_expires_at = now() + $2::int4 * interval '1 millisecond', process_handle = NULL
       FROM candidate
      WHERE j.id = candidate.id
     RETURNING ${JOB_COLUMNS_QUALIFIED}`,
    [options.owner, options.leaseMs, kinds === undefined ? null : JSON.stringify(kinds)],
  );
  const row = claimed.rows[0];
  return ok(row === undefined ? null : mintLease(toJob(row)));
}

const LIVE_LIST = `'Leased', 'Running', 'HeartbeatMissing'`;
const LIVE = `(${LIVE_LIST})`;

/**
 * Runs one fenced UPDATE (`WHERE id = $1 AND fence_token = $2 AND live AND
 * not expired`). When it changes no row, asks the database why:
 * `crust_require_fence` raises the precise refusal. If the lease is in fact
 * valid, the requested status change itself was illegal.
 */
async function fencedUpdate(
  db: Db,
  lease: JobLease,
  set: string,
  params: readonly (string | number | boolean | null)[],
  to: JobStatus,
): Promise<Result<StateError, JobRecord>> {
  const fence = fenceOf(lease);
  return catchStateErrors(async () => {
    const updated = await db.query(
      `UPDATE crust_jobs SET ${set}
        WHERE id = $1::text AND fence_token = $2::int8 AND status IN ${LIVE} AND lease_expires_at > now()
       RETURNING ${JOB_COLUMNS}`,
      [fence.jobId, fence.token, ...params],
    );
    const row = updated.rows[0];
    if (row !== undefined) return ok(toJob(row));
    await db.query('SELECT crust_require_fence($1::text, $2::int8)', [fence.jobId, fence.token]);
    const current = await getJob(db, fence.jobId);
    const illegal: IllegalJobStatus = {
      _tag: 'IllegalJobStatus',
      jobId: fence.jobId,
      from: current?.status ?? 'unknown',
      to,
    };
    return err(illegal);
  });
}

export interface HeartbeatAck {
  readonly leaseExpiresAt: Date;
  /** The daemon asked this job to stop: finish with `acknowledgeCancel`. */
  readonly cancelRequested: boolean;
}

/**
 * Extends the lease by the job's lease duration from the database's now().
 * Like the kernel's JobHeartbeat, a beat marks the job Running (from Leased
 * or HeartbeatMissing).
 */
export async function heartbeatJob(db: Db, lease: JobLease): Promise<Result<StateError, HeartbeatAck>> {
  const updated = await fencedUpdate(
    db,
    lease,
    `heartbeat_at = now(), lease_expires_at = now() + lease_ms * interval '1 millisecond', status = 'Running'`,
    [],
    'Running',
  );
  if (updated._tag === 'Left') return updated;
  const job = updated.right;
  return ok({ leaseExpiresAt: job.leaseExpiresAt ?? new Date(0), cancelRequested: job.cancelRequested });
}

/** Leased -> Running, recording how to reach the worker process. */
export function startJob(
  db: Db,
  lease: JobLease,
  options: { readonly processHandle?: string } = {},
): Promise<Result<StateError, JobRecord>> {
  const handle = options.processHandle ?? null;
  if (handle !== null && Buffer.byteLength(handle, 'utf8') > 256) {
    return Promise.resolve(err(invalidInput('processHandle', 'longer than 256 bytes')));
  }
  return fencedUpdate(
    db,
    lease,
    `status = 'Running', heartbeat_at = now(), process_handle = $3::text`,
    [handle],
    'Running',
  );
}

export function completeJob(
  db: Db,
  lease: JobLease,
  options: { readonly result?: Json } = {},
): Promise<Result<StateError, JobRecord>> {
  const result = encodeJson(options.result ?? null, 'result', JOB_LIMITS.maxPayloadBytes);
  if (result._tag === 'Left') return Promise.resolve(result);
  return fencedUpdate(db, lease, `status = 'Completed', result = ($3::text)::jsonb`, [result.right], 'Completed');
}

/** The backoff before the next attempt (attempt + 1): base × 2^(attempt − 1), capped. */
const backoff = (alias: string): string =>
  `least(${alias}retry_base_delay_ms::float8 * power(2, ${alias}attempt - 1), ${alias}retry_max_delay_ms)
   * interval '1 millisecond'`;

/**
 * The worker gives up on this attempt. Retryable failures with attempts left
 * go to Retrying (attempt + 1, claimable after the backoff); others to Failed.
 */
export function failJob(
  db: Db,
  lease: JobLease,
  options: { readonly error: string; readonly retryable?: boolean },
): Promise<Result<StateError, JobRecord>> {
  const message = options.error.slice(0, JOB_LIMITS.maxMessageBytes / 4);
  const retry = `($4::bool AND attempt < max_attempts)`;
  return fencedUpdate(
    db,
    lease,
    `last_error = $3::text,
     status = CASE WHEN ${retry} THEN 'Retrying' ELSE 'Failed' END,
     attempt = CASE WHEN ${retry} THEN attempt + 1 ELSE attempt END,
     available_at = CASE WHEN ${retry} THEN now() + ${backoff('')} ELSE available_at END`,
    [message, options.retryable ?? false],
    'Failed',
  );
}

/** The worker stopped because cancellation was requested. */
export function acknowledgeCancel(db: Db, lease: JobLease): Promise<Result<StateError, JobRecord>> {
  return fencedUpdate(db, lease, `status = 'Killed', last_error = 'cancelled'`, [], 'Killed');
}

/** A worker's note on its progress; refused by the database if the lease is not current. */
export async function recordJobProgress(
  db: Db,
  lease: JobLease,
  progress: { readonly message: string; readonly data?: Json },
): Promise<Result<StateError, { readonly id: bigint }>> {
  if (Buffer.byteLength(progress.message, 'utf8') > JOB_LIMITS.maxMessageBytes) {
    return err(invalidInput('message', 'too long'));
  }
  const data = encodeJson(progress.data ?? {}, 'data', JOB_LIMITS.maxPayloadBytes);
  if (data._tag === 'Left') return data;
  const fence = fenceOf(lease);
  return catchStateErrors(async () => {
    const inserted = await db.query<{ id: unknown }>(
      `INSERT INTO crust_job_progress (job_id, fence_token, message, data)
       VALUES ($1::text, $2::int8, $3::text, ($4::text)::jsonb) RETURNING id::text AS id`,
      [fence.jobId, fence.token, progress.message, data.right],
    );
    return ok({ id: decodeRow(DbBigInt, inserted.rows[0]?.id, 'progress id') });
  });
}

export interface JobProgressEntry {
  readonly id: bigint;
  readonly fenceToken: bigint;
  readonly message: string;
  readonly data: Json;
  readonly at: Date;
}

export async function jobProgress(db: Db, jobId: JobId, limit = 1000): Promise<readonly JobProgressEntry[]> {
  const rows = await db.query(
    `SELECT id::text AS id, fence_token::text AS fence_token, message, data, at FROM crust_job_progress
      WHERE job_id = $1::text ORDER BY id LIMIT $2::int4`,
    [jobId, Math.max(1, Math.min(limit, 10_000))],
  );
  return rows.rows.map((row) => {
    const r = decodeRow(
      t.type({ id: DbBigInt, fence_token: DbBigInt, message: t.string, data: DbJson, at: DbDate }),
      row,
      'progress',
    );
    return { id: r.id, fenceToken: r.fence_token, message: r.message, data: r.data, at: r.at };
  });
}

/** Links a stored blob to the job as an artifact (fenced like every worker write). */
export function attachJobArtifact(
  db: Db,
  lease: JobLease,
  artifact: { readonly sha256: string; readonly label: string },
): Promise<Result<StateError, void>> {
  const labelBytes = Buffer.byteLength(artifact.label, 'utf8');
  if (labelBytes < 1 || labelBytes > 256) return Promise.resolve(err(invalidInput('label', 'expected 1..256 bytes')));
  const fence = fenceOf(lease);
  return catchStateErrors(async () => {
    await db.query(
      `INSERT INTO crust_job_artifacts (job_id, sha256, label, fence_token) VALUES ($1::text, $2::text, $3::text, $4::int8)`,
      [fence.jobId, artifact.sha256, artifact.label, fence.token],
    );
    return ok(undefined);
  });
}

/**
 * Cancels a job: one that waits is Killed at once; a leased one gets its
 * cancellation token set and stops at its next heartbeat. Terminal jobs are
 * left as they are.
 */
export async function cancelJob(db: Db, jobId: JobId): Promise<Result<StateError, JobRecord>> {
  const updated = await db.query(
    `UPDATE crust_jobs
        SET cancel_requested = true,
            status = CASE WHEN status IN ('Queued', 'Retrying') THEN 'Killed' ELSE status END,
            last_error = CASE WHEN status IN ('Queued', 'Retrying') THEN 'cancelled' ELSE last_error END
      WHERE id = $1::text AND status IN ('Queued', 'Leased', 'Running', 'HeartbeatMissing', 'Retrying')
     RETURNING ${JOB_COLUMNS}`,
    [jobId],
  );
  const row = updated.rows[0];
  if (row !== undefined) return ok(toJob(row));
  const current = await getJob(db, jobId);
  return current === null ? err({ _tag: 'NotFound', entity: 'job', id: jobId }) : ok(current);
}

/** Forces any unfinished job to Killed (the daemon killed its process). Its lease becomes void. */
export function killJob(db: Db, jobId: JobId, reason: string): Promise<Result<StateError, JobRecord>> {
  return catchStateErrors(async () => {
    const updated = await db.query(
      `UPDATE crust_jobs SET status = 'Killed', last_error = $2::text
        WHERE id = $1::text AND status IN ('Queued', 'Leased', 'Running', 'HeartbeatMissing', 'Retrying')
       RETURNING ${JOB_COLUMNS}`,
      [jobId, reason.slice(0, 4096)],
    );
    const row = updated.rows[0];
    if (row !== undefined) return ok(toJob(row));
    const current = await getJob(db, jobId);
    if (current === null) return err({ _tag: 'NotFound', entity: 'job', id: jobId });
    return err({ _tag: 'IllegalJobStatus', jobId, from: current.status, to: 'Killed' });
  });
}

export interface RecoveryReport {
  /** Lease ran out and attempts are left: Retrying with attempt + 1. */
  readonly requeued: readonly JobId[];
  /** Lease ran out on the last attempt, or the job was cancelled. */
  readonly failed: readonly JobId[];
  /** Deadline passed: stopped (Queued -> Killed, Retrying -> Failed, leased -> Expired -> Failed). */
  readonly deadlineExceeded: readonly JobId[];
  /** No heartbeat for over half the lease; still leased. */
  readonly heartbeatMissing: readonly JobId[];
}

const IdStatusRow = t.type({ id: t.string, status: Status });

/**
 * The lease sweeper, run by the daemon on a timer; any number of processes
 * may run it at once (rows are taken with SKIP LOCKED). One transaction, so
 * nobody sees a job parked in Expired. Each step handles at most `limit` jobs.
 */
export async function recoverExpiredLeases(db: Db, options: { readonly limit?: number } = {}): Promise<RecoveryReport> {
  const limit = Math.max(1, Math.min(options.limit ?? 1000, JOB_LIMITS.maxRecoverBatch));
  const decode = (rows: readonly unknown[]) => rows.map((row) => decodeRow(IdStatusRow, row, 'recovered job'));
  const idsOf = (rows: readonly { id: string }[]) => rows.map((row) => row.id as JobId);
  return db.transaction(async (tx) => {
    // Deadlines: waiting jobs stop here; leased ones expire now and fail below.
    const overdue = await tx.query(
      `WITH overdue AS (
         SELECT id FROM crust_jobs
          WHERE status IN ('Queued', 'Retrying', ${LIVE_LIST}) AND deadline_at <= now()
          ORDER BY deadline_at LIMIT $1::int4 FOR UPDATE SKIP LOCKED)
       UPDATE crust_jobs j
          SET status = CASE j.status WHEN 'Queued' THEN 'Killed' WHEN 'Retrying' THEN 'Failed' ELSE 'Expired' END,
              last_error = 'deadline passed'
         FROM overdue WHERE j.id = overdue.id
       RETURNING j.id, j.status`,
      [limit],
    );
    await tx.query(
      `WITH lapsed AS (
         SELECT id FROM crust_jobs
          WHERE status IN ${LIVE} AND lease_expires_at <= now()
          ORDER BY lease_expires_at LIMIT $1::int4 FOR UPDATE SKIP LOCKED)
       UPDATE crust_jobs j SET status = 'Expired', last_error = format('lease of %s expired', j.owner)
         FROM lapsed WHERE j.id = lapsed.id`,
      [limit],
    );
    const retry = `(j.attempt < j.max_attempts AND NOT j.cancel_requested
                    AND (j.deadline_at IS NULL OR j.deadline_at > now()))`;
    const settled = await tx.query(
      `WITH expired AS (
         SELECT id FROM crust_jobs WHERE status = 'Expired' LIMIT $1::int4 FOR UPDATE SKIP LOCKED)
       UPDATE crust_jobs j
          SET status = CASE WHEN ${retry} THEN 'Retrying' ELSE 'Failed' END,
              attempt = CASE WHEN ${retry} THEN j.attempt + 1 ELSE j.attempt END,
              available_at = CASE WHEN ${retry} THEN now() + ${backoff('j.')} ELSE j.available_at END
         FROM expired WHERE j.id = expired.id
       RETURNING j.id, j.status`,
      [2 * limit],
    );
    const late = await tx.query(
      `WITH late AS (
         SELECT id FROM crust_jobs
          WHERE status IN ('Leased', 'Running') AND lease_expires_at > now()
            AND heartbeat_at + (lease_ms / 2) * interval '1 millisecond' < now()
          LIMIT $1::int4 FOR UPDATE SKIP LOCKED)
       UPDATE crust_jobs j SET status = 'HeartbeatMissing'
         FROM late WHERE j.id = late.id
       RETURNING j.id, j.status`,
      [limit],
    );
    const deadlineExceeded = idsOf(decode(overdue.rows));
    const settledRows = decode(settled.rows).filter((row) => !deadlineExceeded.includes(row.id as JobId));
    return {
      requeued: idsOf(settledRows.filter((row) => row.status === 'Retrying')),
      failed: idsOf(settledRows.filter((row) => row.status === 'Failed')),
      deadlineExceeded,
      heartbeatMissing: idsOf(decode(late.rows)),
    };
  });
}

/** Jobs of a task, oldest first. */
export async function listJobs(
  db: Db,
  filter: { readonly taskId?: TaskId; readonly status?: JobStatus; readonly limit?: number } = {},
): Promise<readonly JobRecord[]> {
  const rows = await db.query(
    `SELECT ${JOB_COLUMNS} FROM crust_jobs
      WHERE ($1::text IS NULL OR task_id = $1::text) AND ($2::text IS NULL OR status = $2::text)
      ORDER BY seq LIMIT $3::int4`,
    [filter.taskId ?? null, filter.status ?? null, Math.max(1, Math.min(filter.limit ?? 1000, 10_000))],
  );
  return rows.rows.map(toJob);
}
