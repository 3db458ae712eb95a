/**
 * Ranking, as pure functions of the candidates and an injected clock (never
 * Date.now: the same store and the same time give the same order).
 *
 * Each retrieval channel ranks by similarity × e^(−0.01·age in days), so a
 * memory from 30 days ago weighs about 26 % less than an equally similar one
 * from today and newer memories supersede stale ones. The semantic channel's
 * similarity is the cosine of the embeddings; the lexical channel's is the
 * trigram word similarity of the query's terms. The two channels are fused by
 * reciprocal rank (Σ 1/(k + rank)): their similarities are on different
 * scales, ranks are not.
 */
import type { Memory } from './types.js';

/** Returns milliseconds since the epoch. Injected everywhere a time is read. */
export type Clock = () => number;

export const DECAY_PER_DAY = 0.01;
const DAY_MS = 86_400_000;
/** The usual reciprocal-rank constant: damps the gap between rank 1 and rank 2. */
export const FUSION_K = 60;

/** Age in days at `nowMs`; a memory from the future (clock skew) counts as new. */
export const ageDays = (createdAtMs: number, nowMs: number): number => Math.max(0, nowMs - createdAtMs) / DAY_MS;

/** similarity × e^(−0.01·age_days); a negative similarity counts as none. */
export const decayedScore = (similarity: number, createdAtMs: number, nowMs: number): number =>
  Math.max(0, similarity) * Math.exp(-DECAY_PER_DAY * ageDays(createdAtMs, nowMs));

export interface Candidate {
  readonly memory: Memory;
  /** Cosine to the query, when the semantic channel returned it. */
  readonly semantic: number | null;
  /** Lexical similarity to the query, when the lexical channel returned it. */
  readonly lexical: number | null;
}

export interface RankedMemory {
  readonly memory: Memory;
  /** The fused score that orders the results. */
  readonly score: number;
  /** similarity × decay of each channel (null: not found by it). */
  readonly semantic: number | null;
  readonly lexical: number | null;
}

/** Ties keep a total order: newer first, then by id. */
const byScoreThenNewer = (a: RankedMemory, b: RankedMemory): number =>
  b.score - a.score ||
  b.memory.createdAtMs - a.memory.createdAtMs ||
  (a.memory.id < b.memory.id ? -1 : a.memory.id > b.memory.id ? 1 : 0);

function channelRanks(scored: readonly (number | null)[]): (number | null)[] {
  const order = scored
    .map((score, index) => ({ score, index }))
    .filter((entry): entry is { score: number; index: number } => entry.score !== null && entry.score > 0)
    .sort((a, b) => b.score - a.score);
  const ranks: (number | null)[] = scored.map(() => null);
  // Equal scores share a rank, so a tie in one channel is decided by the other channel (or by age).
  let rank = 0;
  let previous = Number.NaN;
  for (const [position, entry] of order.entries()) {
    if (entry.score !== previous) rank = position + 1;
    previous = entry.score;
    ranks[entry.index] = rank;
  }
  return ranks;
}

/** Orders candidates by the fused, decayed score; at most `limit`. */
export function rankCandidates(candidates: readonly Candidate[], nowMs: number, limit: number): RankedMemory[] {
  const semantic = candidates.map((c) =>
    c.semantic === null ? null : decayedScore(c.semantic, c.memory.createdAtMs, nowMs),
  );
  const lexical = candidates.map((c) =>
    c.lexical === null ? null : decayedScore(c.lexical, c.memory.createdAtMs, nowMs),
  );
  const semanticRank = channelRanks(semantic);
  const lexicalRank = channelRanks(lexical);
  const ranked = candidates.map((candidate, index): RankedMemory => {
    const s = semanticRank[index] ?? null;
    const l = lexicalRank[index] ?? null;
    const score = (s === null ? 0 : 1 / (FUSION_K + s)) + (l === null ? 0 : 1 / (FUSION_K + l));
    return { memory: candidate.memory, score, semantic: semantic[index] ?? null, lexical: lexical[index] ?? null };
  });
  return ranked
    .filter((r) => r.score > 0)
    .sort(byScoreThenNewer)
    .slice(0, Math.max(0, limit));
}
