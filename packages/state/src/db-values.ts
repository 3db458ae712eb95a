/**
 * io-ts codecs for values read back from the database. The two drivers hand
 * back some types differently (timestamps as Date or text, int8 as number or
 * text, bytea as Buffer or Uint8Array), and jsonb holds whatever a worker
 * wrote, so every row is decoded before it becomes a typed record. A row that
 * does not decode means the schema and the code disagree: that is a bug, and
 * it throws.
 */
import { canonicalJson, err, type Json, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import { type InvalidInput, invalidInput } from './errors.js';

export const DbDate = new t.Type<Date, Date, unknown>(
  'DbDate',
  (input): input is Date => input instanceof Date,
  (input, context) => {
    if (input instanceof Date && !Number.isNaN(input.getTime())) return t.success(input);
    if (typeof input === 'string') {
      const parsed = new Date(input);
      if (!Number.isNaN(parsed.getTime())) return t.success(parsed);
    }
    return t.failure(input, context, 'expected a timestamp');
  },
  (date) => date,
);

/** int8 values (tokens, sequence numbers) as bigint: exact beyond 2^53. */
export const DbBigInt = new t.Type<bigint, string, unknown>(
  'DbBigInt',
  (input): input is bigint => typeof input === 'bigint',
  (input, context) => {
    if (typeof input === 'bigint') return t.success(input);
    if (typeof input === 'number' && Number.isSafeInteger(input)) return t.success(BigInt(input));
    if (typeof input === 'string' && /^-?\d{1,20}$/.test(input)) return t.success(BigInt(input));
    return t.failure(input, context, 'expected an int8');
  },
  (value) => value.toString(),
);

/** int4 values and counts. */
export const DbInt = new t.Type<number, number, unknown>(
  'DbInt',
  (input): input is number => typeof input === 'number' && Number.isSafeInteger(input),
  (input, context) => {
    if (typeof input === 'number' && Number.isSafeInteger(input)) return t.success(input);
    if (typeof input === 'string' && /^-?\d{1,15}$/.test(input)) return t.success(Number(input));
    if (typeof input === 'bigint' && input <= BigInt(Number.MAX_SAFE_INTEGER)) return t.success(Number(input));
    return t.failure(input, context, 'expected an integer');
  },
  (value) => value,
);

export const DbBytes = new t.Type<Uint8Array, Uint8Array, unknown>(
  'DbBytes',
  (input): input is Uint8Array => input instanceof Uint8Array,
  (input, context) => (input instanceof Uint8Array ? t.success(input) : t.failure(input, context, 'expected bytea')),
  (bytes) => bytes,
);

const MAX_JSON_DEPTH = 64;

function isJson(value: unknown, depth: number): value is Json {
  if (depth > MAX_JSON_DEPTH) return false;
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  if (typeof value === 'object') {
    return Object.values(value as Record<string, unknown>).every((item) => isJson(item, depth + 1));
  }
  return false;
}

export const DbJson = new t.Type<Json, Json, unknown>(
  'DbJson',
  (input): input is Json => isJson(input, 0),
  (input, context) => (isJson(input, 0) ? t.success(input) : t.failure(input, context, 'expected JSON')),
  (value) => value,
);

export const nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);

/** Decodes one row; a mismatch is a schema/code disagreement and throws. */
export function decodeRow<A>(codec: t.Decoder<unknown, A>, row: unknown, what: string): A {
  const decoded = codec.decode(row);
  if (decoded._tag === 'Right') return decoded.right;
  const paths = decoded.left
    .slice(0, 3)
    .map((error) => error.context.map((entry) => entry.key).join('.'))
    .join(', ');
  throw new Error(`state: ${what} row does not match the schema at ${paths}`);
}

/** Encodes a JSON parameter canonically, refusing non-finite numbers and anything over `maxBytes`. */
export function encodeJson(value: Json, field: string, maxBytes: number): Result<InvalidInput, string> {
  let text: string;
  try {
    text = canonicalJson(value);
  } catch (error) {
    return err(invalidInput(field, error instanceof Error ? error.message : 'not JSON'));
  }
  if (Buffer.byteLength(text, 'utf8') > maxBytes) return err(invalidInput(field, `larger than ${maxBytes} bytes`));
  return ok(text);
}
