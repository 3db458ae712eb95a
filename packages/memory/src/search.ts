/**
 * The two retrieval channels, each returning a candidate pool with raw
 * similarities (ranking.ts applies decay and fuses them).
 *
 * Semantic: pgvector's HNSW index when the database has it (cosine distance,
 * iterative scan so the repository/kind filter still fills the pool);
 * otherwise every embedding of this repository is read and compared in
 * process — correct, and linear in the repository's memories.
 *
 * Lexical: the query's distinct words, each matched against the memory text
 * by pg_trgm strict word similarity (GIN index), weighted by how rare the word is in
 * this repository (ln(1 + N/df)), so an exact identifier outweighs "test".
 * Without pg_trgm, a substring match stands in for the similarity.
 */
import type { Db, DbExecutor } from '@crustcore/state';
import { cosine } from './embedder.js';
import {
  MEMORY_COLUMNS,
  type MemoryRow,
  memoryFromRow,
  parseRealArray,
  realArrayLiteral,
  textArrayLiteral,
} from './rows.js';
import { lexicalTerms } from './tokens.js';
import type { Memory, MemoryKind } from './types.js';

export interface Capabilities {
  /** Schema of pg_trgm, null without it. */
  readonly trigramNs: string | null;
  /** Schema of pgvector, null without it (or when the column does not fit the embedder). */
  readonly vectorNs: string | null;
  /** What is missing and what is done instead, for people. */
  readonly notes: readonly string[];
}

export interface Scope {
  readonly repoId: string;
  readonly kinds: readonly MemoryKind[];
  readonly pool: number;
  readonly embedderId: string;
}

export interface Hit {
  readonly memory: Memory;
  readonly similarity: number;
}

/** The in-process scan reads at most this many of a repository's newest memories. */
export const IN_PROCESS_SCAN_LIMIT = 50_000;

const FILTER = 'm.repo_id = $1::text AND m.kind = ANY(($2::text)::text[])';

function vectorQuery(ns: string, explain: boolean): string {
  const distance = `m.embedding_vec OPERATOR("${ns}".<=>) (($3::text)::real[])::"${ns}".vector`;
  // `repo_id || ''` keeps the planner off the (repo, time) index, whose order is useless here: the
  // distance order is what HNSW serves, and pgvector's iterative scan applies the filter as it goes.
  return `${explain ? 'EXPLAIN ' : ''}SELECT ${MEMORY_COLUMNS}, 1 - (${distance}) AS similarity
    FROM crust_memories m WHERE (m.repo_id || '') = $1::text AND m.kind = ANY(($2::text)::text[]) AND m.embedder = $4::text AND m.embedding_vec IS NOT NULL
    ORDER BY ${distance} LIMIT $5::int4`;
}

async function withHnswSettings<T>(db: Db, pool: number, work: (tx: DbExecutor) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    // Filtered HNSW search stops early unless told to keep scanning; ef_search must cover the pool.
    await tx.query(`SET LOCAL hnsw.iterative_scan = 'relaxed_order'`);
    // The planner estimates the filter's rows and then prefers reading the table and sorting them
    // (seen at 10,000 memories); the index with an iterative scan is the plan meant at every size.
    await tx.query('SET LOCAL enable_seqscan = off');
    await tx.query(`SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(40, pool * 2))}`);
    return work(tx);
  });
}

export async function semanticCandidates(
  db: Db,
  capabilities: Capabilities,
  scope: Scope,
  vector: Float32Array,
): Promise<Hit[]> {
  const params = [scope.repoId, textArrayLiteral(scope.kinds), realArrayLiteral(vector), scope.embedderId];
  const ns = capabilities.vectorNs;
  if (ns !== null) {
    const result = await withHnswSettings(db, scope.pool, (tx) =>
      tx.query<MemoryRow & { similarity: number }>(vectorQuery(ns, false), [...params, scope.pool]),
    );
    return result.rows.map((row) => ({ memory: memoryFromRow(row), similarity: Number(row.similarity) }));
  }
  // Only ids and embeddings for the scan; the pool's rows are read afterwards (decoding every row's
  // text and detail would cost as much as the comparison itself).
  const scanned = await db.query<{ id: string; embedding: string }>(
    `SELECT m.id, m.embedding::text AS embedding FROM crust_memories m
     WHERE ${FILTER} AND m.embedder = $3::text ORDER BY m.created_at_ms DESC LIMIT $4::int4`,
    [scope.repoId, textArrayLiteral(scope.kinds), scope.embedderId, IN_PROCESS_SCAN_LIMIT],
  );
  const best = scanned.rows
    .map((row) => ({ id: row.id, similarity: cosine(vector, parseRealArray(row.embedding)) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, scope.pool);
  if (best.length === 0) return [];
  const rows = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM crust_memories m WHERE m.id = ANY(($1::text)::text[])`,
    [textArrayLiteral(best.map((hit) => hit.id))],
  );
  const byId = new Map(rows.rows.map((row) => [row.id, memoryFromRow(row)]));
  return best.flatMap((hit) => {
    const memory = byId.get(hit.id);
    return memory === undefined ? [] : [{ memory, similarity: hit.similarity }];
  });
}

/** EXPLAIN of the pgvector query, under the settings the search itself runs with. */
export async function semanticPlan(
  db: Db,
  capabilities: Capabilities,
  scope: Scope,
  vector: Float32Array,
): Promise<string[]> {
  const ns = capabilities.vectorNs;
  if (ns === null) return ['in-process scan (no pgvector)'];
  const params = [scope.repoId, textArrayLiteral(scope.kinds), realArrayLiteral(vector), scope.embedderId, scope.pool];
  const result = await withHnswSettings(db, scope.pool, (tx) =>
    tx.query<Record<string, string>>(vectorQuery(ns, true), params),
  );
  return result.rows.map((row) => Object.values(row).join(' '));
}

/**
 * Whole-word trigram similarity a term needs to match: admits a typo or a plural of an
 * identifier (≈ 0.7) and refuses words that merely share pieces of it ("journal flush" for
 * flushQz9Journal is ≈ 0.58), which plain word similarity (≈ 0.69) let through.
 */
export const STRICT_WORD_THRESHOLD = 0.65;

function lexicalQuery(ns: string | null): string {
  const matches = ns === null ? 'strpos(lower(m.body), t) > 0' : `t OPERATOR("${ns}".<<%) lower(m.body)`;
  const similarity = ns === null ? '1.0' : `"${ns}".strict_word_similarity(t, lower(m.body))`;
  return `WITH hits AS (
      SELECT m.id, t, ${similarity} AS sim FROM crust_memories m, unnest(($3::text)::text[]) AS t
      WHERE ${FILTER} AND ${matches}),
    df AS (SELECT t, count(*)::float8 AS n FROM hits GROUP BY t),
    total AS (SELECT count(*)::float8 AS n FROM crust_memories m WHERE ${FILTER}),
    scored AS (
      SELECT hits.id, sum(hits.sim * ln(1 + total.n / df.n)) AS similarity
      FROM hits JOIN df USING (t) CROSS JOIN total GROUP BY hits.id)
    SELECT ${MEMORY_COLUMNS}, scored.similarity::float8 AS similarity
    FROM scored JOIN crust_memories m ON m.id = scored.id
    ORDER BY scored.similarity DESC, m.id LIMIT $4::int4`;
}

export async function lexicalCandidates(
  db: Db,
  capabilities: Capabilities,
  scope: Scope,
  query: string,
): Promise<Hit[]> {
  const terms = lexicalTerms(query);
  if (terms.length === 0) return [];
  const params = [scope.repoId, textArrayLiteral(scope.kinds), textArrayLiteral(terms), scope.pool];
  const result = await db.transaction(async (tx) => {
    if (capabilities.trigramNs !== null)
      await tx.query(`SET LOCAL pg_trgm.strict_word_similarity_threshold = ${STRICT_WORD_THRESHOLD}`);
    return tx.query<MemoryRow & { similarity: number }>(lexicalQuery(capabilities.trigramNs), params);
  });
  return result.rows.map((row) => ({ memory: memoryFromRow(row), similarity: Number(row.similarity) }));
}
