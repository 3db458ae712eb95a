/**
 * Breaks loops of identical failing calls. A call is its tool name plus the
 * canonical JSON of its arguments; after `limit` failures (errors, denials,
 * non-zero exits) the same call is no longer run — the model is told to try
 * something else. A successful write changes the world, so it clears the
 * counts: the same test run after an edit may legitimately be tried again.
 */
import { canonicalJson, type Json } from '@crustcore/kernel';

export const DEFAULT_REPEAT_LIMIT = 3;
/** Bound on distinct failing calls remembered. */
const MAX_TRACKED_CALLS = 1_000;

export const callKey = (tool: string, args: unknown): string => {
  let text: string;
  try {
    text = canonicalJson(args as Json);
  } catch {
    text = String(args);
  }
  return `${tool}(${text})`;
};

export class RepeatGuard {
  readonly #limit: number;
  readonly #failures = new Map<string, number>();

  constructor(limit = DEFAULT_REPEAT_LIMIT) {
    this.#limit = limit;
  }

  /** True when `key` has failed `limit` times already and must not run again. */
  blocked(key: string): boolean {
    return (this.#failures.get(key) ?? 0) >= this.#limit;
  }

  /** Records a failure; returns true when this failure reached the limit. */
  failed(key: string): boolean {
    if (!this.#failures.has(key) && this.#failures.size >= MAX_TRACKED_CALLS) {
      const oldest = this.#failures.keys().next().value;
      if (oldest !== undefined) this.#failures.delete(oldest);
    }
    const count = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, count);
    return count === this.#limit;
  }

  /** The world changed: earlier failures no longer predict later ones. */
  reset(): void {
    this.#failures.clear();
  }

  get limit(): number {
    return this.#limit;
  }
}
