/**
 * Exact multi-pattern matching in one pass. A 32-bit signature of the last
 * q characters (q = 8, or the shortest pattern if shorter; the low 4 bits of
 * each character, shifted in, so the oldest falls out by itself) is hashed
 * into a bitset built from the patterns' first q characters; only on a hit
 * are the candidate patterns compared. Every registered secret contributes
 * a few dozen forms and fragments, and the scan still costs a shift, an OR,
 * a multiply and one bit test per character, however many patterns there
 * are. Compiling is linear in the patterns' length (no automaton table).
 *
 * The hash multiplier is random per matcher, so text cannot be crafted in
 * advance to hit the bitset at every position. Every occurrence of every
 * pattern is reported; the redactor merges overlapping spans.
 */
import { randomBytes } from 'node:crypto';

// ─── model ────────────────────────────────────────────────────────────────

export interface MatcherPattern {
  readonly text: string;
  /** Index into the redactor's label table. */
  readonly label: number;
}

/** Total pattern characters accepted; past this compilation is refused. */
export const MAX_MATCHER_CHARS = 16 * 1024 * 1024;
const MAX_WINDOW = 8;

export type MatcherError = { readonly _tag: 'MatcherTooLarge'; readonly chars: number; readonly maxChars: number };

/** Receives a match as [start, end) with its label. */
export type MatchSink = (start: number, end: number, label: number) => void;

/** The low nibbles of text[at, at + window), oldest highest. */
function signature(text: string, at: number, window: number): number {
  let value = 0;
  for (let k = 0; k < window; k++) value = (value << 4) | (text.charCodeAt(at + k) & 15);
  return value;
}

export class ExactMatcher {
  readonly #window: number;
  /** Keeps the last `window` nibbles (all 32 bits when the window is 8). */
  readonly #mask: number;
  readonly #multiplier: number;
  readonly #shift: number;
  readonly #bits: Int32Array;
  /** Bucket index → indices into #texts of the patterns whose first window hashes there. */
  readonly #buckets: Map<number, number[]>;
  readonly #texts: readonly string[];
  readonly #labels: Int32Array;
  readonly #maxPatternLength: number;

  private constructor(patterns: readonly MatcherPattern[], window: number, tableBits: number) {
    this.#window = window;
    this.#mask = window >= 8 ? -1 : (1 << (4 * window)) - 1;
    // Odd, so multiplying by it permutes the 32-bit signatures; the top bits pick the slot.
    this.#multiplier = randomBytes(4).readUInt32LE(0) | 1;
    this.#shift = 32 - tableBits;
    this.#bits = new Int32Array(Math.max(1, (1 << tableBits) >>> 5));
    this.#buckets = new Map();
    this.#texts = patterns.map((p) => p.text);
    this.#labels = Int32Array.from(patterns.map((p) => p.label));
    let longest = 0;
    patterns.forEach((pattern, index) => {
      longest = Math.max(longest, pattern.text.length);
      const slot = Math.imul(signature(pattern.text, 0, window), this.#multiplier) >>> this.#shift;
      this.#bits[slot >>> 5]! |= 1 << (slot & 31);
      const bucket = this.#buckets.get(slot);
      if (bucket === undefined) this.#buckets.set(slot, [index]);
      else bucket.push(index);
    });
    this.#maxPatternLength = longest;
  }

  get maxPatternLength(): number {
    return this.#maxPatternLength;
  }

  // ─── constructors ───────────────────────────────────────────────────────

  /** Empty patterns are ignored; a text registered twice keeps its first label. */
  static compile(
    patterns: readonly MatcherPattern[],
  ): { readonly ok: true; readonly matcher: ExactMatcher } | { readonly ok: false; readonly error: MatcherError } {
    const unique = new Map<string, number>();
    let chars = 0;
    for (const pattern of patterns) {
      if (pattern.text.length === 0 || unique.has(pattern.text)) continue;
      unique.set(pattern.text, pattern.label);
      chars += pattern.text.length;
    }
    if (chars > MAX_MATCHER_CHARS) {
      return { ok: false, error: { _tag: 'MatcherTooLarge', chars, maxChars: MAX_MATCHER_CHARS } };
    }
    const kept = [...unique].map(([text, label]) => ({ text, label }));
    const shortest = kept.reduce((min, p) => Math.min(min, p.text.length), MAX_WINDOW);
    // About 256 bitset slots per pattern keeps false hits near 0.4 %; 2^12..2^24 slots.
    const tableBits = Math.min(24, Math.max(12, Math.ceil(Math.log2(Math.max(1, kept.length))) + 8));
    return { ok: true, matcher: new ExactMatcher(kept, Math.max(1, shortest), tableBits) };
  }

  // ─── scanning ───────────────────────────────────────────────────────────

  /** Reports every occurrence of every pattern starting in text[from, …). */
  scan(text: string, from: number, sink: MatchSink): void {
    const window = this.#window;
    const length = text.length;
    if (this.#texts.length === 0 || length - from < window) return;
    const mask = this.#mask;
    const multiplier = this.#multiplier;
    const shift = this.#shift;
    const bits = this.#bits;
    let value = signature(text, from, window - 1);
    for (let end = from + window - 1; end < length; end++) {
      value = ((value << 4) | (text.charCodeAt(end) & 15)) & mask;
      const slot = Math.imul(value, multiplier) >>> shift;
      if ((bits[slot >>> 5]! & (1 << (slot & 31))) !== 0) this.#verify(text, end + 1 - window, slot, sink);
    }
  }

  #verify(text: string, at: number, slot: number, sink: MatchSink): void {
    const bucket = this.#buckets.get(slot);
    if (bucket === undefined) return;
    for (const index of bucket) {
      const pattern = this.#texts[index]!;
      if (text.startsWith(pattern, at)) sink(at, at + pattern.length, this.#labels[index]!);
    }
  }
}
