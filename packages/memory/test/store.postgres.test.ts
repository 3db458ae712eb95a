/**
 * The memory suite on a real PostgreSQL 15 cluster. Debian ships no pgvector
 * package, so this is the fallback path: pg_trgm in the database, cosine in
 * process, and a note saying so.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, openStore, PostgresMemoryHarness, right, T0 } from './harness.js';
import { defineMemorySuite } from './suite.js';

const harness = new PostgresMemoryHarness();
defineMemorySuite(harness);

describe('PostgreSQL without pgvector', () => {
  it('falls back to in-process cosine with a clear note, and still ranks semantically', async () => {
    const store = await openStore(harness, new ManualClock(T0));
    expect(store.engine).toBe('postgres');
    expect(store.capabilities.vectorNs).toBeNull();
    expect(store.capabilities.trigramNs).not.toBeNull();
    expect(store.capabilities.notes.join('\n')).toMatch(
      /no pgvector here .*semantic search compares embeddings in process/,
    );
    expect((await store.explainSemantic('repo', 'x')).join()).toMatch(/in-process/);
    right(await store.add('repo', { kind: 'nugget', body: 'the vault is encrypted with a passphrase' }));
    right(await store.add('repo', { kind: 'nugget', body: 'sandbox profiles deny network by default' }));
    const results = await store.search('repo', 'sandbox network profile', { limit: 1 });
    expect(results[0]?.memory.body).toBe('sandbox profiles deny network by default');
    expect(results[0]?.semantic).toBeGreaterThan(0);
  });
});
