/**
 * Repository memory (issue 15, item 2): query p50 at 10,000 memories, on
 * embedded PGlite (pgvector HNSW + pg_trgm) and on a throwaway PostgreSQL 15
 * cluster (Debian: pg_trgm, no pgvector, so semantic search scans the
 * embeddings in process). Each engine reports against baselines measured in
 * the same run on the same database:
 *
 * - `SELECT 1`: one round trip, the floor of any query;
 * - an in-process full scan: every embedding of the repository read out and
 *   compared in JavaScript (what a store without any index would do).
 *
 * The 10,000 memories are synthetic (a fixed-seed generator of words and
 * identifiers), inserted through `MemoryStore.add` — also reported.
 *
 * Run: node --conditions=source --import tsx benches/memory.bench.ts
 */
import { cosine, HashingEmbedder, type MemoryStore, openMemoryStore } from '@crustcore/memory';
import type { Db } from '@crustcore/state';
import { startThrowawayCluster } from '@crustcore/state/testing';
import { type BenchRow, ratio, runCases } from './harness.js';

const COUNT = 10_000;
const REPO = 'bench-repo';
const NOW = Date.UTC(2026, 5, 1);
const DAY = 86_400_000;

const WORDS =
  'test build config cache token lease journal flush patch verify sandbox worker policy approval vault secret module import export alias workspace resolver migration schema index vector ranking memory failure timeout network process signal stream parser'.split(
    ' ',
  );

/** A small fixed-seed PRNG (mulberry32): the same 10,000 memories every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function syntheticBody(random: () => number, i: number): string {
  const words = Array.from({ length: 8 + Math.floor(random() * 12) }, () => WORDS[Math.floor(random() * WORDS.length)]);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)] ?? 'x';
  const identifier = `${pick()}${pick().replace(/^./, (c) => c.toUpperCase())}${i}`;
  return `${words.join(' ')} (see ${identifier})`;
}

/** The stores' clock: memories are added over the year before NOW, queries run at NOW. */
let clockMs = NOW;

async function fill(store: MemoryStore): Promise<number> {
  const random = prng(15);
  clockMs = NOW - 365 * DAY;
  const started = performance.now();
  for (let i = 0; i < COUNT; i += 1) {
    const kind = i % 10 === 0 ? 'failure' : i % 3 === 0 ? 'convention' : 'nugget';
    const added = await store.add(REPO, { kind, body: syntheticBody(random, i), source: 'person' });
    if (added._tag === 'Left') throw new Error(JSON.stringify(added.left));
    clockMs += (365 * DAY) / COUNT;
  }
  clockMs = NOW;
  return performance.now() - started;
}

async function engineCases(label: string, store: MemoryStore, db: Db): Promise<void> {
  const addMs = await fill(store);
  console.log(
    `${label}: ${COUNT} adds in ${(addMs / 1000).toFixed(1)} s (${((addMs * 1000) / COUNT).toFixed(0)} µs each)`,
  );
  await db.query('ANALYZE crust_memories');
  console.log(
    `${label} capabilities: vector=${store.capabilities.vectorNs !== null} trigram=${store.capabilities.trigramNs !== null}`,
  );
  for (const note of store.capabilities.notes) console.log(`  note: ${note}`);
  const plan = await store.explainSemantic(REPO, 'flush the journal before the migration');
  console.log(`${label} semantic plan: ${plan.find((line) => /Scan/.test(line))?.trim() ?? plan[0]}`);
  const embedder = new HashingEmbedder();
  const queries = ['flush the journal before the migration', 'workspaceAlias412', 'sandbox worker timeout signal'];
  let q = 0;
  const rows: BenchRow[] = await runCases(`memory query at ${COUNT} memories (${label})`, [
    { name: `${label}: SELECT 1`, fn: () => db.query('SELECT 1') },
    {
      name: `${label}: in-process full scan`,
      fn: async () => {
        const query = embedder.embed(queries[q++ % queries.length] ?? '');
        const all = await db.query<{ e: string }>(
          'SELECT embedding::text AS e FROM crust_memories WHERE repo_id = $1::text',
          [REPO],
        );
        let best = -1;
        for (const row of all.rows) best = Math.max(best, cosine(query, row.e.slice(1, -1).split(',').map(Number)));
        return best;
      },
    },
    {
      name: `${label}: search (top 10)`,
      fn: () => store.search(REPO, queries[q++ % queries.length] ?? '', { limit: 10 }),
    },
  ]);
  const [select1, scan, search] = rows;
  if (select1 === undefined || scan === undefined || search === undefined) throw new Error('missing rows');
  ratio(`${label} search vs SELECT 1`, search, select1);
  ratio(`${label} search vs in-process full scan`, search, scan, '< 1× (an index beats reading everything)');
}

// `… memory.bench.ts postgres` (or pglite) runs one engine: filling PGlite takes minutes on a loaded machine.
const engines = (process.argv[2] ?? 'pglite,postgres').split(',');

if (engines.includes('pglite')) {
  const pglite = await openMemoryStore({ clock: () => clockMs, relaxedDurability: true });
  if (pglite._tag === 'Left') throw new Error(pglite.left.reason);
  try {
    await engineCases('pglite', pglite.right.store, pglite.right.db);
  } finally {
    await pglite.right.db.close();
  }
}

const cluster = engines.includes('postgres') ? await startThrowawayCluster() : null;
try {
  if (cluster === null) process.exit(0);
  const postgres = await openMemoryStore({ clock: () => clockMs, databaseUrl: cluster.databaseUrl });
  if (postgres._tag === 'Left') throw new Error(postgres.left.reason);
  try {
    await engineCases('postgres', postgres.right.store, postgres.right.db);
  } finally {
    await postgres.right.db.close();
  }
} finally {
  await cluster?.stop();
}
