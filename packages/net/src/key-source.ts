/**
 * Where a provider's API key comes from. The net pack never reads environment
 * variables or files for keys: the caller hands each provider its own source,
 * normally a `SecretMaterial` from @crustcore/secrets (anything with a single
 * `expose()` works) or an async function that fetches one on demand.
 */
import { err, ok, type Result } from '@crustcore/kernel';

// ─── model ────────────────────────────────────────────────────────────────

export interface ExposableSecret {
  expose(): string;
}
export type KeySource = ExposableSecret | (() => Promise<string> | string);

export interface KeyUnavailable {
  readonly _tag: 'KeyUnavailable';
  readonly reason: string;
}

// ─── combinators ──────────────────────────────────────────────────────────

/**
 * Reads the key at request time (so a rotated secret is picked up). A source
 * that throws, or yields an empty string, is reported without its message:
 * a failing secret store's error text is not ours to forward.
 */
export async function readKey(source: KeySource): Promise<Result<KeyUnavailable, string>> {
  let value: unknown;
  try {
    value = typeof source === 'function' ? await source() : source.expose();
  } catch {
    return err({ _tag: 'KeyUnavailable', reason: 'the key source failed' });
  }
  if (typeof value !== 'string' || value.length === 0) {
    return err({ _tag: 'KeyUnavailable', reason: 'the key source returned no key' });
  }
  if (/[\r\n]/.test(value)) {
    // A newline in a header value is header injection; refuse rather than trim.
    return err({ _tag: 'KeyUnavailable', reason: 'the key contains a line break' });
  }
  return ok(value);
}
