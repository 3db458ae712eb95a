/** Ranking and the embedder as pure functions: properties over generated inputs. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cosine, decayedScore, HashingEmbedder, type Memory, rankCandidates, tokenize } from '../src/index.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 1);

const memory = (id: string, ageMs: number): Memory => ({
  id,
  repoId: 'r',
  kind: 'nugget',
  body: id,
  fix: null,
  tags: [],
  source: 'person',
  taskId: null,
  createdAtMs: NOW - ageMs,
});

const similarity = fc.double({ min: 0.01, max: 1, noNaN: true });
const age = fc.integer({ min: 0, max: 3_650 * DAY });
const channel = fc.constantFrom('semantic', 'lexical', 'both');

function candidate(id: string, ageMs: number, sim: number, which: string) {
  return {
    memory: memory(id, ageMs),
    semantic: which === 'lexical' ? null : sim,
    lexical: which === 'semantic' ? null : sim,
  };
}

describe('decay-weighted ranking', () => {
  it('newer beats older at equal similarity, in any channel', () => {
    fc.assert(
      fc.property(similarity, age, age, channel, (sim, a, b, which) => {
        fc.pre(a !== b);
        const [newer, older] = a < b ? [a, b] : [b, a];
        const ranked = rankCandidates(
          [candidate('m_old', older, sim, which), candidate('m_new', newer, sim, which)],
          NOW,
          2,
        );
        expect(ranked.map((r) => r.memory.id)).toEqual(['m_new', 'm_old']);
      }),
    );
  });

  it('at equal age the higher similarity wins', () => {
    fc.assert(
      fc.property(similarity, similarity, age, channel, (s1, s2, ageMs, which) => {
        fc.pre(s1 !== s2);
        const [hi, lo] = s1 > s2 ? [s1, s2] : [s2, s1];
        const ranked = rankCandidates(
          [candidate('m_lo', ageMs, lo, which), candidate('m_hi', ageMs, hi, which)],
          NOW,
          2,
        );
        expect(ranked.map((r) => r.memory.id)).toEqual(['m_hi', 'm_lo']);
      }),
    );
  });

  it('decays by e^(-0.01·age_days): 30 days weigh about 26 % less', () => {
    expect(decayedScore(1, NOW, NOW)).toBe(1);
    expect(decayedScore(0.8, NOW - 30 * DAY, NOW)).toBeCloseTo(0.8 * Math.exp(-0.3), 12);
    expect(1 - decayedScore(1, NOW - 30 * DAY, NOW)).toBeCloseTo(0.259, 3);
    // A clock behind the memory (skew) does not inflate it; a negative cosine counts as nothing.
    expect(decayedScore(0.5, NOW + DAY, NOW)).toBe(0.5);
    expect(decayedScore(-0.2, NOW, NOW)).toBe(0);
  });

  it('is deterministic: the same candidates and clock give the same order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(age, similarity, channel), { minLength: 1, maxLength: 20 }), (rows) => {
        const candidates = rows.map(([a, s, w], i) => candidate(`m_${i}`, a, s, w));
        const once = rankCandidates(candidates, NOW, 50).map((r) => r.memory.id);
        const again = rankCandidates([...candidates].reverse(), NOW, 50).map((r) => r.memory.id);
        expect(again).toEqual(once);
      }),
    );
  });
});

describe('hashing embedder', () => {
  const embedder = new HashingEmbedder();

  it('is deterministic, unit length and fixed-dimensional', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), (text) => {
        const a = embedder.embed(text);
        expect(a.length).toBe(256);
        expect(Array.from(a)).toEqual(Array.from(new HashingEmbedder().embed(text)));
        const norm = Math.sqrt(a.reduce((sum, x) => sum + x * x, 0));
        expect(norm === 0 || Math.abs(norm - 1) < 1e-5).toBe(true);
      }),
    );
  });

  it('keeps identifiers whole and split, so related text shares features', () => {
    expect(tokenize('resolveWorkspaceAlias(x)')).toEqual(['resolveworkspacealias', 'resolve', 'workspace', 'alias']);
    expect(tokenize('snake_case_name')).toEqual(['snake_case_name', 'snake', 'case', 'name']);
    const related = cosine(embedder.embed('resolveWorkspaceAlias'), embedder.embed('resolve the workspace alias'));
    const unrelated = cosine(embedder.embed('resolveWorkspaceAlias'), embedder.embed('encrypt vault passphrase'));
    expect(related).toBeGreaterThan(unrelated);
  });
});
