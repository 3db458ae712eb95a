/**
 * Rows ↔ memories. The SQL selects every column in a driver-neutral form
 * (bigint as float8, jsonb and arrays as text) and this module decodes it,
 * so PGlite and PostgreSQL results read the same.
 */
import { isLeft } from 'fp-ts/lib/Either.js';
import { isMemoryKind, type Memory, MemoryDetailCodec } from './types.js';

/** The column list every memory query selects (table alias `m`). */
export const MEMORY_COLUMNS =
  'm.id, m.repo_id, m.kind, m.body, m.detail::text AS detail, m.source, m.created_at_ms::float8 AS created_at_ms';

export interface MemoryRow {
  readonly id: string;
  readonly repo_id: string;
  readonly kind: string;
  readonly body: string;
  readonly detail: string;
  readonly source: string;
  readonly created_at_ms: number;
}

export function memoryFromRow(row: MemoryRow): Memory {
  const detail = MemoryDetailCodec.decode(JSON.parse(row.detail));
  if (isLeft(detail) || !isMemoryKind(row.kind) || (row.source !== 'person' && row.source !== 'verifier')) {
    // The table's CHECKs and this package are the only writers: a bad row is a bug, not input.
    throw new Error(`memory row ${row.id} does not decode`);
  }
  return {
    id: row.id,
    repoId: row.repo_id,
    kind: row.kind,
    body: row.body,
    fix: detail.right.fix,
    tags: detail.right.tags,
    source: row.source,
    taskId: detail.right.taskId,
    createdAtMs: Number(row.created_at_ms),
  };
}

/** A PostgreSQL array literal of numbers (`{0.1,-0.2}`), bound as text and cast. */
export const realArrayLiteral = (vector: ArrayLike<number>): string => `{${Array.from(vector).join(',')}}`;

/** A PostgreSQL array literal of plain words (kinds, lexical terms: no quotes, commas or braces inside). */
export function textArrayLiteral(words: readonly string[]): string {
  return `{${words.map((word) => `"${word.replace(/["\\]/g, '')}"`).join(',')}}`;
}

export function parseRealArray(text: string): Float32Array {
  const inner = text.trim().replace(/^\{|\}$/g, '');
  if (inner === '') return new Float32Array(0);
  const parts = inner.split(',');
  const out = new Float32Array(parts.length);
  for (let i = 0; i < parts.length; i += 1) out[i] = Number(parts[i]);
  return out;
}
