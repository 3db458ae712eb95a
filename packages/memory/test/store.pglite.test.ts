/** The memory suite on PGlite with pgvector, and the HNSW index serving semantic search. */
import { describe, expect, it } from 'vitest';
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
