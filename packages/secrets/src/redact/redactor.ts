/**
 * The redactor: every registered secret in every form it takes (forms.ts),
 * found in one pass (matcher.ts), plus the token detectors (detectors.ts),
 * replaced with `[REDACTED:<label or detector>]`. It is the only minter of
 * ModelVisibleText.
 *
 * Overlapping findings are merged into one marker, labelled by the finding
 * that starts first (ties: the longer, then registered secrets before
 * detectors, then detector order). The same rule applies in the incremental
 * redactor, which produces byte-identical output however the input is split.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { SecretHandle } from '../handle.js';
import type { SecretMaterial } from '../material.js';
import { type ModelVisibleText, mintModelVisibleText, TaintedText } from '../model-visible.js';
import { DetectorSet } from './detector-scan.js';
import { DETECTOR_IDS, DETECTORS, type Detector, type DetectorId } from './detectors.js';
import { secretForms, secretFragments } from './forms.js';
import { ExactMatcher, MAX_MATCHER_CHARS, type MatcherPattern } from './matcher.js';

// ─── model ────────────────────────────────────────────────────────────────

/** Registered secrets shorter than this are refused: redacting them would shred ordinary text. */
export const MIN_REDACTABLE_SECRET_LENGTH = 8;
export const MAX_REGISTERED_SECRETS = 4096;
/** The incremental redactor never holds more than this many characters before failing closed. */
export const MAX_PENDING_CHARS = 4 * 1024 * 1024;
/** Characters of already-emitted text kept so look-behinds see the same context as a one-shot scan. */
const CONTEXT_CHARS = 32;
const MAX_JSON_DEPTH = 64;
const MAX_JSON_NODES = 1_000_000;

export type RedactorError =
  | { readonly _tag: 'SecretTooShortToRedact'; readonly label: string; readonly minLength: number }
  | { readonly _tag: 'SecretDisposed'; readonly label: string }
  | { readonly _tag: 'RedactorFull'; readonly reason: string };

/** Default window for fragments of registered secrets (see forms.ts `secretFragments`). */
export const DEFAULT_FRAGMENT_LENGTH = 12;

export interface RedactorOptions {
  /** Which detectors run; default: all of them. */
  readonly detectors?: readonly DetectorId[];
  /** Window length for secret fragments; null turns fragment matching off. Default 12. */
  readonly fragmentLength?: number | null;
}

export interface Finding {
  /** The secret's label, or the detector id. */
  readonly label: string;
  readonly source: 'registered' | 'detector';
  /** Span in the input, [start, end). */
  readonly start: number;
  readonly end: number;
}

export interface RedactionReport {
  readonly text: string;
  readonly findings: readonly Finding[];
}

export type RedactableInput = string | TaintedText;

/** What a scan found: merged spans to replace, and whole-match extents (for stream cut points). */
interface ScanResult {
  /** Flattened merged spans: start, end, label, … in order. */
  readonly spans: number[];
  /** Flattened extents: start, end, … (unordered). */
  readonly extents: number[];
}

/** Everything derived from the registered secrets; rebuilt after a registration changes. */
class Compiled {
  readonly labels: readonly string[];
  readonly registeredCount: number;
  readonly matcher: ExactMatcher | null;
  readonly detectors: DetectorSet;
  /** Characters a stream holds back regardless of content. */
  readonly holdChars: number;
  /** Detectors whose bound is large; a stream holds back from their trigger when it appears. */
  readonly triggered: readonly { readonly trigger: string; readonly window: number }[];

  constructor(
    secretLabels: readonly string[],
    patterns: readonly MatcherPattern[],
    detectors: readonly Detector[],
    matcher: ExactMatcher | null,
  ) {
    this.labels = [...secretLabels, ...detectors.map((d) => d.id)];
    this.registeredCount = secretLabels.length;
    this.matcher = patterns.length === 0 ? null : matcher;
    this.detectors = detectorSetFor(detectors);
    let hold = this.matcher === null ? 0 : this.matcher.maxPatternLength - 1;
    const triggered: { trigger: string; window: number }[] = [];
    for (const detector of detectors) {
      // +1: a match can depend on one character of look-ahead past its end.
      if (detector.trigger === null) hold = Math.max(hold, detector.maxMatchLength + 1);
      else triggered.push({ trigger: detector.trigger, window: detector.maxMatchLength + 1 });
    }
    this.holdChars = hold;
    this.triggered = triggered;
  }

  /**
   * Finds spans in text[from, …). Exact matching and detector regexes start at
   * `scanFrom` (≤ from; earlier text is look-behind context or, after an
   * overflow, text whose matches may still reach past `from`). Spans are
   * clipped to start at `from`.
   */
  scan(text: string, from: number, scanFrom: number): ScanResult {
    const starts: number[] = [];
    const ends: number[] = [];
    const labels: number[] = [];
    const extents: number[] = [];
    const add = (start: number, end: number, label: number, extentStart: number): void => {
      if (end <= from) return;
      starts.push(Math.max(start, from));
      ends.push(end);
      labels.push(label);
      extents.push(extentStart, end);
    };
    this.matcher?.scan(text, scanFrom, (start, end, label) => add(start, end, label, start));
    const firstDetectorLabel = this.registeredCount;
    this.detectors.scan(text, scanFrom, (index, matchStart, valueStart, valueEnd) =>
      add(valueStart, valueEnd, firstDetectorLabel + index, matchStart),
    );
    return { spans: mergeSpans(starts, ends, labels), extents };
  }
}

/**
 * Detector sets are immutable and their tables large (a 512 KiB gate), so redactors with the
 * same detectors share one. Scans are synchronous, so sharing the sticky regexes is safe.
 */
const detectorSets = new Map<string, DetectorSet>();
function detectorSetFor(detectors: readonly Detector[]): DetectorSet {
  const key = detectors.map((d) => DETECTORS.indexOf(d)).join(',');
  let set = detectorSets.get(key);
  if (set === undefined) {
    set = new DetectorSet(detectors);
    detectorSets.set(key, set);
  }
  return set;
}

/** Sorts spans (start ↑, end ↓, label ↑) and merges overlaps; the first span of a group labels it. */
function mergeSpans(starts: readonly number[], ends: readonly number[], labels: readonly number[]): number[] {
  const count = starts.length;
  if (count === 0) return [];
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((a, b) => starts[a]! - starts[b]! || ends[b]! - ends[a]! || labels[a]! - labels[b]!);
  const merged: number[] = [];
  let start = starts[order[0]!]!;
  let end = ends[order[0]!]!;
  let label = labels[order[0]!]!;
  for (let k = 1; k < count; k++) {
    const i = order[k]!;
    if (starts[i]! < end) {
      if (ends[i]! > end) end = ends[i]!;
      continue;
    }
    merged.push(start, end, label);
    start = starts[i]!;
    end = ends[i]!;
    label = labels[i]!;
  }
  merged.push(start, end, label);
  return merged;
}

const marker = (label: string): string => `[REDACTED:${label}]`;

const inputText = (input: RedactableInput): string => (input instanceof TaintedText ? input.unredacted() : input);

// ─── the redactor ─────────────────────────────────────────────────────────

/** Module-private access to a redactor's compiled state, for the incremental redactor. */
let compiledOf: (redactor: Redactor) => Compiled;

export class Redactor {
  /** name → { label, forms }. The forms are secret text: never expose this map. */
  readonly #secrets = new Map<string, { readonly label: string; readonly forms: readonly string[] }>();
  readonly #detectors: readonly Detector[];
  readonly #fragmentLength: number | null;
  #compiled: Compiled | null = null;

  constructor(options: RedactorOptions = {}) {
    const wanted = options.detectors ?? DETECTOR_IDS;
    this.#detectors = DETECTORS.filter((d) => wanted.includes(d.id));
    this.#fragmentLength = options.fragmentLength === undefined ? DEFAULT_FRAGMENT_LENGTH : options.fragmentLength;
    Object.freeze(this);
  }

  // ─── registration ───────────────────────────────────────────────────────

  /**
   * Adds a secret. Re-registering a handle's name replaces its value. The
   * material is read once (through `expose()`) and may be disposed afterwards.
   */
  register(handle: SecretHandle, material: SecretMaterial): Result<RedactorError, void> {
    if (material.disposed) return err({ _tag: 'SecretDisposed', label: handle.label });
    const secret = material.expose();
    if (secret.length < MIN_REDACTABLE_SECRET_LENGTH) {
      return err({ _tag: 'SecretTooShortToRedact', label: handle.label, minLength: MIN_REDACTABLE_SECRET_LENGTH });
    }
    if (!this.#secrets.has(handle.name) && this.#secrets.size >= MAX_REGISTERED_SECRETS) {
      return err({ _tag: 'RedactorFull', reason: `at most ${MAX_REGISTERED_SECRETS} secrets` });
    }
    const previous = this.#secrets.get(handle.name);
    const fragments = this.#fragmentLength === null ? [] : secretFragments(secret, this.#fragmentLength);
    this.#secrets.set(handle.name, { label: handle.label, forms: [...secretForms(secret), ...fragments] });
    this.#compiled = null;
    // Compilation is deferred to the next scan, so registering many secrets costs one build.
    if (this.#patternChars() > MAX_MATCHER_CHARS) {
      if (previous === undefined) this.#secrets.delete(handle.name);
      else this.#secrets.set(handle.name, previous);
      return err({ _tag: 'RedactorFull', reason: `registered forms exceed ${MAX_MATCHER_CHARS} characters` });
    }
    return ok(undefined);
  }

  /** Forgets a secret; returns whether it was registered. */
  unregister(handle: SecretHandle): boolean {
    const removed = this.#secrets.delete(handle.name);
    if (removed) this.#compiled = null;
    return removed;
  }

  get registeredCount(): number {
    return this.#secrets.size;
  }

  get detectorIds(): readonly DetectorId[] {
    return [...new Set(this.#detectors.map((d) => d.id))];
  }

  #patternChars(): number {
    let total = 0;
    for (const { forms } of this.#secrets.values()) for (const form of forms) total += form.length;
    return total;
  }

  #compile(): Result<RedactorError, Compiled> {
    const secretLabels: string[] = [];
    const patterns: MatcherPattern[] = [];
    for (const { label, forms } of this.#secrets.values()) {
      const index = secretLabels.length;
      secretLabels.push(label);
      for (const text of forms) patterns.push({ text, label: index });
    }
    let matcher: ExactMatcher | null = null;
    if (patterns.length > 0) {
      const built = ExactMatcher.compile(patterns);
      if (!built.ok) return err({ _tag: 'RedactorFull', reason: `${built.error.chars} pattern characters` });
      matcher = built.matcher;
    }
    this.#compiled = new Compiled(secretLabels, patterns, this.#detectors, matcher);
    return ok(this.#compiled);
  }

  static {
    compiledOf = (redactor) => redactor.#current();
  }

  #current(): Compiled {
    if (this.#compiled !== null) return this.#compiled;
    const built = this.#compile();
    // Compilation of an already-accepted set cannot exceed the bound it passed before.
    if (built._tag === 'Left') throw new Error(`redactor failed to rebuild: ${built.left._tag}`);
    return built.right;
  }

  // ─── redaction ──────────────────────────────────────────────────────────

  /** Redacts for a model: the only way to make ModelVisibleText. */
  redact(input: RedactableInput): ModelVisibleText {
    return mintModelVisibleText(this.redactText(input));
  }

  /** Redacts for people and logs (Telegram, GitHub comments, ledger, stderr). */
  redactText(input: RedactableInput): string {
    const text = inputText(input);
    const compiled = this.#current();
    const { spans } = compiled.scan(text, 0, 0);
    return spans.length === 0 ? text : render(text, 0, text.length, spans, compiled.labels);
  }

  /** Redacts and says what was found where (labels only, never values). */
  report(input: RedactableInput): RedactionReport {
    const text = inputText(input);
    const compiled = this.#current();
    const { spans } = compiled.scan(text, 0, 0);
    const findings: Finding[] = [];
    for (let k = 0; k < spans.length; k += 3) {
      const label = spans[k + 2]!;
      findings.push({
        label: compiled.labels[label]!,
        source: label < compiled.registeredCount ? 'registered' : 'detector',
        start: spans[k]!,
        end: spans[k + 1]!,
      });
    }
    return { text: spans.length === 0 ? text : render(text, 0, text.length, spans, compiled.labels), findings };
  }

  /** Whether the text holds anything this redactor would replace. */
  detects(input: RedactableInput): boolean {
    return this.#current().scan(inputText(input), 0, 0).spans.length > 0;
  }

  /**
   * Redacts every string (and object key) in a JSON-like value: MCP results,
   * API error bodies. Depth and size are bounded; past the bound the subtree
   * is replaced by a marker, never passed through.
   */
  redactJson(value: unknown): unknown {
    let nodes = 0;
    const walk = (v: unknown, depth: number): unknown => {
      nodes++;
      if (depth > MAX_JSON_DEPTH || nodes > MAX_JSON_NODES) return marker('too-large');
      if (typeof v === 'string') return this.redactText(v);
      if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
      if (v !== null && typeof v === 'object') {
        const out: Record<string, unknown> = {};
        for (const [key, item] of Object.entries(v)) out[this.redactText(key)] = walk(item, depth + 1);
        return out;
      }
      return v;
    };
    return walk(value, 0);
  }

  createIncremental(options: IncrementalOptions = {}): IncrementalRedactor {
    return new IncrementalRedactor(this, options);
  }

  toString(): string {
    return `Redactor(${this.#secrets.size} secrets, ${this.#detectors.length} detectors)`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  toJSON(): never {
    throw new TypeError('a Redactor holds secrets and cannot be serialized');
  }
}

function render(text: string, from: number, to: number, spans: readonly number[], labels: readonly string[]): string {
  let out = '';
  let position = from;
  for (let k = 0; k < spans.length; k += 3) {
    const start = spans[k]!;
    const end = spans[k + 1]!;
    if (end > to) break;
    out += text.slice(position, start) + marker(labels[spans[k + 2]!]!);
    position = end;
  }
  return out + text.slice(position, to);
}

// ─── incremental ──────────────────────────────────────────────────────────

export interface IncrementalOptions {
  /**
   * Characters that must be pending beyond the hold-back before a push emits
   * anything. Larger batches cost fewer rescans of the held tail; smaller
   * ones cut latency. Default: the hold-back length.
   */
  readonly batchChars?: number;
  /** Bound on held characters (a chain of overlapping matches); past it the held text is redacted whole. */
  readonly maxPendingChars?: number;
}

/**
 * Redacts a stream chunk by chunk. It holds back the last (longest form − 1)
 * characters, and at least one detector's bound, so a secret split across
 * chunks at any boundary is still caught; and it never cuts through a
 * match. `push` returns what is safe to emit now; `end` returns the rest.
 */
export class IncrementalRedactor {
  readonly #redactor: Redactor;
  readonly #batchChars: number | null;
  readonly #maxPendingChars: number;
  #pending = '';
  #context = '';
  /** After an overflow, matches may start inside the context and reach into new text. */
  #recovering = false;
  #ended = false;

  constructor(redactor: Redactor, options: IncrementalOptions = {}) {
    this.#redactor = redactor;
    this.#batchChars = options.batchChars === undefined ? null : Math.max(1, Math.floor(options.batchChars));
    this.#maxPendingChars = options.maxPendingChars ?? MAX_PENDING_CHARS;
  }

  /** Characters currently held back. */
  get pendingLength(): number {
    return this.#pending.length;
  }

  push(chunk: RedactableInput): string {
    if (this.#ended) throw new Error('IncrementalRedactor.push after end');
    this.#pending += inputText(chunk);
    const compiled = compiledOf(this.#redactor);
    const batch = this.#batchChars ?? Math.max(compiled.holdChars, 1);
    if (this.#pending.length < compiled.holdChars + batch) return '';
    return this.#process(compiled, false);
  }

  end(): string {
    if (this.#ended) return '';
    const out = this.#process(compiledOf(this.#redactor), true);
    this.#ended = true;
    this.#pending = '';
    this.#context = '';
    return out;
  }

  #process(compiled: Compiled, final: boolean): string {
    const text = this.#context + this.#pending;
    const from = this.#context.length;
    const { spans, extents } = compiled.scan(text, from, this.#recovering ? 0 : from);
    const cut = final ? text.length : cutPoint(compiled, text, from, spans, extents);
    let out = '';
    if (cut > from) {
      out = render(text, from, cut, spans, compiled.labels);
      this.#pending = text.slice(cut);
      this.#context = text.slice(Math.max(0, cut - CONTEXT_CHARS), cut);
      this.#recovering = false;
    }
    if (this.#pending.length <= this.#maxPendingChars) return out;
    // A chain of overlapping matches longer than the bound: fail closed. Everything held is
    // replaced, and its tail is kept as context so matches starting in it are still finished.
    const held = this.#pending;
    const tail = Math.min(held.length, compiled.holdChars + 1 + CONTEXT_CHARS);
    this.#context = held.slice(held.length - tail);
    this.#pending = '';
    this.#recovering = true;
    return out + marker('overflow');
  }
}

/**
 * Where a stream may cut: at least `holdChars` before the end, before the
 * first trigger of a long detector in its window, and never inside a match
 * (a match's extent includes its visible context such as `password=`, which
 * must not be emitted without the value it introduces).
 */
function cutPoint(
  compiled: Compiled,
  text: string,
  from: number,
  spans: readonly number[],
  extents: readonly number[],
): number {
  const length = text.length;
  let cut = length - compiled.holdChars;
  for (const { trigger, window } of compiled.triggered) {
    const at = text.indexOf(trigger, Math.max(from, length - window));
    if (at >= 0 && at < cut) cut = at;
  }
  if (cut <= from) return from;
  let moved = true;
  while (moved) {
    moved = false;
    for (let k = 0; k < extents.length; k += 2) {
      if (extents[k]! < cut && extents[k + 1]! > cut) {
        cut = extents[k]!;
        moved = true;
      }
    }
    for (let k = 0; k < spans.length; k += 3) {
      if (spans[k]! < cut && spans[k + 1]! > cut) {
        cut = spans[k]!;
        moved = true;
      }
    }
  }
  return Math.max(cut, from);
}
