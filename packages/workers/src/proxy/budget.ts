/**
 * The model budget of one task, as the host proxy sees it. The proxy asks
 * before forwarding each request and reports each response's usage after it;
 * once a request is refused the worker is stopped (a CLI told "429" would
 * otherwise retry with back-off until its own timeout).
 */
import { addUsage, type ModelUsage, ZERO_USAGE } from './usage.js';

/** What the proxy calls. The lead implements it over the kernel's task budget. */
export interface ModelBudget {
  /** Before each model request: may the worker make one more? */
  readonly mayRequest: () => boolean;
  /** After each response: the tokens (and cost) its usage fields reported. */
  readonly charge: (usage: ModelUsage) => void;
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
}

/** A budget that refuses the next request once any limit is reached. */
export function boundedModelBudget(limits: ModelBudgetLimits): BoundedModelBudget {
  let spent = ZERO_USAGE;
  return {
    mayRequest: () =>
      (limits.maxRequests === undefined || spent.requests < limits.maxRequests) &&
      (limits.maxTokens === undefined || spent.inputTokens + spent.outputTokens < limits.maxTokens) &&
      (limits.maxCostUsd === undefined || spent.costUsd < limits.maxCostUsd),
    charge: (usage) => {
      spent = addUsage(spent, usage);
    },
    spent: () => spent,
  };
}

/** Both budgets must allow a request; both are charged. */
export function bothBudgets(first: ModelBudget, second: ModelBudget): ModelBudget {
  return {
    mayRequest: () => first.mayRequest() && second.mayRequest(),
    charge: (usage) => {
      first.charge(usage);
      second.charge(usage);
    },
  };
}
