/**
 * BudgetProvider: a cost (and optionally token) ceiling that holds by
 * construction. Before a request starts, its worst case — `maxTokens` at the
 * output price plus an estimate of its input at the dearest input price — is
 * reserved against the ceiling beside what is already spent and what other
 * requests in flight hold; a request whose reservation does not fit is
 * refused with a `budget_exhausted` error event before the inner provider is
 * called. When the stream ends (done, error, or the consumer stopping early)
 * the reservation is released and the actual cost charged: the usage events'
 * cost, or, when none arrived, the streamed output bytes as output tokens (a
 * byte-level tokenizer spends at least one byte per token) at most
 * `maxTokens`. A model without a price is refused: it cannot be reserved for.
 * Several providers can share one CostMeter (one pool).
 */
import { errorEvent, type StreamEvent, type UsageEvent } from '../events.js';
import { costMicroDollars, type ModelPrices, type PriceLookup, tokenCounts } from '../pricing.js';
import { guardStream, type ModelProvider } from '../provider.js';
import type { ModelRequest } from '../request.js';

export class CostMeter {
  #spentMicroDollars: number;
  #spentTokens = 0;
  #heldMicroDollars = 0;
  #heldTokens = 0;

  constructor(initialMicroDollars = 0) {
    this.#spentMicroDollars = Math.max(0, initialMicroDollars);
  }

  get spentMicroDollars(): number {
    return this.#spentMicroDollars;
  }

  get spentTokens(): number {
    return this.#spentTokens;
  }

  /** What requests in flight hold right now. */
  get heldMicroDollars(): number {
    return this.#heldMicroDollars;
  }

  add(costMicroDollars: number, tokens = 0): void {
    if (Number.isFinite(costMicroDollars) && costMicroDollars > 0) this.#spentMicroDollars += costMicroDollars;
    if (Number.isFinite(tokens) && tokens > 0) this.#spentTokens += tokens;
  }

  /** Holds `costMicroDollars` / `tokens` when they fit under the ceilings beside spent and held; else false. */
  tryReserve(
    costMicroDollars: number,
    tokens: number,
    ceilingMicroDollars: number,
    ceilingTokens: number | undefined,
  ): boolean {
    if (this.#spentMicroDollars + this.#heldMicroDollars + costMicroDollars > ceilingMicroDollars) return false;
    if (ceilingTokens !== undefined && this.#spentTokens + this.#heldTokens + tokens > ceilingTokens) return false;
    this.#heldMicroDollars += costMicroDollars;
    this.#heldTokens += tokens;
    return true;
  }

  release(costMicroDollars: number, tokens: number): void {
    this.#heldMicroDollars = Math.max(0, this.#heldMicroDollars - costMicroDollars);
    this.#heldTokens = Math.max(0, this.#heldTokens - tokens);
  }
}

export interface BudgetOptions {
  readonly ceilingMicroDollars: number;
  /** Input plus output tokens across the meter; absent: not limited. */
  readonly ceilingTokens?: number;
  /** Shared meter; a fresh one starting at 0 when absent. */
  readonly meter?: CostMeter;
  readonly id?: string;
  /**
   * Prices a request is reserved and charged at, by its model (a chain that may
   * move to other models should give the dearest of them). Undefined: refused.
   */
  readonly prices: PriceLookup | ModelPrices;
  /** Input tokens a request is reserved for (default: `reservedInputTokens`). */
  readonly estimateInputTokens?: (request: ModelRequest) => number;
}

/** A deliberately high input estimate: one token per 3 characters of system, messages and tools. */
export const reservedInputTokens = (request: ModelRequest): number =>
  Math.ceil(
    (request.system.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length) / 3,
  );

/** The worst case of one request at `prices`: micro-dollars and tokens. */
export function worstCase(
  request: ModelRequest,
  inputTokens: number,
  prices: ModelPrices,
): { readonly costMicroDollars: number; readonly tokens: number } {
  // Input could all be cache writes, the dearest way to send it.
  const inputPrice = Math.max(prices.inputPerMillion, prices.cacheWritePerMillion ?? prices.inputPerMillion);
  const outputTokens = Math.max(0, Math.floor(request.maxTokens));
  const cost = costMicroDollars(tokenCounts({ inputTokens, outputTokens }), {
    inputPerMillion: inputPrice,
    outputPerMillion: prices.outputPerMillion,
  });
  return { costMicroDollars: cost, tokens: inputTokens + outputTokens };
}

const encoder = new TextEncoder();
const utf8Bytes = (text: string): number => encoder.encode(text).length;

/** What a stream showed about its cost, for settling. */
class StreamTally {
  usageCost = 0;
  usageTokens = 0;
  sawUsage = false;
  outputBytes = 0;

  finished = false;

  see(event: StreamEvent, prices: ModelPrices): void {
    if (event.type === 'done') this.finished = true;
    else if (event.type === 'usage') this.#usage(event, prices);
    else if (event.type === 'text_delta' || event.type === 'thinking_delta') {
      this.outputBytes += utf8Bytes(event.text);
    } else if (event.type === 'tool_call') {
      this.outputBytes += utf8Bytes(JSON.stringify(event.arguments) + event.name);
    }
  }

  #usage(event: UsageEvent, prices: ModelPrices): void {
    this.sawUsage = true;
    this.usageCost += event.priced ? event.costMicroDollars : costMicroDollars(event, prices);
    this.usageTokens += event.inputTokens + event.outputTokens + event.cacheReadTokens + event.cacheWriteTokens;
  }

  /**
   * The charge: a finished stream's reported usage; otherwise (cut, failed)
   * the larger of whatever usage was reported and the streamed output (at
   * most the cap) plus the input estimate.
   */
  charge(request: ModelRequest, inputTokens: number, prices: ModelPrices): { cost: number; tokens: number } {
    const reported = { cost: this.usageCost, tokens: this.usageTokens };
    if (this.finished && this.sawUsage) return reported;
    if (this.outputBytes === 0) return reported;
    const outputTokens = Math.min(Math.max(0, Math.floor(request.maxTokens)), this.outputBytes);
    const streamed = costMicroDollars(tokenCounts({ inputTokens, outputTokens }), prices);
    return {
      cost: Math.max(reported.cost, streamed),
      tokens: Math.max(reported.tokens, inputTokens + outputTokens),
    };
  }
}

export class BudgetProvider implements ModelProvider {
  readonly id: string;
  readonly meter: CostMeter;
  readonly #inner: ModelProvider;
  readonly #options: BudgetOptions;
  readonly #prices: PriceLookup;

  constructor(inner: ModelProvider, options: BudgetOptions) {
    this.#inner = inner;
    this.#options = options;
    const prices = options.prices;
    this.#prices = typeof prices === 'function' ? prices : () => prices;
    this.meter = options.meter ?? new CostMeter();
    this.id = options.id ?? `budget(${inner.id})`;
  }

  get spentMicroDollars(): number {
    return this.meter.spentMicroDollars;
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    return guardStream(this.id, () => this.#run(request, signal));
  }

  #refusal(message: string): StreamEvent {
    return errorEvent({
      _tag: 'budget_exhausted',
      provider: this.id,
      message,
      spentMicroDollars: this.meter.spentMicroDollars,
      ceilingMicroDollars: this.#options.ceilingMicroDollars,
    });
  }

  async *#run(request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<StreamEvent, void, undefined> {
    const ceiling = this.#options.ceilingMicroDollars;
    const spent = this.meter.spentMicroDollars;
    if (spent >= ceiling) {
      yield this.#refusal(`cost ceiling reached: spent ${spent} of ${ceiling} micro-dollars`);
      return;
    }
    const prices = this.#prices(request.model);
    if (prices === undefined) {
      yield this.#refusal(`model ${request.model} has no price: add its prices to the model registry`);
      return;
    }
    const inputTokens = (this.#options.estimateInputTokens ?? reservedInputTokens)(request);
    const worst = worstCase(request, inputTokens, prices);
    if (!this.meter.tryReserve(worst.costMicroDollars, worst.tokens, ceiling, this.#options.ceilingTokens)) {
      yield this.#refusal(
        `this request may cost up to ${worst.costMicroDollars} micro-dollars (${worst.tokens} tokens): ` +
          `${spent} spent and ${this.meter.heldMicroDollars} held of ${ceiling}; lower maxTokens or raise the ceiling`,
      );
      return;
    }
    const tally = new StreamTally();
    try {
      for await (const event of this.#inner.stream(request, signal)) {
        tally.see(event, prices);
        yield event;
      }
    } finally {
      // Runs also when the consumer stops early: a cut stream is charged what it streamed.
      this.meter.release(worst.costMicroDollars, worst.tokens);
      const charge = tally.charge(request, inputTokens, prices);
      this.meter.add(charge.cost, charge.tokens);
    }
  }
}
