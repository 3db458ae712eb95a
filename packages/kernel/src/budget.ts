/**
 * Budgets: every task has limits, and usage only grows from events. The
 * kernel never reads a clock: wall time is `event.at − task.createdAt`.
 */
export const BUDGET_NAMES = [
  'turns',
  'toolCalls',
  'tokens',
  'costMicros',
  'wallTimeMs',
  'outputBytes',
  'subagents',
] as const;
export type BudgetName = (typeof BUDGET_NAMES)[number];

export type BudgetLimits = Readonly<Record<BudgetName, number>>;

export const DEFAULT_BUDGET: BudgetLimits = {
  turns: 200,
  toolCalls: 1_000,
  tokens: 5_000_000,
  costMicros: 20_000_000,
  wallTimeMs: 3_600_000,
  outputBytes: 512 * 1024 * 1024,
  subagents: 8,
};

export interface BudgetUsage {
  turns: number;
  toolCalls: number;
  tokens: number;
  costMicros: number;
  wallTimeMs: number;
  outputBytes: number;
  subagents: number;
}

export const emptyUsage = (): BudgetUsage => ({
  turns: 0,
  toolCalls: 0,
  tokens: 0,
  costMicros: 0,
  wallTimeMs: 0,
  outputBytes: 0,
  subagents: 0,
});

/** First budget whose usage exceeds its limit, in BUDGET_NAMES order. */
export function firstExceeded(usage: BudgetUsage, limits: BudgetLimits): BudgetName | undefined {
  for (const name of BUDGET_NAMES) {
    if (usage[name] > limits[name]) return name;
  }
  return undefined;
}

/** Merges partial limits over defaults; non-finite or negative values are ignored. */
export function resolveLimits(
  partial: Partial<Record<BudgetName, number>> | undefined,
  base: BudgetLimits,
): BudgetLimits {
  if (partial === undefined) return base;
  const out: Record<BudgetName, number> = { ...base };
  for (const name of BUDGET_NAMES) {
    const value = partial[name];
    if (value !== undefined && Number.isFinite(value) && value >= 0) out[name] = value;
  }
  return out;
}
