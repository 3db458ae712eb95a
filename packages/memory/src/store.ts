/**
 * The memory store over the state plane's `Db` (PGlite or PostgreSQL).
 * Writes are validated values; reads rank by the two channels of ranking.ts
 * with the injected clock. Which channels run in the database depends on the
 * capabilities found at open (see schema.ts): without pgvector, semantic
 * search scans this repository's embeddings in process.
 */
import { err, ok, type Result, sha256Hex } from '@crustcore/kernel';
import type { Db } from '@crustcore/state';
import { DEFAULT_DIMENSIONS, type Embedder, HashingEmbedder } from './embedder.js';
import { type MemoryInvalid, type MemoryNotFound, memoryInvalid } from './errors.js';
import { type Clock, type RankedMemory, rankCandidates } from './ranking.js';
import { MEMORY_COLUMNS, type MemoryRow, memoryFromRow, realArrayLiteral, textArrayLiteral } from './rows.js';
import {
  applyMemoryMigration,
  BASE_MIGRATION,
  ensureExtension,
  installedFeatures,
  migrationChecksum,
  trigramMigration,
  vectorMigration,
} from './schema.js';
import { type Capabilities, lexicalCandidates, semanticCandidates, semanticPlan } from './search.js';
import { MEMORY_KINDS, type Memory, type MemoryKind, type NewMemory } from './types.js';
import { validateNewMemory, validateRepoId } from './validate.js';

export interface MemoryStoreOptions {
  readonly clock: Clock;
  readonly embedder?: Embedder;
}

export interface SearchOptions {
  readonly limit?: number;
  readonly kinds?: readonly MemoryKind[];
}

export interface ListOptions {
  readonly limit?: number;
  readonly kind?: MemoryKind;
}

export const MAX_RESULTS = 100;

const memoryId = (repoId: string, kind: string, body: string): string =>
  `m_${sha256Hex(`${repoId}\n${kind}\n${body}`).slice(0, 16)}`;

/**
 * The open of a store that is already complete — both extensions installed and every migration they
 * call for recorded with the checksum this build would record — in two catalog reads, no transaction
 * and no lock. Anything else (a new store, a missing extension, another checksum) returns null and
 * takes the full path below, which creates, records, or refuses.
 */
async function completeCapabilities(db: Db, embedder: Embedder): Promise<Capabilities | null> {
  const found = await installedFeatures(db);
  if (found === null || found.trigramNs === null || found.vectorNs === null) return null;
  const wanted = [
    BASE_MIGRATION,
    trigramMigration(found.trigramNs),
    vectorMigration(found.vectorNs, embedder.dimensions),
  ];
  const recorded = await db.query<{ id: string; checksum: string }>(
    'SELECT id, checksum FROM crust_memory_migrations WHERE id = ANY(($1::text)::text[])',
    [textArrayLiteral(wanted.map((m) => m.id))],
  );
  const checksums = new Map(recorded.rows.map((row) => [row.id, row.checksum]));
  const complete = wanted.every((m) => checksums.get(m.id) === migrationChecksum(m));
  return complete ? { trigramNs: found.trigramNs, vectorNs: found.vectorNs, notes: [] } : null;
}

async function detectCapabilities(db: Db, embedder: Embedder): Promise<Capabilities> {
  const notes: string[] = [];
  const trgm = await ensureExtension(db, 'pg_trgm');
  let trigramNs: string | null = null;
  if ('ns' in trgm) {
    await applyMemoryMigration(db, trigramMigration(trgm.ns));
    trigramNs = trgm.ns;
  } else notes.push(`lexical search matches substrings without an index (${trgm.missing})`);
  let vectorNs: string | null = null;
  const vector = await ensureExtension(db, 'vector');
  if (!('ns' in vector)) {
    notes.push(`no pgvector here (${vector.missing}): semantic search compares embeddings in process`);
  } else if (embedder.dimensions !== DEFAULT_DIMENSIONS && !(await hasVectorFeature(db, embedder.dimensions))) {
    notes.push(
      `the pgvector column has ${DEFAULT_DIMENSIONS} dimensions, this embedder ${embedder.dimensions}: in process`,
    );
  } else {
    await applyMemoryMigration(db, vectorMigration(vector.ns, embedder.dimensions));
    vectorNs = vector.ns;
  }
  return { trigramNs, vectorNs, notes };
}

async function hasVectorFeature(db: Db, dimensions: number): Promise<boolean> {
  const found = await db.query('SELECT 1 FROM crust_memory_migrations WHERE id = $1::text', [
    `003-vector-${dimensions}`,
  ]);
  return found.rows.length > 0;
}

export class MemoryStore {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly embedder: Embedder;
  readonly capabilities: Capabilities;

  private constructor(db: Db, clock: Clock, embedder: Embedder, capabilities: Capabilities) {
    this.#db = db;
    this.#clock = clock;
    this.embedder = embedder;
    this.capabilities = capabilities;
  }

  /** Creates the tables (once) and finds which search features this database has. */
  static async open(db: Db, options: MemoryStoreOptions): Promise<MemoryStore> {
    const embedder = options.embedder ?? new HashingEmbedder();
    const complete = await completeCapabilities(db, embedder);
    if (complete !== null) return new MemoryStore(db, options.clock, embedder, complete);
    await applyMemoryMigration(db, BASE_MIGRATION);
    return new MemoryStore(db, options.clock, embedder, await detectCapabilities(db, embedder));
  }

  get engine(): Db['engine'] {
    return this.#db.engine;
  }

  /** Adds a memory; the same repository, kind and text again refreshes it (its age restarts, a new fix replaces the old). */
  async add(repoId: string, input: NewMemory): Promise<Result<MemoryInvalid, { memory: Memory; created: boolean }>> {
    const repo = validateRepoId(repoId);
    if (repo._tag === 'Left') return repo;
    const clean = validateNewMemory(input);
    if (clean._tag === 'Left') return clean;
    const m = clean.right;
    const id = memoryId(repoId, m.kind, m.body);
    const vector = this.embedder.embed(`${m.body}\n${m.fix ?? ''}\n${m.tags.join(' ')}`);
    const detail = JSON.stringify({ fix: m.fix, tags: m.tags, taskId: m.taskId });
    const withVector = this.capabilities.vectorNs !== null;
    const result = await this.#db.query<MemoryRow & { inserted: boolean }>(
      `INSERT INTO crust_memories AS m (id, repo_id, kind, body, detail, source, created_at_ms, embedder, embedding${withVector ? ', embedding_vec' : ''})
       VALUES ($1::text, $2::text, $3::text, $4::text, ($5::text)::jsonb, $6::text, $7::int8, $8::text, ($9::text)::real[]${withVector ? `, ($9::text)::real[]::"${this.capabilities.vectorNs}".vector` : ''})
       ON CONFLICT (id) DO UPDATE SET
         created_at_ms = GREATEST(m.created_at_ms, EXCLUDED.created_at_ms),
         detail = CASE WHEN EXCLUDED.detail->>'fix' IS NULL THEN m.detail ELSE EXCLUDED.detail END
       RETURNING ${MEMORY_COLUMNS}, (xmax = 0) AS inserted`,
      [
        id,
        repoId,
        m.kind,
        m.body,
        detail,
        m.source,
        Math.trunc(this.#clock()),
        this.embedder.id,
        realArrayLiteral(vector),
      ],
    );
    const row = result.rows[0];
    if (row === undefined) throw new Error('INSERT … RETURNING returned no row');
    return ok({ memory: memoryFromRow(row), created: row.inserted });
  }

  /** Newest first. */
  async list(repoId: string, options: ListOptions = {}): Promise<Memory[]> {
    const limit = Math.min(Math.max(1, options.limit ?? MAX_RESULTS), 10_000);
    const kinds = options.kind === undefined ? MEMORY_KINDS : [options.kind];
    const result = await this.#db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM crust_memories m WHERE m.repo_id = $1::text AND m.kind = ANY(($2::text)::text[])
       ORDER BY m.created_at_ms DESC, m.id LIMIT $3::int4`,
      [repoId, textArrayLiteral(kinds), limit],
    );
    return result.rows.map(memoryFromRow);
  }

  /** Removes one memory by its id or an unambiguous prefix of it (at least `m_` + 4 digits). */
  async forget(repoId: string, idOrPrefix: string): Promise<Result<MemoryInvalid | MemoryNotFound, Memory>> {
    if (!/^m_[0-9a-f]{4,16}$/.test(idOrPrefix)) return err(memoryInvalid('id', 'expected m_ and 4–16 hex digits'));
    return this.#db.transaction(async (tx) => {
      const found = await tx.query<MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM crust_memories m WHERE m.repo_id = $1::text AND m.id LIKE $2::text || '%' LIMIT 2 FOR UPDATE`,
        [repoId, idOrPrefix],
      );
      const [first, second] = found.rows;
      if (first === undefined) return err({ _tag: 'MemoryNotFound', id: idOrPrefix, reason: 'absent' } as const);
      if (second !== undefined) return err({ _tag: 'MemoryNotFound', id: idOrPrefix, reason: 'ambiguous' } as const);
      await tx.query('DELETE FROM crust_memories WHERE id = $1::text', [first.id]);
      return ok(memoryFromRow(first));
    });
  }

  /** The memories most related to `query`, semantic and lexical channels fused, decayed by age. */
  async search(repoId: string, query: string, options: SearchOptions = {}): Promise<RankedMemory[]> {
    const limit = Math.min(Math.max(1, options.limit ?? 10), MAX_RESULTS);
    const kinds = options.kinds ?? MEMORY_KINDS;
    const now = this.#clock();
    // A wider pool than asked for: decay re-orders within it.
    const pool = Math.max(64, limit * 8);
    const scope = { repoId, kinds, pool, embedderId: this.embedder.id };
    const vector = this.embedder.embed(query);
    const [semantic, lexical] = [
      await semanticCandidates(this.#db, this.capabilities, scope, vector),
      await lexicalCandidates(this.#db, this.capabilities, scope, query),
    ];
    const byId = new Map<string, { memory: Memory; semantic: number | null; lexical: number | null }>();
    for (const hit of semantic)
      byId.set(hit.memory.id, { memory: hit.memory, semantic: hit.similarity, lexical: null });
    for (const hit of lexical) {
      const known = byId.get(hit.memory.id);
      if (known === undefined) byId.set(hit.memory.id, { memory: hit.memory, semantic: null, lexical: hit.similarity });
      else known.lexical = hit.similarity;
    }
    return rankCandidates([...byId.values()], now, limit);
  }

  /** The plan of the semantic query (tests check the HNSW index serves it). */
  explainSemantic(repoId: string, query: string): Promise<string[]> {
    const scope = { repoId, kinds: MEMORY_KINDS, pool: 64, embedderId: this.embedder.id };
    return semanticPlan(this.#db, this.capabilities, scope, this.embedder.embed(query));
  }
}
