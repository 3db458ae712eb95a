/**
 * The memory tables, in the state plane's schema, with their own migration
 * record (`crust_memory_migrations`) so the state package's numbered
 * migrations and these never collide.
 *
 * Two optional features sit on top of the portable table, each applied when
 * the database can have it: `trgm` (pg_trgm GIN index for the lexical
 * channel) and `vector` (pgvector: a `vector(N)` column beside the portable
 * `real[]` one, with an HNSW index). PGlite loads both. Debian's PostgreSQL
 * has pg_trgm but no pgvector package: there the feature is left out, the
 * store says so in `capabilities.note`, and semantic search scans the
 * `real[]` column in process instead. A feature added later (the extension
 * was installed) backfills the column on the next open.
 */
import { sha256Hex } from '@crustcore/kernel';
import type { Db, DbExecutor } from '@crustcore/state';

export interface MemoryMigration {
  readonly id: string;
  readonly statements: readonly string[];
}

const ADVISORY_KEY = `hashtext('crustcore.memory.migrate')`;

export const BASE_MIGRATION: MemoryMigration = {
  id: '001-memories',
  statements: [
    `CREATE TABLE crust_memories (
       id text PRIMARY KEY CHECK (id ~ '^m_[0-9a-f]{16}$'),
       repo_id text NOT NULL CHECK (char_length(repo_id) BETWEEN 1 AND 200),
       kind text NOT NULL CHECK (kind IN ('failure', 'convention', 'decision', 'nugget')),
       body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 2000),
       detail jsonb NOT NULL CHECK (octet_length(detail::text) <= 16384),
       source text NOT NULL CHECK (source IN ('person', 'verifier')),
       created_at_ms bigint NOT NULL CHECK (created_at_ms >= 0),
       embedder text NOT NULL CHECK (char_length(embedder) BETWEEN 1 AND 100),
       embedding real[] NOT NULL CHECK (cardinality(embedding) BETWEEN 1 AND 4096)
     )`,
    'CREATE INDEX crust_memories_repo_recent ON crust_memories (repo_id, created_at_ms DESC)',
  ],
};

/** Extension objects are schema-qualified: the state schema's search_path does not list the extension's schema. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export const trigramMigration = (ns: string): MemoryMigration => ({
  id: '002-trgm',
  statements: [`CREATE INDEX crust_memories_body_trgm ON crust_memories USING gin (lower(body) "${ns}".gin_trgm_ops)`],
});

export const vectorMigration = (ns: string, dimensions: number): MemoryMigration => ({
  id: `003-vector-${dimensions}`,
  statements: [
    `ALTER TABLE crust_memories ADD COLUMN embedding_vec "${ns}".vector(${dimensions})`,
    `UPDATE crust_memories SET embedding_vec = embedding::"${ns}".vector WHERE cardinality(embedding) = ${dimensions}`,
    `CREATE INDEX crust_memories_embedding_hnsw ON crust_memories USING hnsw (embedding_vec "${ns}".vector_cosine_ops)`,
  ],
});

/** What `crust_memory_migrations` records for `migration`: a changed statement is another migration. */
export const migrationChecksum = (migration: MemoryMigration): string =>
  sha256Hex(`${migration.id}\n${migration.statements.join('\n;\n')}`);

/** Applies `migration` once (serialized across processes by an advisory lock); true when this call applied it. */
export async function applyMemoryMigration(db: Db, migration: MemoryMigration): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(${ADVISORY_KEY})`);
    // The state schema may not exist yet: the memory store does not need the state migrations to have run.
    await tx.query(`CREATE SCHEMA IF NOT EXISTS "${db.schema}"`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS crust_memory_migrations (
         id text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = await tx.query<{ checksum: string }>(
      'SELECT checksum FROM crust_memory_migrations WHERE id = $1::text',
      [migration.id],
    );
    if (done.rows.length > 0) {
      if (done.rows[0]?.checksum !== migrationChecksum(migration))
        throw new Error(`memory migration ${migration.id} was recorded with another checksum`);
      return false;
    }
    for (const statement of migration.statements) await tx.query(statement);
    await tx.query('INSERT INTO crust_memory_migrations (id, checksum) VALUES ($1::text, $2::text)', [
      migration.id,
      migrationChecksum(migration),
    ]);
    return true;
  });
}

/**
 * Whether this schema has the migration record yet (null when not: a new store), and the schemas of
 * the two extensions where installed. Catalog reads only: no transaction, no lock.
 */
export async function installedFeatures(
  db: DbExecutor,
): Promise<{ readonly trigramNs: string | null; readonly vectorNs: string | null } | null> {
  const recorded = await db.query<{ recorded: boolean }>(
    `SELECT to_regclass('crust_memory_migrations') IS NOT NULL AS recorded`,
  );
  if (recorded.rows[0]?.recorded !== true) return null;
  return { trigramNs: await extensionSchema(db, 'pg_trgm'), vectorNs: await extensionSchema(db, 'vector') };
}

/** The schema holding an installed extension, or null when it is not installed in this database. */
export async function extensionSchema(db: DbExecutor, name: string): Promise<string | null> {
  const found = await db.query<{ ns: string }>(
    `SELECT n.nspname AS ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1::text`,
    [name],
  );
  const ns = found.rows[0]?.ns ?? null;
  return ns !== null && SCHEMA_NAME.test(ns) ? ns : null;
}

/**
 * Installs `name` when the server offers it and this role may; returns its schema, or the reason it is
 * missing. `CREATE EXTENSION` runs in its own transaction so a refusal leaves nothing half done.
 */
export async function ensureExtension(
  db: Db,
  name: 'vector' | 'pg_trgm',
): Promise<{ ns: string } | { missing: string }> {
  const present = await extensionSchema(db, name);
  if (present !== null) return { ns: present };
  const offered = await db.query('SELECT 1 FROM pg_available_extensions WHERE name = $1::text', [name]);
  if (offered.rows.length === 0) return { missing: `the server offers no ${name} extension` };
  try {
    await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(${ADVISORY_KEY})`);
      // The state schema is the first on the search_path, so the extension's objects land there.
      await tx.query(`CREATE EXTENSION IF NOT EXISTS ${name === 'vector' ? 'vector' : 'pg_trgm'}`);
    });
  } catch (error) {
    return { missing: `CREATE EXTENSION ${name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const created = await extensionSchema(db, name);
  return created === null ? { missing: `${name} was created in a schema CrustCore cannot name` } : { ns: created };
}
