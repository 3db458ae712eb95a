/**
 * SecretHandle: the name of a secret, safe to show anywhere (config files,
 * logs, the model's context). Its URI form `secret://NAME` is the only way a
 * config file may mention a secret; the resolver refuses anything else, and
 * refuses without repeating the value, because a value that is not a
 * handle may be the secret itself pasted into the wrong place.
 */
import { type Brand, err, ok, type Result, type SecretId, sha256Hex } from '@crustcore/kernel';
import * as t from 'io-ts';
import { DETECTORS, shannonEntropy } from './redact/detectors.js';

// ─── model ────────────────────────────────────────────────────────────────

export type SecretName = Brand<string, 'SecretName'>;
export type SecretUri = `secret://${string}`;

export const SECRET_URI_PREFIX = 'secret://';
/** Letters, digits, `_`, `.`, `-`; starts with a letter; at most 64 characters. */
const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
/** Printable, no brackets (labels appear inside `[REDACTED:…]`), at most 64 characters. */
const LABEL_PATTERN = /^[^\u0000-\u001f\u007f[\]]{1,64}$/u;

export type SecretHandleError =
  | { readonly _tag: 'InvalidSecretName'; readonly reason: string }
  | { readonly _tag: 'InvalidSecretLabel'; readonly reason: string };

export type SecretReferenceError =
  | SecretHandleError
  /** The value is not `secret://NAME`. The value itself is never repeated. */
  | { readonly _tag: 'NotASecretReference'; readonly reason: string }
  /** The value looks like a credential pasted into config. The value itself is never repeated. */
  | { readonly _tag: 'RawSecretInConfig'; readonly reason: string };

const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

export class SecretHandle {
  readonly #name: SecretName;
  readonly #label: string;
  readonly #id: SecretId;

  private constructor(name: SecretName, label: string) {
    this.#name = name;
    this.#label = label;
    // Derived from the name, so the same name always has the same id; the body fits SecretId's alphabet.
    this.#id = `s_${sha256Hex(`crustcore-secret:${name}`).slice(0, 24)}` as SecretId;
    Object.freeze(this);
  }

  // ─── constructors ───────────────────────────────────────────────────────

  static create(name: string, label?: string): Result<SecretHandleError, SecretHandle> {
    const parsed = parseSecretName(name);
    if (parsed._tag === 'Left') return parsed;
    const shown = label ?? name;
    if (!LABEL_PATTERN.test(shown)) {
      return err({ _tag: 'InvalidSecretLabel', reason: 'a label is 1-64 printable characters without [ or ]' });
    }
    return ok(new SecretHandle(parsed.right, shown));
  }

  // ─── accessors ──────────────────────────────────────────────────────────

  get id(): SecretId {
    return this.#id;
  }
  get name(): SecretName {
    return this.#name;
  }
  get label(): string {
    return this.#label;
  }
  get uri(): SecretUri {
    return `${SECRET_URI_PREFIX}${this.#name}`;
  }

  equals(other: SecretHandle): boolean {
    return this.#name === other.#name;
  }

  toString(): string {
    return this.uri;
  }

  [inspectCustom](): string {
    return `SecretHandle(${this.uri})`;
  }

  toJSON(): { readonly id: SecretId; readonly name: SecretName; readonly label: string; readonly uri: SecretUri } {
    return { id: this.#id, name: this.#name, label: this.#label, uri: this.uri };
  }
}

export const isSecretHandle = (value: unknown): value is SecretHandle => value instanceof SecretHandle;

export function parseSecretName(input: string): Result<SecretHandleError, SecretName> {
  if (typeof input !== 'string' || !NAME_PATTERN.test(input)) {
    return err({
      _tag: 'InvalidSecretName',
      reason: 'a secret name starts with a letter and has at most 64 of [A-Za-z0-9_.-]',
    });
  }
  return ok(input as SecretName);
}

// ─── the config resolver ──────────────────────────────────────────────────

/** Whether a config value looks like a credential rather than a handle or an ordinary setting. */
export function looksLikeRawSecret(value: string): boolean {
  for (const detector of DETECTORS) {
    const regex = new RegExp(detector.source, detector.flags);
    for (let match = regex.exec(value); match !== null; match = regex.exec(value)) {
      const found = match[2] ?? '';
      if (found.length > 0 && (detector.accept === null || detector.accept(found))) return true;
      regex.lastIndex = match.index + 1;
    }
  }
  // A long unbroken high-entropy word is what random keys look like.
  return value.length >= 16 && !/\s/.test(value) && shannonEntropy(value) >= 3.5;
}

/**
 * Parses a config value that must name a secret. Accepts exactly
 * `secret://NAME`; anything else is refused, and a raw-looking value is
 * refused as `RawSecretInConfig` so the user learns to move it into the store.
 */
export function parseSecretReference(value: unknown): Result<SecretReferenceError, SecretHandle> {
  if (typeof value !== 'string') {
    return err({ _tag: 'NotASecretReference', reason: 'expected a string of the form secret://NAME' });
  }
  if (!value.startsWith(SECRET_URI_PREFIX)) {
    if (looksLikeRawSecret(value)) {
      return err({
        _tag: 'RawSecretInConfig',
        reason: 'this looks like a credential; store it with `crustcore secret set NAME` and write secret://NAME here',
      });
    }
    return err({ _tag: 'NotASecretReference', reason: 'expected secret://NAME' });
  }
  return SecretHandle.create(value.slice(SECRET_URI_PREFIX.length));
}

/**
 * io-ts codec for config fields that hold a secret handle. Failures carry a
 * placeholder instead of the input, so an error report cannot print a
 * pasted credential.
 */
const WITHHELD = '[value withheld]';

export const SecretReferenceC = new t.Type<SecretHandle, SecretUri, unknown>(
  'SecretReference',
  isSecretHandle,
  (input, context) => {
    const parsed = parseSecretReference(input);
    return parsed._tag === 'Right'
      ? t.success(parsed.right)
      : t.failures([
          {
            value: WITHHELD,
            // io-ts contexts carry the `actual` input at every level (the enclosing config object too).
            context: context.map((entry) => ({ ...entry, actual: WITHHELD })),
            message: `${parsed.left._tag}: ${parsed.left.reason}`,
          },
        ]);
  },
  (handle) => handle.uri,
);
