/**
 * io-ts failures as short lines for people: where (dotted path) and what was
 * expected. At most a handful, so a huge bad request cannot make a huge reply.
 */
import type * as t from 'io-ts';

const MAX_PROBLEMS = 5;

export function describeDecodeErrors(errors: t.Errors): string[] {
  return errors.slice(0, MAX_PROBLEMS).map((error) => {
    const path = error.context
      .map((entry) => entry.key)
      .filter((key) => key !== '' && !/^\d+$/.test(key))
      .join('.');
    const expected = error.context[error.context.length - 1]?.type.name ?? 'a valid value';
    return `${path || '(root)'}: ${error.message ?? `expected ${expected}`}`;
  });
}
