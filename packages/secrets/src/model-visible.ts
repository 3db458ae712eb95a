/**
 * Text a model may see. `ModelVisibleText` has a private constructor that
 * demands a module-private token, and the only code that holds the minting
 * function is the redactor (redact/redactor.ts; index.ts does not export
 * `mintModelVisibleText`). So every ModelVisibleText in the program passed
 * through redaction, and a raw string, a `TaintedText` or a `SecretMaterial`
 * is a type error where one is required.
 *
 * `TaintedText` marks secret-bearing data (tool output, worker transcripts,
 * error text) that has not been redacted yet. It prints as `[tainted]`, so a
 * stray log line shows that something was skipped rather than what it was.
 */

// ─── model ────────────────────────────────────────────────────────────────

const MINT = Symbol('crustcore.model-visible-text.mint');
const inspectCustom = Symbol.for('nodejs.util.inspect.custom');
let mint: (text: string) => ModelVisibleText;

export class ModelVisibleText {
  readonly #text: string;

  // The token check stops a cast `new` at run time; `private` stops it at compile time.
  private constructor(token: symbol, text: string) {
    if (token !== MINT) throw new TypeError('ModelVisibleText can only be made by the redactor');
    this.#text = text;
    Object.freeze(this);
  }

  static {
    mint = (text) => new ModelVisibleText(MINT, text);
  }

  get text(): string {
    return this.#text;
  }

  get length(): number {
    return this.#text.length;
  }

  /** Joining two redacted texts yields redacted text; nothing else can be appended. */
  concat(other: ModelVisibleText): ModelVisibleText {
    return new ModelVisibleText(MINT, this.#text + other.#text);
  }

  toString(): string {
    return this.#text;
  }

  toJSON(): string {
    return this.#text;
  }
}

/** Only redact/redactor.ts may call this. */
export const mintModelVisibleText = (text: string): ModelVisibleText => mint(text);

export const isModelVisibleText = (value: unknown): value is ModelVisibleText => value instanceof ModelVisibleText;

export class TaintedText {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
    Object.freeze(this);
  }

  /** The raw text, for the redactor. Anything else reading it is handling secret-bearing data. */
  unredacted(): string {
    return this.#text;
  }

  get length(): number {
    return this.#text.length;
  }

  toString(): string {
    return '[tainted]';
  }

  [Symbol.toPrimitive](): string {
    return '[tainted]';
  }

  [inspectCustom](): string {
    return '[tainted]';
  }

  toJSON(): never {
    throw new TypeError('TaintedText must be redacted before it is serialized');
  }
}

export const taint = (text: string): TaintedText => new TaintedText(text);
