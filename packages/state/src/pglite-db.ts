/**
 * `Db` over embedded PGlite (PostgreSQL in WASM): the default engine, one
 * process, one connection.
 *
 * PGlite is heavy (seconds to create, hundreds of MB per instance), so it is
 * imported and started only when opened, one instance can serve several
 * schemas through views (tests share one instance per file), and a snapshot
 * (`dumpSnapshot`) restores a migrated database in about a second.
 *
 * All statements of all views go through one FIFO queue here: a view switches
 * the connection's search_path before its statement runs, and the queue keeps
 * another view's statement from slipping in between.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { Extensions, PGlite } from '@electric-sql/pglite';
import { DataDirLock } from './data-dir-lock.js';
import { type Db, type DbExecutor, type DbParam, type DbQueryResult, DEFAULT_SCHEMA, isSchemaName } from './db.js';
import { type DataDirLocked, type InvalidInput, invalidInput } from './errors.js';
import { templateFor, unpackTemplate } from './pglite-template.js';

export interface PgliteOptions {
  /** Directory of the database; omitted means in memory (gone at close). */
  readonly dataDir?: string;
  /** A `dumpSnapshot()` tarball to start from instead of an empty cluster. */
  readonly loadSnapshot?: Blob;
  /** Skip the flush after every statement (tests, benches). */
  readonly relaxedDurability?: boolean;
  /** PGlite extensions to load (e.g. pgvector for `@crustcore/memory`); none by default. */
  readonly extensions?: Extensions;
}

type PgliteClient = Pick<PGlite, 'query'>;

async function run<Row>(client: PgliteClient, text: string, params: readonly DbParam[]): Promise<DbQueryResult<Row>> {
  const result = await client.query<Row>(text, params as DbParam[]);
  return { rows: result.rows, rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length };
}

/**
 * Settings PGlite starts postgres with, on top of its own defaults. A cluster keeps
 * initdb's `shared_buffers = 128MB` and `max_connections = 100` in its postgresql.conf;
 * postgres sets up that shared memory (buffer descriptors, lock and process tables) in
 * WASM on every start, which was about half of a 2.8 s open on this machine. PGlite has
 * one connection, and our databases are a few MB that the OS page cache holds anyway:
 * 8 MB of buffers and 8 connection slots cut an open to about 1.3 s (measured with a
 * reopened cluster; a test pins the settings).
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = { shared_buffers: '8MB', max_connections: '8' };

const startParams = (defaults: readonly string[]): string[] => [
  ...defaults,
  ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
];

const loadFrom = (tarball: Blob | undefined): { loadDataDir?: Blob } =>
  tarball === undefined ? {} : { loadDataDir: tarball };

/** One running PGlite database and the lock on its directory. */
export class PgliteInstance {
  readonly #pg: PGlite;
  readonly #lock: DataDirLock | null;
  #tail: Promise<void> = Promise.resolve();
  #searchPath: string | null = null;
  #closed = false;

  private constructor(pg: PGlite, lock: DataDirLock | null) {
    this.#pg = pg;
    this.#lock = lock;
  }

  /**
   * Takes the directory lock first (failing fast, before PGlite is even
   * loaded), then starts PGlite.
   */
  static async open(options: PgliteOptions = {}): Promise<Result<DataDirLocked, PgliteInstance>> {
    let lock: DataDirLock | null = null;
    if (options.dataDir !== undefined) {
      const acquired = DataDirLock.acquire(options.dataDir);
      if (acquired._tag === 'Left') return acquired;
      lock = acquired.right;
    }
    try {
      // No snapshot given: a new cluster starts from the build's empty-cluster template (no initdb),
      // written into a new directory by Node, or loaded by PGlite when the database lives in memory.
      const start =
        options.loadSnapshot ??
        (options.dataDir !== undefined && unpackTemplate(options.dataDir) ? undefined : templateFor(options.dataDir));
      const { PGlite } = await import('@electric-sql/pglite');
      const pg = await PGlite.create({
        ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
        ...loadFrom(start),
        relaxedDurability: options.relaxedDurability ?? false,
        startParams: startParams(PGlite.defaultStartParams),
        ...(options.extensions === undefined ? {} : { extensions: options.extensions }),
      });
      return ok(new PgliteInstance(pg, lock));
    } catch (error) {
      lock?.release();
      throw error;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs `work` after every earlier queued statement or transaction has finished. */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('PGlite instance is closed'));
    const result = this.#tail.then(work);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  async #useSchema(schema: string): Promise<void> {
    if (this.#searchPath === schema) return;
    await this.#pg.query(`SET search_path TO "${schema}"`);
    this.#searchPath = schema;
  }

  /** Statement on behalf of a view; exported to views only through `view()`. */
  runIn<Row>(schema: string, text: string, params: readonly DbParam[]): Promise<DbQueryResult<Row>> {
    return this.#exclusive(async () => {
      await this.#useSchema(schema);
      return run<Row>(this.#pg, text, params);
    });
  }

  transactionIn<T>(schema: string, work: (tx: DbExecutor) => Promise<T>): Promise<T> {
    return this.#exclusive(async () => {
      // Set outside the transaction: a SET inside one would be undone by a rollback.
      await this.#useSchema(schema);
      return this.#pg.transaction(async (tx) =>
        work({ query: <Row>(text: string, params: readonly DbParam[] = []) => run<Row>(tx, text, params) }),
      );
    });
  }

  /** A `Db` bound to `schema`. Closing a view leaves the instance open. */
  view(schema: string = DEFAULT_SCHEMA): Result<InvalidInput, Db> {
    if (!isSchemaName(schema)) return err(invalidInput('schema', 'expected [a-z_][a-z0-9_]{0,47}'));
    return ok(new PgliteDb(this, schema, false));
  }

  /** A `Db` bound to `schema` whose `close()` closes this instance. */
  owningView(schema: string = DEFAULT_SCHEMA): Result<InvalidInput, Db> {
    if (!isSchemaName(schema)) return err(invalidInput('schema', 'expected [a-z_][a-z0-9_]{0,47}'));
    return ok(new PgliteDb(this, schema, true));
  }

  /** A tarball of the whole cluster, for `loadSnapshot`. */
  dumpSnapshot(): Promise<Blob> {
    return this.#exclusive(() => this.#pg.dumpDataDir('none'));
  }

  /** Waits for queued work, closes PGlite and releases the directory lock. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const drained = this.#tail;
    this.#closed = true;
    await drained;
    try {
      await this.#pg.close();
    } finally {
      this.#lock?.release();
    }
  }
}

class PgliteDb implements Db {
  readonly engine = 'pglite' as const;
  readonly schema: string;
  readonly #instance: PgliteInstance;
  readonly #owns: boolean;

  constructor(instance: PgliteInstance, schema: string, owns: boolean) {
    this.#instance = instance;
    this.schema = schema;
    this.#owns = owns;
  }

  query<Row = Record<string, unknown>>(text: string, params: readonly DbParam[] = []): Promise<DbQueryResult<Row>> {
    return this.#instance.runIn<Row>(this.schema, text, params);
  }

  transaction<T>(work: (tx: DbExecutor) => Promise<T>): Promise<T> {
    return this.#instance.transactionIn(this.schema, work);
  }

  async close(): Promise<void> {
    if (this.#owns) await this.#instance.close();
  }
}
