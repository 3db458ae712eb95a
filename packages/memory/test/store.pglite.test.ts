/** The memory suite on PGlite with pgvector, and the HNSW index serving semantic search. */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { ManualClock, openStore, PgliteMemoryHarness, right, T0 } from './harness.js';
import { defineMemorySuite } from './suite.js';

const harness = new PgliteMemoryHarness();
defineMemorySuite(harness);

describe('PGlite with pgvector', () => {
  it('has both extensions and answers semantic search from the HNSW index', async () => {
    const store = await openStore(harness, new ManualClock(T0));
    expect(store.capabilities.vectorNs).not.toBeNull();
    expect(store.capabilities.trigramNs).not.toBeNull();
    expect(store.capabilities.notes).toEqual([]);
    for (let i = 0; i < 40; i += 1)
      right(await store.add('repo', { kind: 'nugget', body: `fact number ${i} about module m${i}` }));
    const plan = (await store.explainSemantic('repo', 'module m7')).join('\n');
    expect(plan).toMatch(/Index Scan using crust_memories_embedding_hnsw/);
    const results = await store.search('repo', 'fact number 7 about module m7', { limit: 1 });
    expect(results[0]?.memory.body).toBe('fact number 7 about module m7');
  });
});

describe('reopening a complete store', () => {
  it('finds the same features without migrating, and still refuses a migration recorded with another checksum', async () => {
    const db = await harness.open('mem_reopen');
    const clock = new ManualClock(T0);
    const first = await MemoryStore.open(db, { clock: clock.clock });
    right(await first.add('repo', { kind: 'nugget', body: 'kept across opens' }));
    const recorded = async () =>
      (
        await db.query<{ id: string; checksum: string; at: string }>(
          'SELECT id, checksum, applied_at::text AS at FROM crust_memory_migrations ORDER BY id',
        )
      ).rows;
    const before = await recorded();
    expect(before.map((row) => row.id)).toEqual(['001-memories', '002-trgm', '003-vector-256']);

    const again = await MemoryStore.open(db, { clock: clock.clock });
    expect(again.capabilities).toEqual(first.capabilities);
    expect(await recorded()).toEqual(before);
    expect((await again.list('repo')).map((m) => m.body)).toEqual(['kept across opens']);
    expect((await again.search('repo', 'kept', { limit: 1 }))[0]?.memory.body).toBe('kept across opens');

    // A record that does not match this build is never taken as complete: the full path refuses it.
    for (const row of before) {
      await db.query(`UPDATE crust_memory_migrations SET checksum = 'other' WHERE id = $1::text`, [row.id]);
      await expect(MemoryStore.open(db, { clock: clock.clock })).rejects.toThrow(
        `memory migration ${row.id} was recorded with another checksum`,
      );
      await db.query('UPDATE crust_memory_migrations SET checksum = $2::text WHERE id = $1::text', [
        row.id,
        row.checksum,
      ]);
    }
    expect((await MemoryStore.open(db, { clock: clock.clock })).capabilities).toEqual(first.capabilities);
  });
});
