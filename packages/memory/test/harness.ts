/**
 * The two engines the memory suite runs on, each one per test file: an
 * in-memory PGlite with pgvector and pg_trgm loaded, and a throwaway
 * PostgreSQL cluster (Debian's, which has pg_trgm but no pgvector). Each test
 * works in its own schema.
 */
import { type Db, openPostgresDb, PgliteInstance } from '@crustcore/state';
import { startThrowawayCluster, type ThrowawayCluster } from '@crustcore/state/testing';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { type Clock, MemoryStore } from '../src/index.js';

export interface MemoryHarness {
  readonly name: 'pglite' | 'postgres';
  setup(): Promise<void>;
  teardown(): Promise<void>;
  open(schema: string): Promise<Db>;
}

export class PgliteMemoryHarness implements MemoryHarness {
  readonly name = 'pglite' as const;
  #instance: PgliteInstance | null = null;

  async setup(): Promise<void> {
    const opened = await PgliteInstance.open({ relaxedDurability: true, extensions: { vector, pg_trgm } });
    if (opened._tag === 'Left') throw new Error(opened.left.reason);
    this.#instance = opened.right;
  }

  async teardown(): Promise<void> {
    await this.#instance?.close();
  }

  async open(schema: string): Promise<Db> {
    if (this.#instance === null) throw new Error('not set up');
    const view = this.#instance.view(schema);
    if (view._tag === 'Left') throw new Error(view.left.reason);
    return view.right;
  }
}

export class PostgresMemoryHarness implements MemoryHarness {
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

  async open(schema: string): Promise<Db> {
    const opened = openPostgresDb({ databaseUrl: this.databaseUrl, schema, maxConnections: 2 });
    if (opened._tag === 'Left') throw new Error(opened.left.reason);
    this.#opened.push(opened.right);
    return opened.right;
  }
}

/** A clock the test moves by hand. */
export class ManualClock {
  nowMs: number;
  constructor(startMs: number) {
    this.nowMs = startMs;
  }
  readonly clock: Clock = () => this.nowMs;
  advanceDays(days: number): void {
    this.nowMs += days * 86_400_000;
  }
}

export const T0 = Date.UTC(2026, 0, 1);

let schemas = 0;
export async function openStore(harness: MemoryHarness, clock: ManualClock): Promise<MemoryStore> {
  schemas += 1;
  return MemoryStore.open(await harness.open(`mem_${harness.name}_${schemas}`), { clock: clock.clock });
}

export function right<E, A>(result: { _tag: 'Left'; left: E } | { _tag: 'Right'; right: A }): A {
  if (result._tag === 'Left') throw new Error(`expected Right, got ${JSON.stringify(result.left)}`);
  return result.right;
}
