/**
 * The one database interface every state module is written against. Two
 * engines implement it: embedded PGlite (one process, one connection) and a
 * PostgreSQL server (many processes and hosts). Logic is written once, in SQL
 * that both engines run unchanged.
 *
 * Parameters are plain text, numbers, booleans, bytes or null. SQL casts every
 * parameter explicitly (`$1::text`, `($2::text)::jsonb`, `$3::int8`) so both
 * drivers send the same bytes: the two infer parameter types differently.
 */

/** A value bound to a `$n` placeholder. bigint travels as decimal text. */
export type DbParam = string | number | boolean | Uint8Array | null;

export interface DbQueryResult<Row> {
  readonly rows: readonly Row[];
  /** Rows affected by INSERT/UPDATE/DELETE, or returned by SELECT. */
  readonly rowCount: number;
}

/** Runs statements; inside a transaction every statement joins it. */
export interface DbExecutor {
  query<Row = Record<string, unknown>>(text: string, params?: readonly DbParam[]): Promise<DbQueryResult<Row>>;
}

export type DbEngine = 'pglite' | 'postgres';

export interface Db extends DbExecutor {
  readonly engine: DbEngine;
  /** The schema every unqualified name resolves in. */
  readonly schema: string;
  /**
   * Runs `work` in one transaction (READ COMMITTED): committed when it
   * resolves, rolled back when it throws. Take row locks with
   * `SELECT … FOR UPDATE` through `tx`. Never call the outer `Db` from inside:
   * on PGlite that waits for the transaction that is waiting for it.
   */
  transaction<T>(work: (tx: DbExecutor) => Promise<T>): Promise<T>;
  /** Releases the connection(s); an owned PGlite instance is closed and its lock dropped. */
  close(): Promise<void>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/** Schema names are interpolated as identifiers, so only a safe shape is accepted. */
export const isSchemaName = (name: string): boolean => SCHEMA_NAME.test(name);

export const DEFAULT_SCHEMA = 'crustcore';
