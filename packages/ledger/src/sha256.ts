/**
 * SHA-256 for the ledger. The ledger takes its hash function as a value so
 * the same code runs on node:crypto (≈10× faster here: CPU SHA instructions)
 * or on @noble/hashes (portable, what the kernel uses). Both must produce the
 * same digest for the same bytes; a test checks it on random inputs.
 */
import { hash as nodeHash } from 'node:crypto';
import { sha256 } from '@noble/hashes/sha2.js';

/** Returns the 32-byte SHA-256 digest of `bytes`. Must not keep a reference to `bytes`. */
export type Sha256 = (bytes: Uint8Array) => Uint8Array;

/** node:crypto one-shot SHA-256 (no Hash object per call: cheaper for small frames). */
export const nodeSha256: Sha256 = (bytes) => nodeHash('sha256', bytes, 'buffer');

/** @noble/hashes SHA-256: the kernel's implementation. */
export const nobleSha256: Sha256 = (bytes) => sha256(bytes);

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!]!;
  return out;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Parses 64 lowercase hex chars into 32 bytes, or returns undefined. */
export function fromHex32(hex: string): Uint8Array | undefined {
  if (!HEX64.test(hex)) return undefined;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** Constant-time-irrelevant equality for public digests. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
