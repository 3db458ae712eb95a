/**
 * ReliableProvider: a fallback chain with retries. Each candidate (a provider
 * and the model to ask it for) is tried up to `maxAttemptsPerCandidate` times
 * with exponential backoff and full jitter; 429s wait at least their
 * Retry-After; failures that another attempt cannot fix move straight to the
 * next candidate. Retry is transparent only while the failed attempt has
 * shown the consumer no content: once text or a tool call went out, the
 * error is passed through and the agent decides.
 */
import { errorEvent, isContentEvent, type ProviderError, type StreamEvent } from '../events.js';
import { guardStream, type ModelProvider } from '../provider.js';
import { type ModelRequest, withModel } from '../request.js';
import {
  type BackoffPolicy,
  backoffDelayMs,
  type Clock,
  DEFAULT_BACKOFF,
  type RandomSource,
  systemClock,
} from './clock.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface ProviderCandidate {
  readonly provider: ModelProvider;
  /** The model to request from this provider; absent keeps the request's model. */
  readonly model?: string;
}

/** What a chain does after a failure: try the same candidate again, move on, or give up. */
export type FailureDisposition = 'retry' | 'next' | 'stop';

export interface ReliableOptions {
  readonly candidates: readonly ProviderCandidate[];
  /** Attempts on one candidate before moving on (≥ 1). Default 3. */
  readonly maxAttemptsPerCandidate?: number;
  readonly backoff?: BackoffPolicy;
  /** A Retry-After longer than this moves on to the next candidate instead of waiting. Default 60 s. */
  readonly maxRetryAfterMs?: number;
  readonly clock?: Clock;
  readonly random?: RandomSource;
  readonly id?: string;
}

export const DEFAULT_MAX_ATTEMPTS_PER_CANDIDATE = 3;
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

// ─── policy ───────────────────────────────────────────────────────────────

export function failureDisposition(error: ProviderError): FailureDisposition {
  switch (error._tag) {
    case 'rate_limited':
    case 'server_error':
    case 'timeout':
    case 'stalled':
    case 'network':
    case 'truncated':
      return 'retry';
    // Another provider has other credentials, limits and input rules.
    case 'auth':
    case 'bad_request':
    case 'protocol':
    case 'internal':
      return 'next';
    case 'aborted':
    case 'budget_exhausted':
    case 'replay_divergence':
      return 'stop';
  }
}

// ─── the provider ─────────────────────────────────────────────────────────

/** A function, not an inline check: the signal can flip during an await, which narrowing cannot see. */
const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

export class ReliableProvider implements ModelProvider {
  readonly id: string;
  readonly #candidates: readonly ProviderCandidate[];
  readonly #maxAttempts: number;
  readonly #backoff: BackoffPolicy;
  readonly #maxRetryAfterMs: number;
  readonly #clock: Clock;
  readonly #random: RandomSource;

  constructor(options: ReliableOptions) {
    if (options.candidates.length === 0) throw new RangeError('ReliableProvider needs at least one candidate');
    this.#candidates = options.candidates;
    this.#maxAttempts = Math.max(1, Math.floor(options.maxAttemptsPerCandidate ?? DEFAULT_MAX_ATTEMPTS_PER_CANDIDATE));
    this.#backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.id = options.id ?? `reliable(${options.candidates.map((candidate) => candidate.provider.id).join(',')})`;
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    return guardStream(this.id, () => this.#run(request, signal));
  }

  async *#run(request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<StreamEvent, void, undefined> {
    let lastError: ProviderError | undefined;
    let attemptNumber = 0;
    for (let index = 0; index < this.#candidates.length; index += 1) {
      const candidate = this.#candidates[index]!;
      const model = candidate.model ?? request.model;
      for (let attempt = 0; attempt < this.#maxAttempts; attempt += 1) {
        attemptNumber += 1;
        let failure: ProviderError | undefined;
        let showedContent = false;
        for await (const event of candidate.provider.stream(withModel(request, model), signal)) {
          if (event.type === 'error') {
            failure = event.error;
            break;
          }
          if (isContentEvent(event)) showedContent = true;
          yield event;
          if (event.type === 'done') return;
        }
        failure ??= {
          _tag: 'truncated',
          provider: candidate.provider.id,
          message: 'stream ended without a terminal event',
        };
        lastError = failure;
        const disposition = showedContent ? 'stop' : failureDisposition(failure);
        if (disposition === 'stop' || signal?.aborted === true) {
          yield errorEvent(failure);
          return;
        }
        const retryAfterMs = failure._tag === 'rate_limited' ? failure.retryAfterMs : undefined;
        const canWait = retryAfterMs === undefined || retryAfterMs <= this.#maxRetryAfterMs;
        if (disposition === 'retry' && canWait && attempt + 1 < this.#maxAttempts) {
          const delayMs = Math.max(backoffDelayMs(attempt, this.#backoff, this.#random), retryAfterMs ?? 0);
          const here = { provider: candidate.provider.id, model };
          yield { type: 'retry', attempt: attemptNumber, delayMs, from: here, to: here, cause: failure };
          await this.#clock.sleep(delayMs, signal);
          if (isAborted(signal)) {
            yield errorEvent({
              _tag: 'aborted',
              provider: this.id,
              message: 'request aborted by caller during backoff',
            });
            return;
          }
          continue;
        }
        const next = this.#candidates[index + 1];
        if (next !== undefined) {
          yield {
            type: 'retry',
            attempt: attemptNumber,
            delayMs: 0,
            from: { provider: candidate.provider.id, model },
            to: { provider: next.provider.id, model: next.model ?? request.model },
            cause: failure,
          };
        }
        break;
      }
    }
    yield errorEvent(lastError ?? { _tag: 'internal', provider: this.id, message: 'no candidate was tried' });
  }
}
