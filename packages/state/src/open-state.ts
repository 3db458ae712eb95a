/**
 * Opens the state database and brings its schema up to date. Embedded PGlite
 * is the default (one process; give `dataDir` to persist, omit it for memory);
 * `databaseUrl` selects a PostgreSQL server shared by several processes.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { Db } from './db.js';
import { type DataDirLocked, type InvalidInput, invalidInput } from './errors.js';
import { type MigrationError, migrate } from './migrations/migrate.js';
import { PgliteInstance, type PgliteOptions } from './pglite-db.js';
import { openPostgresDb } from './postgres-db.js';

export interface OpenStateOptions {
  /** PostgreSQL server URL; when absent, embedded PGlite is used. */
  readonly databaseUrl?: string;
  /** PGlite data directory (guarded against a second opener); memory when absent. */
  readonly dataDir?: string;
  /** PGlite: start from a `PgliteInstance.dumpSnapshot()` tarball. */
  readonly loadSnapshot?: Blob;
  /** PGlite: skip per-statement flushes (tests, benches). */
  readonly relaxedDurability?: boolean;
  /** PGlite: extensions to load at start (a PostgreSQL server has its own). */
  readonly extensions?: PgliteOptions['extensions'];
  /** Schema holding the state tables; default `crustcore`. */
  readonly schema?: string;
  /** PostgreSQL pool size; default 4. */
  readonly maxConnections?: number;
  /** Run migrations on open; default true. */
  readonly migrate?: boolean;
}

export type OpenStateError = DataDirLocked | InvalidInput | MigrationError;

export async function openStateDb(options: OpenStateOptions = {}): Promise<Result<OpenStateError, Db>> {
  if (options.databaseUrl !== undefined && (options.dataDir !== undefined || options.loadSnapshot !== undefined)) {
    return err(invalidInput('databaseUrl', 'give either databaseUrl or PGlite options, not both'));
  }
  let db: Db;
  if (options.databaseUrl !== undefined) {
    const opened = openPostgresDb({
      databaseUrl: options.databaseUrl,
      ...(options.schema === undefined ? {} : { schema: options.schema }),
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    });
    if (opened._tag === 'Left') return opened;
    db = opened.right;
  } else {
    const opened = await PgliteInstance.open({
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
      ...(options.loadSnapshot === undefined ? {} : { loadSnapshot: options.loadSnapshot }),
      ...(options.relaxedDurability === undefined ? {} : { relaxedDurability: options.relaxedDurability }),
      ...(options.extensions === undefined ? {} : { extensions: options.extensions }),
    });
    if (opened._tag === 'Left') return opened;
    const view = opened.right.owningView(options.schema);
    if (view._tag === 'Left') {
      await opened.right.close();
      return view;
    }
    db = view.right;
  }
  if (options.migrate === false) return ok(db);
  try {
    const migrated = await migrate(db);
    if (migrated._tag === 'Left') {
      await db.close();
      return migrated;
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  return ok(db);
}
