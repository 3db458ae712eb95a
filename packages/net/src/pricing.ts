/**
 * Token prices and turn cost. Prices are US dollars per million tokens, the
 * unit vendors publish — which is conveniently also micro-dollars per token,
 * so cost in micro-dollars is a plain weighted sum, rounded up so a budget
 * never under-counts.
 */
import type { UsageEvent } from './events.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface ModelPrices {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
  /** Defaults to the input price when absent. */
  readonly cacheReadPerMillion?: number;
  /** Defaults to the input price when absent. */
  readonly cacheWritePerMillion?: number;
}

export interface TokenCounts {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/** Looks a model up in a provider's price table; undefined when the registry has no price. */
export type PriceLookup = (model: string) => ModelPrices | undefined;

// ─── constructors ─────────────────────────────────────────────────────────

const count = (value: number | undefined): number =>
  value === undefined || !Number.isFinite(value) || value < 0 ? 0 : Math.floor(value);

export function tokenCounts(counts: Partial<TokenCounts>): TokenCounts {
  return {
    inputTokens: count(counts.inputTokens),
    outputTokens: count(counts.outputTokens),
    cacheReadTokens: count(counts.cacheReadTokens),
    cacheWriteTokens: count(counts.cacheWriteTokens),
  };
}

export function costMicroDollars(counts: TokenCounts, prices: ModelPrices): number {
  const cost =
    counts.inputTokens * prices.inputPerMillion +
    counts.outputTokens * prices.outputPerMillion +
    counts.cacheReadTokens * (prices.cacheReadPerMillion ?? prices.inputPerMillion) +
    counts.cacheWriteTokens * (prices.cacheWritePerMillion ?? prices.inputPerMillion);
  // Float noise like 3703.0000000001 must not cost an extra micro-dollar.
  return Math.ceil(cost - 1e-6);
}

/**
 * The usage event for a turn. `reportedCostMicroDollars` is a cost the
 * endpoint itself reported (OpenRouter does); it is used only when the
 * registry has no price for the model.
 */
export function usageEvent(
  counts: TokenCounts,
  prices: ModelPrices | undefined,
  reportedCostMicroDollars?: number,
): UsageEvent {
  if (prices !== undefined) {
    return { type: 'usage', ...counts, costMicroDollars: costMicroDollars(counts, prices), priced: true };
  }
  if (
    reportedCostMicroDollars !== undefined &&
    Number.isFinite(reportedCostMicroDollars) &&
    reportedCostMicroDollars >= 0
  ) {
    return { type: 'usage', ...counts, costMicroDollars: Math.ceil(reportedCostMicroDollars - 1e-6), priced: true };
  }
  return { type: 'usage', ...counts, costMicroDollars: 0, priced: false };
}
