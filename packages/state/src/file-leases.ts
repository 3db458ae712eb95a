/**
 * File leases: single-writer leases on canonical absolute paths, for agents
 * editing one repository concurrently. A lease has a holder, a token from the
 * same fencing sequence as jobs, and an expiry on the database clock. A
 * path is taken over only after its lease expires; renewing and releasing
 * need the current token, and `withFileLease` runs work in a transaction that
 * share-locks the lease row, so the lease cannot be re-granted meanwhile.
 *
 * The state plane cannot resolve symlinks (that is the confine package's
 * job): it requires the normalized form and trusts the caller to have
 * canonicalized the path.
 */
import { err, ok, type Result, type TaskId } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { Db, DbExecutor } from './db.js';
import { DbBigInt, DbDate, decodeRow } from './db-values.js';
import { catchStateErrors, invalidInput, type StateError } from './errors.js';

export const FILE_LEASE_LIMITS = {
  minTtlMs: 50,
  maxTtlMs: 86_400_000,
  maxHolderBytes: 256,
  maxPathBytes: 4096,
} as const;

/** Why `path` is not a normalized absolute POSIX path, or null. */
export function canonicalPathProblem(path: string): string | null {
  if (path.length === 0 || Buffer.byteLength(path, 'utf8') > FILE_LEASE_LIMITS.maxPathBytes) {
    return 'expected 1..4096 bytes';
  }
  if (!path.startsWith('/')) return 'must be absolute';
  if (path.includes('\0')) return 'contains NUL';
  if (path === '/') return null;
  if (path.endsWith('/')) return 'has a trailing slash';
  if (
    path
      .slice(1)
      .split('/')
      .some((segment) => segment === '' || segment === '.' || segment === '..')
  ) {
    return 'has an empty, "." or ".." segment';
  }
  return null;
}

let mintFileLease: (path: string, holder: string, token: bigint, expiresAt: Date) => FileLease;
/** Reads through the private fields: a look-alike object fails with a TypeError. */
let grantOf: (lease: FileLease) => { readonly path: string; readonly holder: string; readonly token: string };

/** Proof of a granted file lease; minted only by acquire/renew. */
export class FileLease {
  readonly #path: string;
  readonly #holder: string;
  readonly #token: bigint;
  readonly #expiresAt: Date;

  private constructor(path: string, holder: string, token: bigint, expiresAt: Date) {
    this.#path = path;
    this.#holder = holder;
    this.#token = token;
    this.#expiresAt = expiresAt;
  }

  static {
    mintFileLease = (path, holder, token, expiresAt) => new FileLease(path, holder, token, expiresAt);
    grantOf = (lease) => ({ path: lease.#path, holder: lease.#holder, token: lease.#token.toString() });
  }

  get path(): string {
    return this.#path;
  }
  get holder(): string {
    return this.#holder;
  }
  get token(): bigint {
    return this.#token;
  }
  /** Expiry on the database clock when granted or last renewed. */
  get expiresAt(): Date {
    return this.#expiresAt;
  }
}

const GrantRow = t.type({ token: DbBigInt, expires_at: DbDate });
const HolderRow = t.type({ holder: t.string, expires_at: DbDate });

export interface AcquireFileLeaseInput {
  readonly path: string;
  readonly holder: string;
  readonly ttlMs: number;
  readonly taskId?: TaskId;
}

function checkTtl(ttlMs: number): string | null {
  return Number.isSafeInteger(ttlMs) && ttlMs >= FILE_LEASE_LIMITS.minTtlMs && ttlMs <= FILE_LEASE_LIMITS.maxTtlMs
    ? null
    : `expected ${FILE_LEASE_LIMITS.minTtlMs}..${FILE_LEASE_LIMITS.maxTtlMs}`;
}

/** Takes the lease if the path is free or its lease expired; FileLeaseHeld otherwise. */
export async function acquireFileLease(db: Db, input: AcquireFileLeaseInput): Promise<Result<StateError, FileLease>> {
  const pathProblem = canonicalPathProblem(input.path);
  if (pathProblem !== null) return err(invalidInput('path', pathProblem));
  const holderBytes = Buffer.byteLength(input.holder, 'utf8');
  if (holderBytes < 1 || holderBytes > FILE_LEASE_LIMITS.maxHolderBytes) {
    return err(invalidInput('holder', 'expected 1..256 bytes'));
  }
  const ttlProblem = checkTtl(input.ttlMs);
  if (ttlProblem !== null) return err(invalidInput('ttlMs', ttlProblem));
  return catchStateErrors(async () => {
    const granted = await db.query(
      `INSERT INTO crust_file_leases AS l (path, holder, token, task_id, expires_at)
       VALUES ($1::text, $2::text, nextval('crust_fence_seq'), $3::text, now() + $4::int4 * interval '1 millisecond')
       ON CONFLICT (path) DO UPDATE
         SET holder = EXCLUDED.holder, token = EXCLUDED.token, task_id = EXCLUDED.task_id,
             acquired_at = now(), expires_at = EXCLUDED.expires_at
         WHERE l.expires_at <= now()
       RETURNING l.token::text AS token, l.expires_at`,
      [input.path, input.holder, input.taskId ?? null, input.ttlMs],
    );
    const row = granted.rows[0];
    if (row !== undefined) {
      const r = decodeRow(GrantRow, row, 'file lease');
      return ok(mintFileLease(input.path, input.holder, r.token, r.expires_at));
    }
    const held = await db.query('SELECT holder, expires_at FROM crust_file_leases WHERE path = $1::text', [input.path]);
    const holder = decodeRow(HolderRow, held.rows[0], 'file lease holder');
    return err({ _tag: 'FileLeaseHeld', path: input.path, holder: holder.holder, expiresAt: holder.expires_at });
  });
}

/** Extends a lease that is still current and unexpired; FileLeaseLost otherwise. */
export async function renewFileLease(db: Db, lease: FileLease, ttlMs: number): Promise<Result<StateError, FileLease>> {
  const ttlProblem = checkTtl(ttlMs);
  if (ttlProblem !== null) return err(invalidInput('ttlMs', ttlProblem));
  const grant = grantOf(lease);
  const renewed = await db.query(
    `UPDATE crust_file_leases SET expires_at = now() + $3::int4 * interval '1 millisecond'
      WHERE path = $1::text AND token = $2::int8 AND expires_at > now()
     RETURNING token::text AS token, expires_at`,
    [grant.path, grant.token, ttlMs],
  );
  const row = renewed.rows[0];
  if (row === undefined) return err({ _tag: 'FileLeaseLost', path: grant.path, presentedToken: grant.token });
  const r = decodeRow(GrantRow, row, 'file lease');
  return ok(mintFileLease(grant.path, grant.holder, r.token, r.expires_at));
}

/** Gives the path back. A lease already taken over is reported lost (and left alone). */
export async function releaseFileLease(db: Db, lease: FileLease): Promise<Result<StateError, void>> {
  const grant = grantOf(lease);
  const released = await db.query('DELETE FROM crust_file_leases WHERE path = $1::text AND token = $2::int8', [
    grant.path,
    grant.token,
  ]);
  return released.rowCount === 1
    ? ok(undefined)
    : err({ _tag: 'FileLeaseLost', path: grant.path, presentedToken: grant.token });
}

/**
 * Runs `work` in a transaction only while `lease` is current and unexpired.
 * The lease row is share-locked for the whole transaction, so a takeover
 * (which must update the row) waits until `work` has committed or rolled back.
 */
export async function withFileLease<T>(
  db: Db,
  lease: FileLease,
  work: (tx: DbExecutor) => Promise<T>,
): Promise<Result<StateError, T>> {
  const grant = grantOf(lease);
  return db.transaction(async (tx): Promise<Result<StateError, T>> => {
    const held = await tx.query(
      'SELECT 1 FROM crust_file_leases WHERE path = $1::text AND token = $2::int8 AND expires_at > now() FOR SHARE',
      [grant.path, grant.token],
    );
    if (held.rows.length === 0) return err({ _tag: 'FileLeaseLost', path: grant.path, presentedToken: grant.token });
    return ok(await work(tx));
  });
}
