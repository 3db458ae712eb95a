/**
 * The vault file format, version 1:
 *
 *   magic "CRUSTVLT" (8) ‖ version u16 BE ‖ header length u32 BE ‖ header (UTF-8 JSON)
 *   ‖ ciphertext ‖ GCM tag (16)
 *
 * AES-256-GCM; everything before the ciphertext is authenticated as AAD, so
 * the KDF parameters cannot be swapped. The header records how the key is
 * made (scrypt parameters and salt, or "key file"), a nonce (fresh per write)
 * and a key check (HMAC of a constant) that tells a wrong key apart from a
 * damaged file. The plaintext is a binary list of entries, so secret values
 * are never JavaScript strings while the vault is read or written.
 */
import { Buffer } from 'node:buffer';
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { err, ok, type Result } from '@crustcore/kernel';
import { isLeft } from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { VaultError } from './errors.js';

// ─── model ────────────────────────────────────────────────────────────────

export const VAULT_MAGIC = Buffer.from('CRUSTVLT', 'ascii');
export const VAULT_FORMAT_VERSION = 1;
export const MAX_VAULT_BYTES = 64 * 1024 * 1024;
export const MAX_VAULT_ENTRIES = 4096;
const MAX_HEADER_BYTES = 4096;
const PREAMBLE_BYTES = 8 + 2 + 4;
const TAG_BYTES = 16;
const NONCE_BYTES = 12;
export const KEY_BYTES = 32;
const KEY_CHECK_LABEL = 'crustcore-vault-key-check-v1';

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** 2^15 · 8 · 128 B = 32 MiB and ≈ 0.1 s here: slow enough to hurt guessing, fast enough for a CLI. */
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };

const Base64 = new t.Type<string, string, unknown>(
  'Base64',
  (u): u is string => typeof u === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(u) && u.length <= 1024,
  (u, c) =>
    typeof u === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(u) && u.length <= 1024 ? t.success(u) : t.failure(u, c),
  (a) => a,
);

/** Bounds refuse a crafted header that would make scrypt eat the machine. */
const ScryptKdfC = t.type({
  kind: t.literal('scrypt'),
  N: t.refinement(t.number, (n) => Number.isInteger(n) && n >= 2 ** 10 && n <= 2 ** 20 && (n & (n - 1)) === 0, 'N'),
  r: t.refinement(t.number, (n) => Number.isInteger(n) && n >= 1 && n <= 32, 'r'),
  p: t.refinement(t.number, (n) => Number.isInteger(n) && n >= 1 && n <= 16, 'p'),
  salt: Base64,
});
const KeyFileKdfC = t.type({ kind: t.literal('key-file') });
export const KdfC = t.union([ScryptKdfC, KeyFileKdfC]);
export type Kdf = t.TypeOf<typeof KdfC>;

const HeaderC = t.type({
  cipher: t.literal('aes-256-gcm'),
  kdf: KdfC,
  keyCheck: Base64,
  nonce: Base64,
});
type Header = t.TypeOf<typeof HeaderC>;

export interface VaultEntry {
  readonly name: string;
  readonly label: string;
  readonly updatedAtMs: number;
  /** Owned by whoever holds the entry; zero it when done. */
  readonly value: Buffer;
}

// ─── key check ────────────────────────────────────────────────────────────

export const keyCheckOf = (key: Uint8Array): Buffer =>
  createHmac('sha256', key).update(KEY_CHECK_LABEL).digest().subarray(0, 16);

// ─── plaintext ────────────────────────────────────────────────────────────

function encodeEntries(entries: readonly VaultEntry[]): Buffer {
  let size = 4;
  const encoded = entries.map((entry) => {
    const name = Buffer.from(entry.name, 'utf8');
    const label = Buffer.from(entry.label, 'utf8');
    size += 2 + name.length + 2 + label.length + 8 + 4 + entry.value.length;
    return { name, label, entry };
  });
  const out = Buffer.alloc(size);
  let at = out.writeUInt32BE(entries.length, 0);
  for (const { name, label, entry } of encoded) {
    at = out.writeUInt16BE(name.length, at);
    at += name.copy(out, at);
    at = out.writeUInt16BE(label.length, at);
    at += label.copy(out, at);
    at = out.writeDoubleBE(entry.updatedAtMs, at);
    at = out.writeUInt32BE(entry.value.length, at);
    at += entry.value.copy(out, at);
  }
  return out;
}

/** Parses the plaintext; values are copied out, so the caller may zero `plain`. */
function decodeEntries(plain: Buffer): Result<VaultError, VaultEntry[]> {
  const corrupt = (reason: string): Result<VaultError, VaultEntry[]> => err({ _tag: 'VaultCorrupt', reason });
  if (plain.length < 4) return corrupt('entry table truncated');
  const count = plain.readUInt32BE(0);
  if (count > MAX_VAULT_ENTRIES) return corrupt('too many entries');
  const entries: VaultEntry[] = [];
  let at = 4;
  const need = (bytes: number): boolean => at + bytes <= plain.length;
  for (let i = 0; i < count; i++) {
    if (!need(2)) return corrupt('entry truncated');
    const nameLength = plain.readUInt16BE(at);
    at += 2;
    if (!need(nameLength + 2)) return corrupt('entry truncated');
    const name = plain.toString('utf8', at, at + nameLength);
    at += nameLength;
    const labelLength = plain.readUInt16BE(at);
    at += 2;
    if (!need(labelLength + 12)) return corrupt('entry truncated');
    const label = plain.toString('utf8', at, at + labelLength);
    at += labelLength;
    const updatedAtMs = plain.readDoubleBE(at);
    at += 8;
    const valueLength = plain.readUInt32BE(at);
    at += 4;
    if (!need(valueLength)) return corrupt('entry truncated');
    entries.push({ name, label, updatedAtMs, value: Buffer.from(plain.subarray(at, at + valueLength)) });
    at += valueLength;
  }
  if (at !== plain.length) return corrupt('trailing bytes after the entries');
  return ok(entries);
}

// ─── the container ────────────────────────────────────────────────────────

/** Encrypts entries under `key` into a complete vault file. */
export function sealVault(key: Uint8Array, kdf: Kdf, entries: readonly VaultEntry[]): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const header: Header = {
    cipher: 'aes-256-gcm',
    kdf,
    keyCheck: keyCheckOf(key).toString('base64'),
    nonce: nonce.toString('base64'),
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const preamble = Buffer.alloc(PREAMBLE_BYTES);
  VAULT_MAGIC.copy(preamble, 0);
  preamble.writeUInt16BE(VAULT_FORMAT_VERSION, 8);
  preamble.writeUInt32BE(headerBytes.length, 10);
  const aad = Buffer.concat([preamble, headerBytes]);
  const plain = encodeEntries(entries);
  try {
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([aad, body, cipher.getAuthTag()]);
  } finally {
    plain.fill(0);
  }
}

/** The parts of a vault file readable before the key is known. */
export interface VaultEnvelope {
  readonly kdf: Kdf;
  readonly keyCheck: Buffer;
  readonly nonce: Buffer;
  readonly aad: Buffer;
  readonly body: Buffer;
  readonly tag: Buffer;
}

export function parseVaultEnvelope(file: Buffer): Result<VaultError, VaultEnvelope> {
  const corrupt = (reason: string): Result<VaultError, VaultEnvelope> => err({ _tag: 'VaultCorrupt', reason });
  if (file.length > MAX_VAULT_BYTES)
    return err({ _tag: 'VaultTooLarge', bytes: file.length, maxBytes: MAX_VAULT_BYTES });
  if (file.length < PREAMBLE_BYTES || !file.subarray(0, 8).equals(VAULT_MAGIC)) return corrupt('not a crustcore vault');
  const version = file.readUInt16BE(8);
  if (version !== VAULT_FORMAT_VERSION) return err({ _tag: 'VaultUnsupportedVersion', version });
  const headerLength = file.readUInt32BE(10);
  if (headerLength > MAX_HEADER_BYTES || PREAMBLE_BYTES + headerLength + TAG_BYTES > file.length) {
    return corrupt('header length out of range');
  }
  let json: unknown;
  try {
    json = JSON.parse(file.toString('utf8', PREAMBLE_BYTES, PREAMBLE_BYTES + headerLength));
  } catch {
    return corrupt('header is not JSON');
  }
  const header = HeaderC.decode(json);
  if (isLeft(header)) return corrupt('header fields are invalid');
  const nonce = Buffer.from(header.right.nonce, 'base64');
  const keyCheck = Buffer.from(header.right.keyCheck, 'base64');
  if (nonce.length !== NONCE_BYTES || keyCheck.length !== 16) return corrupt('header fields are invalid');
  const bodyStart = PREAMBLE_BYTES + headerLength;
  return ok({
    kdf: header.right.kdf,
    keyCheck,
    nonce,
    aad: file.subarray(0, bodyStart),
    body: file.subarray(bodyStart, file.length - TAG_BYTES),
    tag: file.subarray(file.length - TAG_BYTES),
  });
}

/** Authenticates and decrypts; all or nothing. */
export function openVault(key: Uint8Array, envelope: VaultEnvelope): Result<VaultError, VaultEntry[]> {
  if (!timingSafeEqual(keyCheckOf(key), envelope.keyCheck)) return err({ _tag: 'VaultWrongKey' });
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, envelope.nonce);
    decipher.setAAD(envelope.aad);
    decipher.setAuthTag(envelope.tag);
    // GCM releases nothing until final() has checked the tag: update's output is discarded on failure.
    const head = decipher.update(envelope.body);
    try {
      decipher.final();
    } catch {
      head.fill(0);
      return err({ _tag: 'VaultCorrupt', reason: 'authentication failed' });
    }
    plain = head;
  } catch {
    return err({ _tag: 'VaultCorrupt', reason: 'could not decrypt' });
  }
  try {
    return decodeEntries(plain);
  } finally {
    plain.fill(0);
  }
}
