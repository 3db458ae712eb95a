/** Store behaviour both engines must share. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HashingEmbedder } from '../src/index.js';
import { ManualClock, type MemoryHarness, openStore, right, T0 } from './harness.js';

const REPO = 'repo-a';

/** Nuggets that share words with the identifier; the memory naming it is long and mostly about something else. */
const DISTRACTORS = [
  'flush the journal before closing the file',
  'the journal flush happens on every commit',
  'journal flushes are batched in groups of nine',
  'never flush a journal twice: flushing is idempotent only per journal',
  'the qz storage keeps one journal per flush',
  'journal entries flush to disk at commit',
];
const NEEDLE =
  'The nightly deploy broke when the token cache expired during a long migration; the fix renews the lease in flushQz9Journal before the migration starts, and the deploy script now retries once.';
const IDENTIFIER = 'flushQz9Journal';

export function defineMemorySuite(harness: MemoryHarness): void {
  beforeAll(() => harness.setup());
  afterAll(() => harness.teardown());

  describe(`memory store (${harness.name})`, () => {
    it('adds, lists newest first, refreshes a duplicate, and forgets by id prefix', async () => {
      const clock = new ManualClock(T0);
      const store = await openStore(harness, clock);
      const first = right(await store.add(REPO, { kind: 'nugget', body: 'Use ESM imports in this package' }));
      expect(first.created).toBe(true);
      clock.advanceDays(1);
      right(await store.add(REPO, { kind: 'convention', body: 'Tests live next to the code', tags: ['tests'] }));
      right(await store.add('repo-b', { kind: 'nugget', body: 'Another repository entirely' }));
      clock.advanceDays(1);
      const again = right(await store.add(REPO, { kind: 'nugget', body: '  Use ESM imports in this package ' }));
      expect(again.created).toBe(false);
      expect(again.memory.id).toBe(first.memory.id);
      expect(again.memory.createdAtMs).toBe(clock.nowMs);
      const listed = await store.list(REPO);
      expect(listed.map((m) => m.kind)).toEqual(['nugget', 'convention']);
      expect(listed[1]?.tags).toEqual(['tests']);
      expect((await store.list(REPO, { kind: 'convention' })).length).toBe(1);
      const forgotten = right(await store.forget(REPO, first.memory.id.slice(0, 8)));
      expect(forgotten.body).toBe('Use ESM imports in this package');
      expect((await store.list(REPO)).length).toBe(1);
      const missing = await store.forget(REPO, first.memory.id);
      expect(missing._tag === 'Left' && missing.left._tag).toBe('MemoryNotFound');
      // Another repository's memory is not this repository's to forget.
      const other = (await store.list('repo-b'))[0];
      const crossRepo = await store.forget(REPO, other?.id ?? 'm_0000');
      expect(crossRepo._tag === 'Left' && crossRepo.left._tag).toBe('MemoryNotFound');
    });

    it('refuses bad input with a typed error that says what to fix', async () => {
      const store = await openStore(harness, new ManualClock(T0));
      for (const bad of [
        { kind: 'nugget' as const, body: '   ' },
        { kind: 'nugget' as const, body: 'x'.repeat(2_001) },
        { kind: 'nugget' as const, body: 'nul \u0000 inside' },
        { kind: 'rumour' as never, body: 'not a kind' },
        { kind: 'nugget' as const, body: 'ok', tags: ['has space'] },
      ]) {
        const result = await store.add(REPO, bad);
        expect(result._tag).toBe('Left');
        if (result._tag === 'Left') expect(result.left._tag).toBe('MemoryInvalid');
      }
      const badId = await store.forget(REPO, 'DROP TABLE');
      expect(badId._tag === 'Left' && badId.left._tag).toBe('MemoryInvalid');
      expect(await store.list(REPO)).toEqual([]);
    });

    it('ranks a newer memory above an older one of equal similarity, and decays by e^(-0.01·days)', async () => {
      const clock = new ManualClock(T0);
      const store = await openStore(harness, clock);
      // The same words in another order: the same features, so the same embedding and trigram matches.
      const old = right(await store.add(REPO, { kind: 'nugget', body: 'postgres pool size twenty' })).memory;
      clock.advanceDays(30);
      const fresh = right(await store.add(REPO, { kind: 'nugget', body: 'twenty size pool postgres' })).memory;
      const results = await store.search(REPO, 'postgres pool size');
      expect(results.map((r) => r.memory.id).slice(0, 2)).toEqual([fresh.id, old.id]);
      const [a, b] = results;
      expect(a?.semantic).toBeGreaterThan(0);
      // Equal cosine: the ratio of decayed scores is e^(-0.3) exactly (float tolerance).
      expect((b?.semantic ?? 0) / (a?.semantic ?? 1)).toBeCloseTo(Math.exp(-0.3), 6);
    });

    it('lexical retrieval finds an exact identifier that the hashing embedder ranks low', async () => {
      const store = await openStore(harness, new ManualClock(T0));
      for (const body of DISTRACTORS) right(await store.add(REPO, { kind: 'nugget', body }));
      const needle = right(await store.add(REPO, { kind: 'failure', body: NEEDLE })).memory;
      const query = IDENTIFIER;
      // Control: by embedding alone the needle is not among the top results.
      const embedder = new HashingEmbedder();
      const q = embedder.embed(query);
      const bySemantic = [...DISTRACTORS, NEEDLE]
        .map((body) => ({ body, s: cosineOf(q, embedder.embed(body)) }))
        .sort((x, y) => y.s - x.s);
      expect(bySemantic.findIndex((x) => x.body === NEEDLE)).toBeGreaterThanOrEqual(3);
      const results = await store.search(REPO, query, { limit: 3 });
      expect(results[0]?.memory.id).toBe(needle.id);
      const hit = results.find((r) => r.memory.id === needle.id);
      expect(hit?.lexical).toBeGreaterThan(0);
    });

    it('searches only the asked kinds and repository', async () => {
      const store = await openStore(harness, new ManualClock(T0));
      right(await store.add(REPO, { kind: 'decision', body: 'We chose PGlite as the default state engine' }));
      right(await store.add(REPO, { kind: 'nugget', body: 'PGlite starts slowly on this machine' }));
      right(await store.add('repo-b', { kind: 'nugget', body: 'PGlite is also used in repo b' }));
      const decisions = await store.search(REPO, 'PGlite', { kinds: ['decision'] });
      expect(decisions.map((r) => r.memory.kind)).toEqual(['decision']);
      const all = await store.search(REPO, 'PGlite');
      expect(all.every((r) => r.memory.repoId === REPO)).toBe(true);
      expect(all.length).toBe(2);
    });
  });
}

function cosineOf(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i += 1) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return dot;
}
