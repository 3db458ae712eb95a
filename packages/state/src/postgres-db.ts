/**
 * `Db` over a PostgreSQL server through the `postgres` (porsager) driver.
 * Many processes and hosts may share one database; row locks and SKIP LOCKED
 * keep them apart. Every connection's search_path is the state schema.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import postgres from 'postgres';
import { type Db, type DbExecutor, type DbParam, type DbQueryResult, DEFAULT_SCHEMA, isSchemaName } from './db.js';
import { type InvalidInput, invalidInput } from './errors.js';

export interface PostgresDbOptions {
  readonly databaseUrl: string;
  readonly schema?: string;
  /** Pool size. One worker process usually needs 1–4. */
  readonly maxConnections?: number;
  readonly connectTimeoutMs?: number;
  /** Close idle connections after this long. */
  readonly idleTimeoutMs?: number;
}

type Sql = postgres.Sql<Record<string, never>>;
type Queryable = Pick<Sql, 'unsafe'>;

async function run<Row>(sql: Queryable, text: string, params: readonly DbParam[]): Promise<DbQueryResult<Row>> {
  // Prepared statements: the state plane runs a small fixed set of statements many times.
  const result = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true });
  const rows = Array.from(result) as unknown as Row[];
  return { rows, rowCount: result.count ?? rows.length };
}

class PostgresDb implements Db {
  readonly engine = 'postgres' as const;
  readonly schema: string;
  readonly #sql: Sql;

  constructor(sql: Sql, schema: string) {
    this.#sql = sql;
    this.schema = schema;
  }

  query<Row = Record<string, unknown>>(text: string, params: readonly DbParam[] = []): Promise<DbQueryResult<Row>> {
    return run<Row>(this.#sql, text, params);
  }

  async transaction<T>(work: (tx: DbExecutor) => Promise<T>): Promise<T> {
    const result = await this.#sql.begin(async (tx) => {
      const executor: DbExecutor = {
        query: <Row>(text: string, params: readonly DbParam[] = []) => run<Row>(tx, text, params),
      };
      // Wrapped so the driver does not treat an array result as a list of queries.
      return { value: await work(executor) };
    });
    return (result as { value: T }).value;
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}

/** Opens a pool lazily: connection errors surface on the first query. */
export function openPostgresDb(options: PostgresDbOptions): Result<InvalidInput, Db> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  if (!isSchemaName(schema)) return err(invalidInput('schema', 'expected [a-z_][a-z0-9_]{0,47}'));
  const maxConnections = options.maxConnections ?? 4;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1 || maxConnections > 100) {
    return err(invalidInput('maxConnections', 'expected 1..100'));
  }
  const sql = postgres(options.databaseUrl, {
    max: maxConnections,
    connect_timeout: Math.ceil((options.connectTimeoutMs ?? 10_000) / 1000),
    idle_timeout: Math.ceil((options.idleTimeoutMs ?? 30_000) / 1000),
    onnotice: () => {},
    connection: { search_path: schema, application_name: 'crustcore-state' },
  }) as unknown as Sql;
  return ok(new PostgresDb(sql, schema));
}
