/**
 * Content-addressed blob store. A blob's key is the SHA-256 of its bytes; the
 * database checks that (a CHECK on `encode(sha256(content), 'hex')`), so a
 * row can never lie about its content. Storing the same bytes twice stores
 * them once.
 */
import { err, type Hash32, isHash32, ok, type Result, sha256Hex } from '@crustcore/kernel';
import type { DbExecutor } from './db.js';
import { DbBytes, decodeRow } from './db-values.js';
import { invalidInput, type StateError } from './errors.js';

export const MAX_BLOB_BYTES = 32 * 1024 * 1024;

export interface StoredBlob {
  readonly sha256: Hash32;
  readonly byteSize: number;
  /** False when the same content was already stored. */
  readonly created: boolean;
}

const toBytes = (content: Uint8Array | string): Uint8Array =>
  typeof content === 'string' ? new TextEncoder().encode(content) : content;

export async function putBlob(db: DbExecutor, content: Uint8Array | string): Promise<Result<StateError, StoredBlob>> {
  const bytes = toBytes(content);
  if (bytes.byteLength > MAX_BLOB_BYTES) return err(invalidInput('content', `larger than ${MAX_BLOB_BYTES} bytes`));
  const sha256 = sha256Hex(bytes);
  const inserted = await db.query(
    `INSERT INTO crust_blobs (sha256, byte_size, content) VALUES ($1::text, $2::int4, $3::bytea)
     ON CONFLICT (sha256) DO NOTHING RETURNING sha256`,
    [sha256, bytes.byteLength, bytes],
  );
  return ok({ sha256, byteSize: bytes.byteLength, created: inserted.rows.length === 1 });
}

export async function getBlob(db: DbExecutor, sha256: string): Promise<Uint8Array | null> {
  if (!isHash32(sha256)) return null;
  const found = await db.query<{ content: unknown }>('SELECT content FROM crust_blobs WHERE sha256 = $1::text', [
    sha256,
  ]);
  const row = found.rows[0];
  return row === undefined ? null : decodeRow(DbBytes, row.content, 'blob');
}

export async function hasBlob(db: DbExecutor, sha256: string): Promise<boolean> {
  if (!isHash32(sha256)) return false;
  const found = await db.query('SELECT 1 FROM crust_blobs WHERE sha256 = $1::text', [sha256]);
  return found.rows.length === 1;
}
