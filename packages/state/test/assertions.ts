/** Small helpers the suite uses to unwrap results and wait on the database clock. */
import { type JobId, makeId, type Result, type TaskId } from '@crustcore/kernel';
import { expect } from 'vitest';
import { type Db, type StateError, sqlStateOf } from '../src/index.js';

export function right<E, A>(result: Result<E, A>): A {
  if (result._tag === 'Left') throw new Error(`expected Right, got Left ${JSON.stringify(result.left, bigints)}`);
  return result.right;
}

export function left<E extends StateError, A>(result: Result<E, A>, tag: StateError['_tag']): E {
  if (result._tag === 'Right') throw new Error(`expected Left ${tag}, got Right`);
  expect(result.left._tag).toBe(tag);
  return result.left;
}

export const bigints = (_key: string, value: unknown): unknown =>
  typeof value === 'bigint' ? value.toString() : value;

/** Runs raw SQL that the database must refuse with `sqlState`. */
export async function refusedBySql(db: Db, sql: string, params: readonly (string | number | null)[], sqlState: string) {
  let caught: unknown = null;
  try {
    await db.query(sql, params);
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected SQLSTATE ${sqlState} from: ${sql}`).not.toBeNull();
  expect(sqlStateOf(caught)).toBe(sqlState);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `sql` (selecting a boolean `done`) until it is true, on the database's clock (bounded: 10 s). */
export async function waitUntil(db: Db, sql: string, params: readonly string[]): Promise<void> {
  // A handshake on the database's own clock and state; only the test's timeout bounds it, so a
  // loaded machine makes it slower, never wrong.
  for (;;) {
    const result = await db.query<{ done: boolean }>(sql, params);
    if (result.rows[0]?.done === true) return;
    await sleep(25);
  }
}

/** Waits until the job's lease has run out on the database's clock. */
export const waitForLeaseToLapse = (db: Db, jobId: JobId): Promise<void> =>
  waitUntil(db, 'SELECT lease_expires_at <= now() AS done FROM crust_jobs WHERE id = $1::text', [jobId]);

let counter = 0;
const run = Math.random().toString(36).slice(2, 8);
const nextBody = (): string => {
  counter += 1;
  return `${run}-${counter}`;
};
export const taskId = (): TaskId => makeId('TaskId', nextBody());
export const jobId = (): JobId => makeId('JobId', nextBody());
