/**
 * io-ts codecs for the kernel's branded primitives. Everything that enters
 * the kernel from outside (a ledger replay, an adapter) is decoded through
 * these, so a malformed id is a typed decode error, never a crash.
 */
import * as t from 'io-ts';
import { type EventSeq, type Hash32, type IdKind, isHash32, isId } from './ids.js';

const idCodec = <K extends IdKind, A extends string>(kind: K) =>
  new t.Type<A, string, unknown>(
    kind,
    (u): u is A => isId(kind, u),
    (u, c) => (isId(kind, u) ? t.success(u as unknown as A) : t.failure(u, c, `expected ${kind}`)),
    (a) => a,
  );

export const TaskIdC = idCodec<'TaskId', import('./ids.js').TaskId>('TaskId');
export const JobIdC = idCodec<'JobId', import('./ids.js').JobId>('JobId');
export const ApprovalIdC = idCodec<'ApprovalId', import('./ids.js').ApprovalId>('ApprovalId');
export const ToolCallIdC = idCodec<'ToolCallId', import('./ids.js').ToolCallId>('ToolCallId');

export const Hash32C = new t.Type<Hash32, string, unknown>(
  'Hash32',
  isHash32,
  (u, c) => (isHash32(u) ? t.success(u) : t.failure(u, c, 'expected 64 lowercase hex chars')),
  (a) => a,
);

const isSeq = (u: unknown): u is EventSeq => typeof u === 'number' && Number.isSafeInteger(u) && u >= 1;
export const EventSeqC = new t.Type<EventSeq, number, unknown>(
  'EventSeq',
  isSeq,
  (u, c) => (isSeq(u) ? t.success(u) : t.failure(u, c, 'expected a safe integer >= 1')),
  (a) => a,
);

const isNonNegInt = (u: unknown): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= 0;
export const NonNegativeInt = new t.Type<number, number, unknown>(
  'NonNegativeInt',
  isNonNegInt,
  (u, c) => (isNonNegInt(u) ? t.success(u) : t.failure(u, c, 'expected a safe integer >= 0')),
  (a) => a,
);

/** Bounded text: untrusted strings never grow the kernel's state without limit. */
export const boundedString = (maxLength: number) =>
  new t.Type<string, string, unknown>(
    `string(<=${maxLength})`,
    (u): u is string => typeof u === 'string' && u.length <= maxLength,
    (u, c) =>
      typeof u === 'string' && u.length <= maxLength
        ? t.success(u)
        : t.failure(u, c, `expected a string of at most ${maxLength} chars`),
    (a) => a,
  );
