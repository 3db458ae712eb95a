/**
 * Text → unit vector. A real embedding model can be plugged in through
 * `Embedder`; the default, `HashingEmbedder`, needs no model at all: signed
 * feature hashing of tokens and character trigrams into a fixed number of
 * dimensions. It is deterministic (the same text gives the same vector in
 * every process and on every machine), so stored vectors stay comparable and
 * tests are exact.
 */
import { tokenize } from './tokens.js';

export interface Embedder {
  /** Names the embedding space; vectors of different ids are never compared. */
  readonly id: string;
  readonly dimensions: number;
  /** A vector of `dimensions` finite numbers, L2-normalized (all zeros for text without features). */
  embed(text: string): Float32Array;
}

/** FNV-1a, 32 bits, over UTF-16 code units: fast, stable across platforms, no dependency. */
function fnv1a(text: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  // A final avalanche so near-identical features land far apart.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  hash ^= hash >>> 13;
  return hash >>> 0;
}

/** Weight of a whole token against one of its character trigrams. */
const TOKEN_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.5;

export const DEFAULT_DIMENSIONS = 256;

export class HashingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;

  constructor(dimensions: number = DEFAULT_DIMENSIONS) {
    if (!Number.isSafeInteger(dimensions) || dimensions < 16 || dimensions > 4096) {
      throw new RangeError('HashingEmbedder dimensions must be an integer in 16..4096');
    }
    this.dimensions = dimensions;
    this.id = `hashing-v1-${dimensions}`;
  }

  #add(vector: Float32Array, feature: string, weight: number): void {
    const hash = fnv1a(feature, 0);
    // The sign comes from a second, independent hash: collisions then cancel on average instead of piling up.
    const sign = (fnv1a(feature, 0x9e3779b9) & 1) === 0 ? 1 : -1;
    const index = hash % this.dimensions;
    vector[index] = (vector[index] ?? 0) + sign * weight;
  }

  embed(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    for (const token of tokenize(text)) {
      this.#add(vector, `t:${token}`, TOKEN_WEIGHT);
      const padded = `^${token}$`;
      for (let i = 0; i + 3 <= padded.length; i += 1) this.#add(vector, `c:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
    }
    return normalize(vector);
  }
}

export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i += 1) vector[i] = (vector[i] ?? 0) * scale;
  return vector;
}

/** Cosine of two vectors of one space (unit vectors: the dot product). 0 for a zero vector. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const length = Math.min(a.length, b.length);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < length; i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
