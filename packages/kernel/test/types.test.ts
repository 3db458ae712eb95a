/**
 * Negative type tests: a plain object or a cast cannot stand in for an
 * approval. The `@ts-expect-error` lines fail the type-check if the compiler
 * ever starts accepting them.
 */
import { expect, it } from 'vitest';
import { Approved, type Operation, type TaskId } from '../src/index.js';

function apply(approved: Approved<Operation>): string {
  return approved.approvalId;
}

it('a plain object is not an Approved<T>', () => {
  const fake = { value: { op: 'git.push' }, approvalId: 'a_x', opHash: 'x', expiresAt: 0, approvedBy: 'human' };
  // @ts-expect-error a structural look-alike lacks the private fields
  expect(() => apply(fake)).not.toThrow();
  // @ts-expect-error the constructor needs the kernel's private mint token
  expect(() => new Approved(Symbol('forged'), { op: 'fs.read', path: 'x' }, {})).toThrow(/minted by the kernel/);
});

it('a raw string is not a TaskId', () => {
  const takesTask = (id: TaskId): string => id;
  // @ts-expect-error branded ids reject raw strings
  expect(takesTask('t_raw')).toBe('t_raw');
});
