/**
 * One reservation pool per proxy. Before a request is forwarded, its worst
 * case — the output cap it carries plus its estimated input, in tokens and
 * in dollars at the dearest applicable price — is taken from what the budget
 * has left minus what requests in flight already hold. Admission and
 * reservation happen in one synchronous step, so N concurrent requests can
 * never together hold more than the budget. When a request ends (answered,
 * cut, failed) its reservation is released and what it actually cost is
 * charged, in the same step.
 */
import type { BudgetHeadroom, ModelBudget } from './budget.js';
import { type ModelPricing, type ModelUsage, type ObservedUsage, priceUsage } from './usage.js';

/** The worst case of one request. */
export interface Reservation {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
  /** The price the reservation was made at (undefined: no prices configured). */
  readonly pricing: ModelPricing | undefined;
}

export function reservationFor(
  inputTokens: number,
  outputTokens: number,
  pricing: ModelPricing | undefined,
): Reservation {
  const costUsd = priceUsage({ inputTokens, cachedInputTokens: 0, outputTokens }, pricing);
  return { inputTokens, outputTokens, costUsd, pricing };
}

export type ReserveOutcome =
  | { readonly _tag: 'Reserved'; readonly ticket: ReservationTicket }
  /** It would not fit even if nothing else were in flight: the budget is spent for this worker. */
  | { readonly _tag: 'Exhausted'; readonly reason: string }
  /** It fits the budget, not next to what is in flight now: retry once those end. */
  | { readonly _tag: 'Contended'; readonly reason: string };

/** A held reservation; `settle` once. */
export interface ReservationTicket {
  readonly reservation: Reservation;
  /** Releases the reservation and charges `usage` (idempotent: later calls do nothing). */
  readonly settle: (usage: ModelUsage) => void;
}

/** Float sums of dollar amounts must not refuse an exact fit. */
const EPSILON_USD = 1e-9;

interface Held {
  requests: number;
  tokens: number;
  costUsd: number;
}

function fits(held: Held, wanted: Reservation, headroom: BudgetHeadroom): string | null {
  if (headroom.requests !== undefined && held.requests + 1 > headroom.requests) return 'no requests left';
  const tokens = wanted.inputTokens + wanted.outputTokens;
  if (headroom.tokens !== undefined && held.tokens + tokens > headroom.tokens) {
    return `${tokens} tokens reserved (input estimate + output cap), ${Math.max(0, headroom.tokens - held.tokens)} left`;
  }
  if (headroom.costUsd !== undefined && held.costUsd + wanted.costUsd > headroom.costUsd + EPSILON_USD) {
    const free = Math.max(0, headroom.costUsd - held.costUsd);
    return `$${wanted.costUsd.toFixed(6)} reserved, $${free.toFixed(6)} left`;
  }
  return null;
}

export class ReservationPool {
  readonly #budget: ModelBudget | undefined;
  readonly #maxRequests: number;
  readonly #held: Held = { requests: 0, tokens: 0, costUsd: 0 };
  #started = 0;

  constructor(budget: ModelBudget | undefined, maxRequests: number) {
    this.#budget = budget;
    this.#maxRequests = maxRequests;
  }

  /** Requests holding a reservation right now. */
  get inFlight(): number {
    return this.#held.requests;
  }

  reserve(wanted: Reservation): ReserveOutcome {
    if (this.#started >= this.#maxRequests) return { _tag: 'Exhausted', reason: 'the request cap is reached' };
    if (this.#budget !== undefined && !this.#budget.mayRequest()) return { _tag: 'Exhausted', reason: 'spent' };
    const headroom = this.#budget?.remaining?.() ?? {};
    if (headroom.costUsd !== undefined && wanted.pricing === undefined) {
      return { _tag: 'Exhausted', reason: 'a cost limit is set but no price is known for the model' };
    }
    const alone = fits({ requests: 0, tokens: 0, costUsd: 0 }, wanted, headroom);
    if (alone !== null) return { _tag: 'Exhausted', reason: alone };
    const together = fits(this.#held, wanted, headroom);
    if (together !== null) return { _tag: 'Contended', reason: `${together} while ${this.#held.requests} in flight` };
    this.#started += 1;
    this.#take(wanted, 1);
    let settled = false;
    return {
      _tag: 'Reserved',
      ticket: {
        reservation: wanted,
        settle: (usage) => {
          if (settled) return;
          settled = true;
          this.#take(wanted, -1);
          this.#budget?.charge(usage);
        },
      },
    };
  }

  #take(reservation: Reservation, sign: 1 | -1): void {
    this.#held.requests += sign;
    this.#held.tokens += sign * (reservation.inputTokens + reservation.outputTokens);
    this.#held.costUsd = Math.max(0, this.#held.costUsd + sign * reservation.costUsd);
  }
}

/**
 * What a request is charged when it ends. With the provider's final usage:
 * that. Without it (the client hung up, the upstream died, a shape we do not
 * know): the input reported so far or else the estimate, and the output
 * reported so far or else the streamed output bytes (a byte-level tokenizer
 * spends at least a byte per token, so never less than what the client could
 * have received), at most the cap the request carried. An error status that
 * streamed nothing is not billed by providers and costs no tokens.
 */
export function chargeFor(
  observed: ObservedUsage | null,
  status: number,
  reservation: Reservation,
  pricing: ModelPricing | undefined,
): ModelUsage {
  const tokens = settledTokens(observed, status, reservation);
  return { requests: 1, ...tokens, costUsd: priceUsage(tokens, pricing) };
}

function settledTokens(
  observed: ObservedUsage | null,
  status: number,
  reservation: Reservation,
): { inputTokens: number; cachedInputTokens: number; outputTokens: number } {
  if (observed === null) return { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  if (observed.final) {
    return {
      inputTokens: observed.inputTokens,
      cachedInputTokens: observed.cachedInputTokens,
      outputTokens: observed.outputTokens,
    };
  }
  if (status >= 400 && observed.outputTokens === 0 && observed.inputTokens === 0) {
    return { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  }
  const output = Math.max(observed.outputTokens, Math.min(reservation.outputTokens, observed.outputBytes));
  return {
    inputTokens: observed.inputTokens > 0 ? observed.inputTokens : reservation.inputTokens,
    cachedInputTokens: observed.inputTokens > 0 ? observed.cachedInputTokens : 0,
    outputTokens: output,
  };
}
