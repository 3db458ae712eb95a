/**
 * BudgetProvider: a cost ceiling. It adds up the cost of every `usage` event
 * that passes through and, once the total reaches the ceiling, refuses new
 * requests with a `budget_exhausted` error event. A request already running
 * is not cut off: its cost was committed when it started, and its usage is
 * only known at the end. Several providers can share one CostMeter.
 */
import { errorEvent, type StreamEvent } from '../events.js';
import { guardStream, type ModelProvider } from '../provider.js';
import type { ModelRequest } from '../request.js';

export class CostMeter {
  #spentMicroDollars: number;

  constructor(initialMicroDollars = 0) {
    this.#spentMicroDollars = Math.max(0, initialMicroDollars);
  }

  get spentMicroDollars(): number {
    return this.#spentMicroDollars;
  }

  add(costMicroDollars: number): void {
    if (Number.isFinite(costMicroDollars) && costMicroDollars > 0) this.#spentMicroDollars += costMicroDollars;
  }
}

export interface BudgetOptions {
  readonly ceilingMicroDollars: number;
  /** Shared meter; a fresh one starting at 0 when absent. */
  readonly meter?: CostMeter;
  readonly id?: string;
}

export class BudgetProvider implements ModelProvider {
  readonly id: string;
  readonly meter: CostMeter;
  readonly #inner: ModelProvider;
  readonly #ceilingMicroDollars: number;

  constructor(inner: ModelProvider, options: BudgetOptions) {
    this.#inner = inner;
    this.#ceilingMicroDollars = options.ceilingMicroDollars;
    this.meter = options.meter ?? new CostMeter();
    this.id = options.id ?? `budget(${inner.id})`;
  }

  get spentMicroDollars(): number {
    return this.meter.spentMicroDollars;
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    return guardStream(this.id, () => this.#run(request, signal));
  }

  async *#run(request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<StreamEvent, void, undefined> {
    const spent = this.meter.spentMicroDollars;
    if (spent >= this.#ceilingMicroDollars) {
      yield errorEvent({
        _tag: 'budget_exhausted',
        provider: this.id,
        message: `cost ceiling reached: spent ${spent} of ${this.#ceilingMicroDollars} micro-dollars`,
        spentMicroDollars: spent,
        ceilingMicroDollars: this.#ceilingMicroDollars,
      });
      return;
    }
    for await (const event of this.#inner.stream(request, signal)) {
      if (event.type === 'usage') this.meter.add(event.costMicroDollars);
      yield event;
    }
  }
}
