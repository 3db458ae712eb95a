/**
 * Assertions of what must hold (and what must never happen) inside the
 * kernel. A broken invariant is a bug in the kernel, not bad input: bad input
 * is a `Rejected` action. So an assertion does not return a value to handle,
 * it throws, loudly, and the runtime records the crash instead of carrying on
 * from a state that should not exist.
 */
export class KernelInvariantError extends Error {
  override readonly name = 'KernelInvariantError';
}

export function assert(condition: boolean, what: string): asserts condition {
  if (!condition) throw new KernelInvariantError(`kernel invariant broken: ${what}`);
}
