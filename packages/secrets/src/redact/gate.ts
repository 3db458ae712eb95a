/**
 * The detectors' gate: one pass over the text that finds every occurrence of
 * every detector anchor, so that each detector's regex is tried only where a
 * match could start. Running ~100 regexes over the whole text, or one regex
 * alternating ~200 literals, costs far more than this loop: each character is
 * folded to a 6-bit code (letters case-folded, digits, `-_.:/~=+`; anything
 * else is 0), the last three codes form an 18-bit key, and one bit test says
 * whether some anchor starts with those three characters. Only then are the
 * anchors of that key compared. Keys are exact (no hashing), so text cannot
 * be crafted to hit the table beyond the anchors' own trigrams.
 */
import type { Anchor } from './detector-model.js';

const ANCHOR_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789-_.:/~=+';
const CODE_COUNT = ANCHOR_CHARS.length + 1;
const KEY_BITS = 18;
const KEY_MASK = (1 << KEY_BITS) - 1;

/** UTF-16 code unit → 6-bit code; upper case folds onto lower case; 0 for characters no anchor has. */
const FOLD = (() => {
  // Every code unit has an entry (64 KiB), so the scan loop needs no range test.
  const table = new Uint8Array(65536);
  for (let i = 0; i < ANCHOR_CHARS.length; i++) {
    const c = ANCHOR_CHARS.charCodeAt(i);
    table[c] = i + 1;
    if (c >= 97 && c <= 122) table[c - 32] = i + 1;
  }
  return table;
})();

const foldedCode = (c: number): number => FOLD[c]!;

/** One anchor, with the detectors it wakes up. */
interface GateEntry {
  readonly text: string;
  readonly caseInsensitive: boolean;
  /** Membership of the characters allowed before the anchor (for `back`), by char code < 128. */
  readonly backChars: Uint8Array | null;
  readonly backMax: number;
  readonly detectors: number[];
}

/** Receives a candidate: detector `detector` may match starting at `start`. */
export type CandidateSink = (detector: number, start: number) => void;

/** Counters for tests: how much work a scan did (candidates tried, anchors compared). */
export interface GateStats {
  anchorChecks: number;
  candidates: number;
}

function sameFolded(text: string, at: number, lower: string): boolean {
  for (let k = 0; k < lower.length; k++) {
    let c = text.charCodeAt(at + k);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== lower.charCodeAt(k)) return false;
  }
  return true;
}

export class DetectorGate {
  /** Key → 1 + index into #buckets, or 0: one byte per key (256 KiB) is faster to test than a bit. */
  readonly #slots = new Uint16Array(1 << KEY_BITS);
  readonly #buckets: GateEntry[][] = [];

  /** `anchors[i]` are the anchors of detector i. */
  constructor(anchors: readonly (readonly Anchor[])[]) {
    const entries = new Map<string, GateEntry>();
    anchors.forEach((list, detector) => {
      for (const anchor of list) {
        const identity = `${anchor.caseInsensitive ? 'i' : 's'}:${anchor.text}:${anchor.back?.chars ?? ''}:${anchor.back?.max ?? 0}`;
        const existing = entries.get(identity);
        if (existing !== undefined) existing.detectors.push(detector);
        else entries.set(identity, this.#entry(anchor, detector));
      }
    });
    for (const entry of entries.values()) this.#index(entry);
  }

  #entry(anchor: Anchor, detector: number): GateEntry {
    if (anchor.text.length < 2 || [...anchor.text].some((ch) => foldedCode(ch.charCodeAt(0)) === 0)) {
      throw new Error(`detector anchor ${JSON.stringify(anchor.text)} must be ≥ 2 characters of [A-Za-z0-9-_.:/~=+]`);
    }
    let backChars: Uint8Array | null = null;
    if (anchor.back !== null) {
      backChars = new Uint8Array(128);
      for (const ch of anchor.back.chars) backChars[ch.charCodeAt(0)] = 1;
    }
    return {
      text: anchor.caseInsensitive ? anchor.text.toLowerCase() : anchor.text,
      caseInsensitive: anchor.caseInsensitive,
      backChars,
      backMax: anchor.back?.max ?? 0,
      detectors: [detector],
    };
  }

  #index(entry: GateEntry): void {
    const c0 = foldedCode(entry.text.charCodeAt(0));
    const c1 = foldedCode(entry.text.charCodeAt(1));
    // A two-character anchor is filed under every third character.
    const thirds =
      entry.text.length >= 3 ? [foldedCode(entry.text.charCodeAt(2))] : Array.from({ length: CODE_COUNT }, (_, i) => i);
    for (const c2 of thirds) {
      const key = (c0 << 12) | (c1 << 6) | c2;
      const slot = this.#slots[key]!;
      if (slot === 0) {
        this.#buckets.push([entry]);
        this.#slots[key] = this.#buckets.length;
      } else this.#buckets[slot - 1]!.push(entry);
    }
  }

  /** Reports every candidate whose anchor starts in text[from, …). */
  scan(text: string, from: number, sink: CandidateSink, stats?: GateStats): void {
    const length = text.length;
    const slots = this.#slots;
    if (length - from < 2) return;
    let key = ((foldedCode(text.charCodeAt(from)) << 6) | foldedCode(text.charCodeAt(from + 1))) & KEY_MASK;
    for (let i = from + 2; i < length; i++) {
      const c = text.charCodeAt(i);
      key = ((key << 6) | FOLD[c]!) & KEY_MASK;
      const slot = slots[key]!;
      if (slot !== 0) this.#verify(text, i - 2, slot, sink, stats);
    }
    // A two-character anchor ending the text has no third character: look at it with a 0 code.
    const last = (key << 6) & KEY_MASK;
    if (slots[last]! !== 0) this.#verify(text, length - 2, slots[last]!, sink, stats);
  }

  #verify(text: string, at: number, slot: number, sink: CandidateSink, stats: GateStats | undefined): void {
    const bucket = this.#buckets[slot - 1]!;
    for (const entry of bucket) {
      if (stats !== undefined) stats.anchorChecks++;
      const found = entry.caseInsensitive ? sameFolded(text, at, entry.text) : text.startsWith(entry.text, at);
      if (!found) continue;
      const start = entry.backChars === null ? at : this.#backStart(text, at, entry.backChars, entry.backMax);
      if (start < 0) continue;
      for (const detector of entry.detectors) {
        if (stats !== undefined) stats.candidates++;
        sink(detector, start);
      }
    }
  }

  /** Walks back over allowed characters; -1 when the run is longer than the anchor allows. */
  #backStart(text: string, at: number, chars: Uint8Array, max: number): number {
    let start = at;
    while (start > 0 && at - start <= max) {
      const c = text.charCodeAt(start - 1);
      if (c >= 128 || chars[c] === 0) break;
      start--;
    }
    return at - start > max ? -1 : start;
  }
}
