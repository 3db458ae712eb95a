/**
 * LocalFallbackProvider: when the primary (usually a remote chain) fails
 * before showing any content — down, rate-limited, out of budget, no key —
 * degrade to a local endpoint instead of failing the turn. The switch is
 * announced with a `retry` event so the ledger records the degradation.
 * Compose it outside a BudgetProvider to keep working on a local model once
 * the remote budget is spent.
 */
import { isContentEvent, type ProviderError, type ProviderErrorTag, type StreamEvent } from '../events.js';
import { guardStream, type ModelProvider } from '../provider.js';
import { type ModelRequest, withModel } from '../request.js';
import type { ProviderCandidate } from './reliable.js';

export const DEFAULT_DEGRADE_ON: readonly ProviderErrorTag[] = [
  'rate_limited',
  'server_error',
  'timeout',
  'stalled',
  'network',
  'truncated',
  'auth',
  'protocol',
  'budget_exhausted',
];

export interface LocalFallbackOptions {
  readonly primary: ModelProvider;
  readonly local: ProviderCandidate;
  /** Failure tags that trigger the fallback. `bad_request` is excluded by default: a local model has a smaller context, not a larger one. */
  readonly degradeOn?: readonly ProviderErrorTag[];
  readonly id?: string;
}

export class LocalFallbackProvider implements ModelProvider {
  readonly id: string;
  readonly #primary: ModelProvider;
  readonly #local: ProviderCandidate;
  readonly #degradeOn: ReadonlySet<ProviderErrorTag>;

  constructor(options: LocalFallbackOptions) {
    this.#primary = options.primary;
    this.#local = options.local;
    this.#degradeOn = new Set(options.degradeOn ?? DEFAULT_DEGRADE_ON);
    this.id = options.id ?? `local-fallback(${options.primary.id}→${options.local.provider.id})`;
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    return guardStream(this.id, () => this.#run(request, signal));
  }

  async *#run(request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<StreamEvent, void, undefined> {
    let failure: ProviderError | undefined;
    let showedContent = false;
    for await (const event of this.#primary.stream(request, signal)) {
      if (event.type === 'error') {
        failure = event.error;
        if (showedContent || !this.#degradeOn.has(failure._tag) || signal?.aborted === true) {
          yield event;
          return;
        }
        break;
      }
      if (isContentEvent(event)) showedContent = true;
      yield event;
    }
    if (failure === undefined) return;
    const model = this.#local.model ?? request.model;
    yield {
      type: 'retry',
      attempt: 1,
      delayMs: 0,
      from: { provider: failure.provider, model: request.model },
      to: { provider: this.#local.provider.id, model },
      cause: failure,
    };
    yield* this.#local.provider.stream(withModel(request, model), signal);
  }
}
