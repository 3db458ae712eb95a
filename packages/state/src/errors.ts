/**
 * Expected failures of the state plane, as values with a stable `_tag`.
 *
 * Many of them are raised by the database itself (triggers and functions), so
 * that raw SQL obeys the same rules as this package. Those carry a custom
 * SQLSTATE in class `ZC` (user-defined classes start with a letter after H)
 * and a JSON DETAIL that `fromDatabaseError` decodes into these values.
 * Anything else the database throws is not an expected failure: it is
 * rethrown (a lost connection or a schema bug must crash loudly).
 */
import { err, type Hash32, type JobId, type Result, type TaskId } from '@crustcore/kernel';
import * as t from 'io-ts';

/** SQLSTATEs raised by this package's triggers and functions. */
export const SQLSTATE = {
  illegalTransition: 'ZC001',
  revisitBudgetExhausted: 'ZC002',
  fenceRejected: 'ZC003',
  illegalJobStatus: 'ZC004',
  fenceRegression: 'ZC005',
  immutableColumn: 'ZC006',
  verificationStale: 'ZC007',
  ledgerDiscontinuity: 'ZC008',
  verificationMissing: 'ZC009',
  unappliedDiffs: 'ZC010',
  catalogReadOnly: 'ZC011',
  wrongPhase: 'ZC012',
  illegalJournalTransition: 'ZC013',
} as const;

export interface DataDirLocked {
  readonly _tag: 'DataDirLocked';
  readonly dataDir: string;
  readonly holderPid: number;
  readonly holderHost: string;
  readonly reason: string;
}

export interface MigrationChecksumMismatch {
  readonly _tag: 'MigrationChecksumMismatch';
  readonly version: number;
  readonly recorded: string;
  readonly expected: string;
}

export interface SchemaTooNew {
  readonly _tag: 'SchemaTooNew';
  readonly databaseVersion: number;
  readonly codeVersion: number;
}

export interface InvalidInput {
  readonly _tag: 'InvalidInput';
  readonly field: string;
  readonly reason: string;
}

export interface NotFound {
  readonly _tag: 'NotFound';
  readonly entity: 'task' | 'job' | 'blob' | 'stagedDiff' | 'journal' | 'verificationRun' | 'fileLease';
  readonly id: string;
}

export interface AlreadyExists {
  readonly _tag: 'AlreadyExists';
  readonly entity: 'task' | 'job' | 'journal';
  readonly id: string;
}

export interface IllegalTransition {
  readonly _tag: 'IllegalTransition';
  readonly taskId: TaskId;
  readonly from: string | null;
  readonly to: string;
}

export interface RevisitBudgetExhausted {
  readonly _tag: 'RevisitBudgetExhausted';
  readonly taskId: TaskId;
  readonly revisits: number;
  readonly maxRevisits: number;
}

export interface PhaseConflict {
  readonly _tag: 'PhaseConflict';
  readonly taskId: TaskId;
  readonly expected: string;
  readonly actual: string;
}

/** VERIFY → APPROVAL_GATE (or an apply) without a passing run on the current staged content. */
export interface VerificationMissing {
  readonly _tag: 'VerificationMissing';
  readonly taskId: TaskId;
  readonly stagedHash: Hash32;
}

export interface UnappliedDiffs {
  readonly _tag: 'UnappliedDiffs';
  readonly taskId: TaskId;
  readonly count: number;
}

/** A write needs the task in a given phase (e.g. diffs are staged only in IMPLEMENT). */
export interface WrongPhase {
  readonly _tag: 'WrongPhase';
  readonly taskId: TaskId;
  readonly phase: string;
  readonly required: string;
}

/**
 * The database refused a worker's write because its lease is no longer the
 * current one: `regranted` (a newer token exists), `expired` (lease time ran
 * out on the database clock) or `ended` (the job left the leased states).
 */
export interface FenceRejected {
  readonly _tag: 'FenceRejected';
  readonly jobId: JobId;
  readonly presentedToken: string;
  readonly currentToken: string | null;
  readonly reason: 'regranted' | 'expired' | 'ended';
}

export interface IllegalJobStatus {
  readonly _tag: 'IllegalJobStatus';
  readonly jobId: JobId;
  readonly from: string;
  readonly to: string;
}

export interface FileLeaseHeld {
  readonly _tag: 'FileLeaseHeld';
  readonly path: string;
  readonly holder: string;
  readonly expiresAt: Date;
}

export interface FileLeaseLost {
  readonly _tag: 'FileLeaseLost';
  readonly path: string;
  readonly presentedToken: string;
}

/** A verification run presented for content that is no longer what is staged. */
export interface VerificationStale {
  readonly _tag: 'VerificationStale';
  readonly taskId: TaskId;
  readonly presented: string;
  readonly current: string;
}

export interface IllegalJournalTransition {
  readonly _tag: 'IllegalJournalTransition';
  readonly journalId: string;
  readonly from: string;
  readonly to: string;
}

export interface LedgerDiscontinuity {
  readonly _tag: 'LedgerDiscontinuity';
  readonly expectedSeq: number;
  readonly presentedSeq: number;
}

export interface LedgerMirrorConflict {
  readonly _tag: 'LedgerMirrorConflict';
  readonly seq: number;
  readonly mirrorHash: string;
  readonly frameHash: string;
}

/** A write touched something the database keeps immutable (ids, budgets, catalogs, history). */
export interface ImmutableViolation {
  readonly _tag: 'ImmutableViolation';
  readonly message: string;
}

export type StateError =
  | DataDirLocked
  | MigrationChecksumMismatch
  | SchemaTooNew
  | InvalidInput
  | NotFound
  | AlreadyExists
  | IllegalTransition
  | RevisitBudgetExhausted
  | PhaseConflict
  | VerificationMissing
  | UnappliedDiffs
  | WrongPhase
  | FenceRejected
  | IllegalJobStatus
  | FileLeaseHeld
  | FileLeaseLost
  | VerificationStale
  | IllegalJournalTransition
  | LedgerDiscontinuity
  | LedgerMirrorConflict
  | ImmutableViolation;

export const invalidInput = (field: string, reason: string): InvalidInput => ({ _tag: 'InvalidInput', field, reason });

/** The SQLSTATE of a driver error (both drivers expose `.code`), or null. */
export function sqlStateOf(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.length === 5 ? code : null;
}

const detailOf = (error: unknown): unknown => {
  const detail = (error as { detail?: unknown }).detail;
  if (typeof detail !== 'string') return null;
  try {
    return JSON.parse(detail);
  } catch {
    return null;
  }
};

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String((error as { message?: unknown }).message ?? error);

const NullableString = t.union([t.string, t.null]);
const TransitionDetail = t.type({ task_id: t.string, from: NullableString, to: t.string });
const RevisitDetail = t.type({ task_id: t.string, revisits: t.number, max_revisits: t.number });
const FenceDetail = t.type({
  job_id: t.string,
  presented: t.string,
  current: NullableString,
  reason: t.union([t.literal('regranted'), t.literal('expired'), t.literal('ended')]),
});
const JobStatusDetail = t.type({ job_id: t.string, from: t.string, to: t.string });
const StaleDetail = t.type({ task_id: t.string, presented: t.string, current: t.string });
const LedgerDetail = t.type({ expected_seq: t.number, presented_seq: t.number });
const MissingDetail = t.type({ task_id: t.string, staged_hash: t.string });
const UnappliedDetail = t.type({ task_id: t.string, count: t.number });
const PhaseDetail = t.type({ task_id: t.string, phase: t.string, required: t.string });
const JournalDetail = t.type({ journal_id: t.string, from: t.string, to: t.string });

const decode = <A>(codec: t.Type<A, unknown, unknown>, value: unknown): A | null => {
  const result = codec.decode(value);
  return result._tag === 'Right' ? result.right : null;
};

/**
 * Maps an error raised by one of this package's triggers to its value; null
 * for anything else (the caller rethrows). Unique violations are mapped by the
 * caller, which knows which entity was inserted.
 */
export function fromDatabaseError(error: unknown): StateError | null {
  const code = sqlStateOf(error);
  if (code === null || !code.startsWith('ZC')) return null;
  const detail = detailOf(error);
  switch (code) {
    case SQLSTATE.illegalTransition: {
      const d = decode(TransitionDetail, detail);
      return d && { _tag: 'IllegalTransition', taskId: d.task_id as TaskId, from: d.from, to: d.to };
    }
    case SQLSTATE.revisitBudgetExhausted: {
      const d = decode(RevisitDetail, detail);
      return (
        d && {
          _tag: 'RevisitBudgetExhausted',
          taskId: d.task_id as TaskId,
          revisits: d.revisits,
          maxRevisits: d.max_revisits,
        }
      );
    }
    case SQLSTATE.fenceRejected: {
      const d = decode(FenceDetail, detail);
      return (
        d && {
          _tag: 'FenceRejected',
          jobId: d.job_id as JobId,
          presentedToken: d.presented,
          currentToken: d.current,
          reason: d.reason,
        }
      );
    }
    case SQLSTATE.illegalJobStatus: {
      const d = decode(JobStatusDetail, detail);
      return d && { _tag: 'IllegalJobStatus', jobId: d.job_id as JobId, from: d.from, to: d.to };
    }
    case SQLSTATE.verificationStale: {
      const d = decode(StaleDetail, detail);
      return (
        d && { _tag: 'VerificationStale', taskId: d.task_id as TaskId, presented: d.presented, current: d.current }
      );
    }
    case SQLSTATE.ledgerDiscontinuity: {
      const d = decode(LedgerDetail, detail);
      return d && { _tag: 'LedgerDiscontinuity', expectedSeq: d.expected_seq, presentedSeq: d.presented_seq };
    }
    case SQLSTATE.verificationMissing: {
      const d = decode(MissingDetail, detail);
      return d && { _tag: 'VerificationMissing', taskId: d.task_id as TaskId, stagedHash: d.staged_hash as Hash32 };
    }
    case SQLSTATE.unappliedDiffs: {
      const d = decode(UnappliedDetail, detail);
      return d && { _tag: 'UnappliedDiffs', taskId: d.task_id as TaskId, count: d.count };
    }
    case SQLSTATE.wrongPhase: {
      const d = decode(PhaseDetail, detail);
      return d && { _tag: 'WrongPhase', taskId: d.task_id as TaskId, phase: d.phase, required: d.required };
    }
    case SQLSTATE.illegalJournalTransition: {
      const d = decode(JournalDetail, detail);
      return d && { _tag: 'IllegalJournalTransition', journalId: d.journal_id, from: d.from, to: d.to };
    }
    case SQLSTATE.fenceRegression:
    case SQLSTATE.immutableColumn:
    case SQLSTATE.catalogReadOnly:
      return { _tag: 'ImmutableViolation', message: messageOf(error) };
    default:
      return null;
  }
}

export const isUniqueViolation = (error: unknown): boolean => sqlStateOf(error) === '23505';

/**
 * Runs a database operation and turns errors raised by this package's
 * triggers into values. Every other error propagates.
 */
export async function catchStateErrors<T>(work: () => Promise<Result<StateError, T>>): Promise<Result<StateError, T>> {
  try {
    return await work();
  } catch (error) {
    const mapped = fromDatabaseError(error);
    if (mapped !== null) return err(mapped);
    throw error;
  }
}
