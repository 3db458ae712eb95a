/**
 * SecretMaterial: the bytes of one secret, held where ordinary code cannot
 * reach them by accident. Every way JavaScript turns an object into text
 * (String(), template literals, `+`, util.inspect, console.log, JSON) yields
 * `[secret]` or throws; structured cloning throws; equality is identity only.
 * The one way out is `expose()`, kept as a single method so `grep expose(`
 * finds every place a secret leaves its box.
 *
 * Security note: JavaScript cannot promise to wipe memory. `dispose()`
 * zero-fills the one buffer this object owns, but every string `expose()`
 * returned, and any copy the engine made (string interning, garbage not yet
 * collected, buffers inside node:crypto), lives on until the collector
 * reclaims it. Disposal narrows the window; it does not close it.
 */
import { err, ok, type Result } from '@crustcore/kernel';

// ─── model ────────────────────────────────────────────────────────────────

/** Longest secret accepted: API keys, passwords and PEM keys fit with room to spare. */
export const MAX_SECRET_BYTES = 64 * 1024;

export type SecretMaterialError =
  | { readonly _tag: 'SecretEmpty' }
  | { readonly _tag: 'SecretTooLong'; readonly byteLength: number; readonly maxBytes: number }
  | { readonly _tag: 'SecretNotText' };

const SHOWN = '[secret]';
const inspectCustom = Symbol.for('nodejs.util.inspect.custom');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

export class SecretMaterial {
  /** Null once disposed. */
  #bytes: Uint8Array | null;

  /**
   * An own enumerable property whose value cannot be structured-cloned, so
   * `structuredClone(material)` and `postMessage(material)` throw
   * DataCloneError instead of quietly producing an empty object.
   */
  readonly cloneGuard: symbol = Symbol('SecretMaterial cannot be cloned');

  private constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    Object.freeze(this);
  }

  // ─── constructors ───────────────────────────────────────────────────────

  /** Copies `bytes` (the caller may zero its own copy afterwards). The bytes must be UTF-8 text. */
  static fromBytes(bytes: Uint8Array): Result<SecretMaterialError, SecretMaterial> {
    if (bytes.byteLength === 0) return err({ _tag: 'SecretEmpty' });
    if (bytes.byteLength > MAX_SECRET_BYTES) {
      return err({ _tag: 'SecretTooLong', byteLength: bytes.byteLength, maxBytes: MAX_SECRET_BYTES });
    }
    try {
      strictUtf8.decode(bytes);
    } catch {
      return err({ _tag: 'SecretNotText' });
    }
    return ok(new SecretMaterial(Uint8Array.from(bytes)));
  }

  static fromText(text: string): Result<SecretMaterialError, SecretMaterial> {
    if (typeof text !== 'string' || text.length === 0) return err({ _tag: 'SecretEmpty' });
    if (text.length > MAX_SECRET_BYTES) {
      return err({ _tag: 'SecretTooLong', byteLength: text.length, maxBytes: MAX_SECRET_BYTES });
    }
    const bytes = encoder.encode(text);
    if (bytes.byteLength > MAX_SECRET_BYTES) {
      bytes.fill(0);
      return err({ _tag: 'SecretTooLong', byteLength: bytes.byteLength, maxBytes: MAX_SECRET_BYTES });
    }
    // TextEncoder turns a lone surrogate into U+FFFD; a secret must round-trip exactly.
    if (strictUtf8.decode(bytes) !== text) {
      bytes.fill(0);
      return err({ _tag: 'SecretNotText' });
    }
    return ok(new SecretMaterial(bytes));
  }

  // ─── the one way out ────────────────────────────────────────────────────

  /**
   * The secret as text. Every call site is a place the secret leaves this
   * box; keep them few, and never hand the result to a logger or a model.
   * Calling it after `dispose()` is a bug and throws.
   */
  expose(): string {
    if (this.#bytes === null) throw new TypeError('SecretMaterial was disposed');
    return strictUtf8.decode(this.#bytes);
  }

  // ─── lifetime ───────────────────────────────────────────────────────────

  get byteLength(): number {
    return this.#bytes === null ? 0 : this.#bytes.byteLength;
  }

  get disposed(): boolean {
    return this.#bytes === null;
  }

  /** Zero-fills the owned buffer and forgets it. Idempotent. See the security note above. */
  dispose(): void {
    if (this.#bytes === null) return;
    this.#bytes.fill(0);
    this.#bytes = null;
  }

  // ─── every path to text says [secret] ───────────────────────────────────

  toString(): string {
    return SHOWN;
  }

  [Symbol.toPrimitive](): string {
    return SHOWN;
  }

  [inspectCustom](): string {
    return SHOWN;
  }

  get [Symbol.toStringTag](): string {
    return 'SecretMaterial';
  }

  /** JSON.stringify must never succeed: a serialized secret is a leaked secret. */
  toJSON(): never {
    throw new TypeError('SecretMaterial cannot be serialized to JSON');
  }
}

export const isSecretMaterial = (value: unknown): value is SecretMaterial => value instanceof SecretMaterial;
