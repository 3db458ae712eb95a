/**
 * The two engines the same suite runs on. Each test group works in its own
 * schema, so groups never see each other's rows while sharing one PGlite
 * instance (heavy) or one throwaway PostgreSQL cluster per test file.
 */
import { type Db, type DbEngine, migrate, openPostgresDb, PgliteInstance } from '../src/index.js';
import { startThrowawayCluster, type ThrowawayCluster } from './pg-cluster.js';
import type { spawnWorker } from './worker-process.js';

export interface EngineHarness {
  readonly name: DbEngine;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A Db on `schema` (created by migrate). On PostgreSQL a pool of `maxConnections`. */
  open(schema: string, maxConnections?: number): Promise<Db>;
  /** `count` claimers that compete: separate connections on PostgreSQL, concurrent callers of the one PGlite. */
  competitors(schema: string, count: number): Promise<Db[]>;
  /** How a worker process reaches the database. */
  workerConnection(schema: string, db: Db): Parameters<typeof spawnWorker>[0];
}

export async function openMigrated(engine: EngineHarness, schema: string, maxConnections?: number): Promise<Db> {
  const db = await engine.open(schema, maxConnections);
  const migrated = await migrate(db);
  if (migrated._tag === 'Left') throw new Error(`migration failed: ${migrated.left._tag}`);
  return db;
}

/** One in-memory PGlite instance for the whole test file (PGlite costs seconds and hundreds of MB to start). */
export class PgliteHarness implements EngineHarness {
  readonly name = 'pglite' as const;
  #instance: PgliteInstance | null = null;

  get instance(): PgliteInstance {
    if (this.#instance === null) throw new Error('not set up');
    return this.#instance;
  }

  async setup(): Promise<void> {
    const opened = await PgliteInstance.open({ relaxedDurability: true });
    if (opened._tag === 'Left') throw new Error(opened.left.reason);
    this.#instance = opened.right;
  }

  async teardown(): Promise<void> {
    await this.#instance?.close();
  }

  async open(schema: string): Promise<Db> {
    const view = this.instance.view(schema);
    if (view._tag === 'Left') throw new Error(view.left.reason);
    return view.right;
  }

  async competitors(schema: string, count: number): Promise<Db[]> {
    return Promise.all(Array.from({ length: count }, () => this.open(schema)));
  }

  workerConnection(_schema: string, db: Db): Parameters<typeof spawnWorker>[0] {
    return { kind: 'broker', db };
  }
}

export class PostgresHarness implements EngineHarness {
  readonly name = 'postgres' as const;
  #cluster: ThrowawayCluster | null = null;
  readonly #opened: Db[] = [];

  get databaseUrl(): string {
    if (this.#cluster === null) throw new Error('not set up');
    return this.#cluster.databaseUrl;
  }

  async setup(): Promise<void> {
    this.#cluster = await startThrowawayCluster();
  }

  async teardown(): Promise<void> {
    await Promise.all(this.#opened.map((db) => db.close()));
    await this.#cluster?.stop();
  }

  async open(schema: string, maxConnections = 4): Promise<Db> {
    const opened = openPostgresDb({ databaseUrl: this.databaseUrl, schema, maxConnections });
    if (opened._tag === 'Left') throw new Error(opened.left.reason);
    this.#opened.push(opened.right);
    return opened.right;
  }

  async competitors(schema: string, count: number): Promise<Db[]> {
    return Promise.all(Array.from({ length: count }, () => this.open(schema, 1)));
  }

  workerConnection(schema: string): Parameters<typeof spawnWorker>[0] {
    return { kind: 'direct', databaseUrl: this.databaseUrl, schema };
  }
}
