/**
 * The model budget of one task, as the host proxy sees it. The proxy does
 * not ask "is anything left?" and charge after the answer (a worker walked
 * past that: hang up before the usage event, or send twenty requests at
 * once). It reserves each request's worst case against what `remaining`
 * says is left, minus what requests still in flight hold, and settles to the
 * actual usage when the answer ends (see `reservation.ts`). Once a request
 * does not fit, the worker is stopped (a CLI told "429" would otherwise
 * retry with back-off until its own timeout).
 */
import { addUsage, type ModelUsage, ZERO_USAGE } from './usage.js';

/** What a budget can still spend; an absent field is not limited. */
export interface BudgetHeadroom {
  readonly requests?: number;
  /** Input plus output tokens. */
  readonly tokens?: number;
  readonly costUsd?: number;
}

/** What the proxy calls. The lead implements it over the kernel's task budget. */
export interface ModelBudget {
  /** Before each model request: may the worker make one more at all? */
  readonly mayRequest: () => boolean;
  /** After each response: the tokens (and cost) it was charged. Must be reflected in `remaining` at once. */
  readonly charge: (usage: ModelUsage) => void;
  /** What is left right now; absent: only `mayRequest` bounds the worker (no token or cost limit known). */
  readonly remaining?: () => BudgetHeadroom;
}

/** Limits for `boundedModelBudget`; an absent limit is not checked. */
export interface ModelBudgetLimits {
  readonly maxRequests?: number;
  /** Input plus output tokens. */
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
}

/** A self-contained budget with fixed limits, and what it has spent. */
export interface BoundedModelBudget extends ModelBudget {
  readonly spent: () => ModelUsage;
  readonly remaining: () => BudgetHeadroom;
}

const left = (limit: number | undefined, used: number): number | undefined =>
  limit === undefined ? undefined : Math.max(0, limit - used);

/** A budget that refuses the next request once any limit is reached. */
export function boundedModelBudget(limits: ModelBudgetLimits): BoundedModelBudget {
  let spent = ZERO_USAGE;
  const remaining = (): BudgetHeadroom => {
    const requests = left(limits.maxRequests, spent.requests);
    const tokens = left(limits.maxTokens, spent.inputTokens + spent.outputTokens);
    const costUsd = left(limits.maxCostUsd, spent.costUsd);
    return {
      ...(requests === undefined ? {} : { requests }),
      ...(tokens === undefined ? {} : { tokens }),
      ...(costUsd === undefined ? {} : { costUsd }),
    };
  };
  return {
    mayRequest: () => {
      const headroom = remaining();
      return (headroom.requests ?? 1) > 0 && (headroom.tokens ?? 1) > 0 && (headroom.costUsd ?? 1) > 0;
    },
    charge: (usage) => {
      spent = addUsage(spent, usage);
    },
    remaining,
    spent: () => spent,
  };
}

const tighter = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/** The smaller of two headrooms, field by field. */
export function tighterHeadroom(a: BudgetHeadroom, b: BudgetHeadroom): BudgetHeadroom {
  const requests = tighter(a.requests, b.requests);
  const tokens = tighter(a.tokens, b.tokens);
  const costUsd = tighter(a.costUsd, b.costUsd);
  return {
    ...(requests === undefined ? {} : { requests }),
    ...(tokens === undefined ? {} : { tokens }),
    ...(costUsd === undefined ? {} : { costUsd }),
  };
}

/** Both budgets must allow a request; both are charged; the headroom is the tighter of the two. */
export function bothBudgets(first: ModelBudget, second: ModelBudget): ModelBudget {
  return {
    mayRequest: () => first.mayRequest() && second.mayRequest(),
    charge: (usage) => {
      first.charge(usage);
      second.charge(usage);
    },
    remaining: () => tighterHeadroom(first.remaining?.() ?? {}, second.remaining?.() ?? {}),
  };
}
