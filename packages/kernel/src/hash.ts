/**
 * Hashing for the kernel: portable SHA-256 (sha256.ts, no `node:`),
 * plus a canonical JSON encoding so that "the hash of an operation" means the
 * same bytes on every machine. Node-side packages may use node:crypto for
 * throughput; both produce identical digests.
 */
import type { Hash32 } from './ids.js';
import { sha256HexOf } from './sha256.js';

const utf8 = new TextEncoder();

export const sha256Hex = (data: Uint8Array | string): Hash32 =>
  sha256HexOf(typeof data === 'string' ? utf8.encode(data) : data) as Hash32;

/** JSON value accepted by the canonical encoder. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json | undefined };

/**
 * Canonical JSON: object keys sorted by UTF-16 code unit, no whitespace,
 * `undefined` members dropped, non-finite numbers rejected. Stable across
 * runs and engines, which is what hashing needs.
 */
export function canonicalJson(value: Json): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new RangeError('canonicalJson: non-finite number');
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    default:
      break;
  }
  if (Array.isArray(value)) {
    return `[${(value as readonly Json[]).map(canonicalJson).join(',')}]`;
  }
  const obj = value as { readonly [k: string]: Json | undefined };
  const keys = Object.keys(obj).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const member = obj[key];
    if (member === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${parts.join(',')}}`;
}

export const hashJson = (value: Json): Hash32 => sha256Hex(canonicalJson(value));
