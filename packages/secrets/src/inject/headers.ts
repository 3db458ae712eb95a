/**
 * Per-request header injection by the trusted process: the secret goes into
 * one outgoing request's headers and nowhere else (not an environment, not a
 * file, not a URL).
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { SecretMaterial } from '../material.js';

export type HeaderInjectionError =
  | { readonly _tag: 'HeaderNameInvalid'; readonly name: string }
  | { readonly _tag: 'SecretUnusableInHeader'; readonly reason: string };

export interface CredentialHeaderOptions {
  /** Header name; default `authorization`. */
  readonly header?: string;
  /** Prefix such as `Bearer` or `token`; null sends the bare secret (e.g. `x-api-key`). Default `Bearer`. */
  readonly scheme?: string | null;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Returns `base` plus the credential header. A secret with CR, LF or NUL
 * would split the header, so it is refused rather than trimmed.
 */
export function withCredentialHeader(
  base: Readonly<Record<string, string>>,
  material: SecretMaterial,
  options: CredentialHeaderOptions = {},
): Result<HeaderInjectionError, Record<string, string>> {
  const header = (options.header ?? 'authorization').toLowerCase();
  if (!TOKEN.test(header)) return err({ _tag: 'HeaderNameInvalid', name: header });
  const scheme = options.scheme === undefined ? 'Bearer' : options.scheme;
  if (scheme !== null && !TOKEN.test(scheme)) return err({ _tag: 'SecretUnusableInHeader', reason: 'bad scheme' });
  const secret = material.expose();
  if (/[\r\n\u0000]/.test(secret)) {
    return err({ _tag: 'SecretUnusableInHeader', reason: 'the secret contains a line break or NUL' });
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    // Whatever credential the caller already put there is replaced, not doubled.
    if (name.toLowerCase() !== header) out[name] = value;
  }
  out[header] = scheme === null ? secret : `${scheme} ${secret}`;
  return ok(out);
}
