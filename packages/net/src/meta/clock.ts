/**
 * Time and randomness for retry policy, injected so tests run the whole
 * backoff schedule instantly and deterministically.
 */

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted === true || ms <= 0) {
        resolve();
        return;
      }
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** A value in [0, 1). */
export type RandomSource = () => number;

export interface BackoffPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * "Full jitter" exponential backoff: uniform in [0, min(max, base·2^retry)],
 * where `retry` counts from 0. Spreading clients over the whole window avoids
 * synchronized retry storms after a shared outage.
 */
export function backoffDelayMs(retry: number, policy: BackoffPolicy, random: RandomSource): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(retry, 30));
  const fraction = Math.min(Math.max(random(), 0), 1);
  return Math.floor(ceiling * fraction);
}
