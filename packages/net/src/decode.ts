/**
 * The io-ts boundary: every piece of untrusted JSON (SSE payloads, error
 * bodies, registry files, trajectories) is parsed and decoded here into a
 * Result, never thrown.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type * as t from 'io-ts';

export interface DecodeFailure {
  readonly _tag: 'DecodeFailure';
  readonly message: string;
}

const MAX_REPORTED_ERRORS = 5;

function pathOf(error: t.ValidationError): string {
  const keys = error.context.map((entry) => entry.key).filter((key) => key !== '');
  return keys.length === 0 ? '(root)' : keys.join('.');
}

export function decode<A>(codec: t.Decoder<unknown, A>, value: unknown): Result<DecodeFailure, A> {
  const result = codec.decode(value);
  if (result._tag === 'Right') return ok(result.right);
  const problems = result.left.slice(0, MAX_REPORTED_ERRORS).map((error) => {
    const expected = error.context[error.context.length - 1]?.type.name ?? 'value';
    return `${pathOf(error)}: expected ${expected}`;
  });
  return err({ _tag: 'DecodeFailure', message: problems.join('; ') });
}

export function parseJson(text: string): Result<DecodeFailure, unknown> {
  try {
    return ok(JSON.parse(text) as unknown);
  } catch (thrown) {
    return err({ _tag: 'DecodeFailure', message: thrown instanceof Error ? thrown.message : 'invalid JSON' });
  }
}

export function decodeJson<A>(codec: t.Decoder<unknown, A>, text: string): Result<DecodeFailure, A> {
  const parsed = parseJson(text);
  return parsed._tag === 'Left' ? parsed : decode(codec, parsed.right);
}
