/**
 * Compact branded identifiers. Ids are minted by the runtime (never by the
 * kernel, which has no randomness) and arrive inside events; the kernel only
 * checks their shape. Shape: a fixed prefix, an underscore, 1–40 characters of
 * [0-9A-Za-z-]. Short enough to key maps cheaply, readable in logs.
 */
import type { Brand } from './brand.js';
import { err, ok, type Result } from './result.js';

export type TaskId = Brand<string, 'TaskId'>;
export type JobId = Brand<string, 'JobId'>;
export type ApprovalId = Brand<string, 'ApprovalId'>;
export type ToolCallId = Brand<string, 'ToolCallId'>;
export type SecretId = Brand<string, 'SecretId'>;
/** Lowercase hex SHA-256 of an artifact's bytes. */
export type ArtifactId = Brand<string, 'ArtifactId'>;
/** Lowercase hex SHA-256 digest (64 chars). */
export type Hash32 = Brand<string, 'Hash32'>;
/** Position of an event in the ledger, starting at 1. */
export type EventSeq = Brand<number, 'EventSeq'>;

export interface IdError {
  readonly _tag: 'IdError';
  readonly kind: string;
  readonly input: string;
  readonly reason: string;
}

const ID_BODY = /^[0-9A-Za-z-]{1,40}$/;
const HEX64 = /^[0-9a-f]{64}$/;

export const ID_PREFIX = {
  TaskId: 't',
  JobId: 'j',
  ApprovalId: 'a',
  ToolCallId: 'c',
  SecretId: 's',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

type IdOf<K extends IdKind> = K extends 'TaskId'
  ? TaskId
  : K extends 'JobId'
    ? JobId
    : K extends 'ApprovalId'
      ? ApprovalId
      : K extends 'ToolCallId'
        ? ToolCallId
        : SecretId;

export function parseId<K extends IdKind>(kind: K, input: string): Result<IdError, IdOf<K>> {
  const prefix = ID_PREFIX[kind];
  if (typeof input !== 'string' || input.length < 3 || input.length > 42) {
    return err({ _tag: 'IdError', kind, input: String(input).slice(0, 64), reason: 'bad length' });
  }
  if (input[0] !== prefix || input[1] !== '_') {
    return err({ _tag: 'IdError', kind, input, reason: `must start with "${prefix}_"` });
  }
  if (!ID_BODY.test(input.slice(2))) {
    return err({ _tag: 'IdError', kind, input, reason: 'body must be 1-40 of [0-9A-Za-z-]' });
  }
  return ok(input as IdOf<K>);
}

export const isId = <K extends IdKind>(kind: K, input: unknown): input is IdOf<K> =>
  typeof input === 'string' && parseId(kind, input)._tag === 'Right';

/**
 * Builds an id from a runtime-supplied counter or random body. Used by
 * adapters and tests; the caller supplies the entropy.
 */
export function makeId<K extends IdKind>(kind: K, body: string): IdOf<K> {
  const parsed = parseId(kind, `${ID_PREFIX[kind]}_${body}`);
  if (parsed._tag === 'Left') throw new Error(`invalid ${kind} body: ${parsed.left.reason}`);
  return parsed.right;
}

export function parseHash32(input: string): Result<IdError, Hash32> {
  return typeof input === 'string' && HEX64.test(input)
    ? ok(input as Hash32)
    : err({
        _tag: 'IdError',
        kind: 'Hash32',
        input: String(input).slice(0, 80),
        reason: 'expected 64 lowercase hex chars',
      });
}

export const isHash32 = (input: unknown): input is Hash32 => typeof input === 'string' && HEX64.test(input);

export function parseEventSeq(input: number): Result<IdError, EventSeq> {
  return Number.isSafeInteger(input) && input >= 1
    ? ok(input as EventSeq)
    : err({ _tag: 'IdError', kind: 'EventSeq', input: String(input), reason: 'expected a safe integer >= 1' });
}
