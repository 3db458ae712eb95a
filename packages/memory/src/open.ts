/**
 * Opening a memory store on the state plane: embedded PGlite (with pgvector
 * and pg_trgm loaded) by default, PostgreSQL when a URL is given. The state
 * package's own migrations are not needed for memory and are not run here.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { Db } from '@crustcore/state';
import type { Embedder } from './embedder.js';
import type { MemoryStoreUnavailable } from './errors.js';
import type { Clock } from './ranking.js';
import { MemoryStore } from './store.js';

export interface OpenMemoryOptions {
  readonly clock: Clock;
  /** PostgreSQL server; when absent, embedded PGlite. */
  readonly databaseUrl?: string;
  /** PGlite data directory (locked against a second opener); in memory when absent. */
  readonly dataDir?: string;
  readonly relaxedDurability?: boolean;
  readonly schema?: string;
  readonly embedder?: Embedder;
}

export interface OpenedMemory {
  readonly store: MemoryStore;
  /** Close it when done: an open PGlite keeps the process alive. */
  readonly db: Db;
}

async function pgliteExtensions(): Promise<
  NonNullable<Parameters<typeof import('@crustcore/state')['openStateDb']>[0]>['extensions']
> {
  const [{ vector }, { pg_trgm }] = await Promise.all([
    import('@electric-sql/pglite-pgvector'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
  ]);
  return { vector, pg_trgm };
}

export async function openMemoryStore(
  options: OpenMemoryOptions,
): Promise<Result<MemoryStoreUnavailable, OpenedMemory>> {
  const { openStateDb } = await import('@crustcore/state');
  const common = {
    migrate: false,
    ...(options.schema === undefined ? {} : { schema: options.schema }),
  };
  const opened =
    options.databaseUrl !== undefined
      ? await openStateDb({ ...common, databaseUrl: options.databaseUrl, maxConnections: 2 })
      : await openStateDb({
          ...common,
          extensions: await pgliteExtensions(),
          ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
          ...(options.relaxedDurability === undefined ? {} : { relaxedDurability: options.relaxedDurability }),
        });
  if (opened._tag === 'Left') {
    const e = opened.left;
    const reason =
      e._tag === 'DataDirLocked'
        ? `${e.dataDir} is in use by pid ${e.holderPid} on ${e.holderHost}; wait for it to finish, or use --database-url`
        : JSON.stringify(e);
    return err({ _tag: 'MemoryStoreUnavailable', reason });
  }
  const db = opened.right;
  try {
    const store = await MemoryStore.open(db, {
      clock: options.clock,
      ...(options.embedder === undefined ? {} : { embedder: options.embedder }),
    });
    return ok({ store, db });
  } catch (error) {
    await db.close();
    throw error;
  }
}
