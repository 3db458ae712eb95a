import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  boundedModelBudget,
  chargeFor,
  type ObservedUsage,
  ReservationPool,
  type ReservationTicket,
  reservationFor,
  ZERO_USAGE,
} from '../src/index.js';

const PRICE = { inputUsdPerMillion: 2, outputUsdPerMillion: 8 };

describe('ReservationPool', () => {
  it('never lets spent plus held pass the budget, whatever the order of reserves and settles', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('reserve' as const), input: fc.nat(500), output: fc.nat(2000) }),
      fc.record({
        kind: fc.constant('settle' as const),
        pick: fc.nat(),
        share: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
    );
    fc.assert(
      fc.property(fc.nat(10_000), fc.array(op, { maxLength: 60 }), (limit, ops) => {
        const budget = boundedModelBudget({ maxTokens: limit, maxCostUsd: limit / 100_000 });
        const pool = new ReservationPool(budget, 1000);
        const open: { ticket: ReservationTicket; input: number; output: number }[] = [];
        let held = 0;
        for (const step of ops) {
          if (step.kind === 'reserve') {
            const outcome = pool.reserve(reservationFor(step.input, step.output, PRICE));
            if (outcome._tag === 'Reserved') {
              open.push({ ticket: outcome.ticket, input: step.input, output: step.output });
              held += step.input + step.output;
            }
          } else if (open.length > 0) {
            const [chosen] = open.splice(step.pick % open.length, 1);
            if (chosen === undefined) continue;
            // Actual use never exceeds the reservation (the cap bounds the answer).
            const output = Math.floor(chosen.output * step.share);
            const tokens = { inputTokens: chosen.input, cachedInputTokens: 0, outputTokens: output };
            chosen.ticket.settle({
              ...ZERO_USAGE,
              requests: 1,
              ...tokens,
              costUsd: (chosen.input * 2 + output * 8) / 1e6,
            });
            held -= chosen.input + chosen.output;
          }
          const spent = budget.spent();
          expect(spent.inputTokens + spent.outputTokens + held).toBeLessThanOrEqual(limit);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tells a spent budget (stop) from one busy with requests in flight (retry)', () => {
    const budget = boundedModelBudget({ maxTokens: 100 });
    const pool = new ReservationPool(budget, 10);
    const first = pool.reserve(reservationFor(10, 50, undefined));
    expect(first._tag).toBe('Reserved');
    expect(pool.reserve(reservationFor(10, 50, undefined))._tag).toBe('Contended');
    expect(pool.reserve(reservationFor(10, 100, undefined))._tag).toBe('Exhausted');
    if (first._tag === 'Reserved')
      first.ticket.settle({ ...ZERO_USAGE, requests: 1, inputTokens: 10, outputTokens: 5 });
    expect(pool.inFlight).toBe(0);
    expect(pool.reserve(reservationFor(10, 50, undefined))._tag).toBe('Reserved');
  });

  it('refuses to reserve against a cost limit without a price', () => {
    const pool = new ReservationPool(boundedModelBudget({ maxCostUsd: 1 }), 10);
    expect(pool.reserve(reservationFor(1, 1, undefined))).toMatchObject({ _tag: 'Exhausted' });
  });
});

describe('chargeFor', () => {
  const reservation = reservationFor(300, 1000, PRICE);
  const observed = (extra: Partial<ObservedUsage>): ObservedUsage => ({
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    final: false,
    outputBytes: 0,
    model: null,
    ...extra,
  });

  it('a final report is charged as reported', () => {
    const usage = chargeFor(observed({ final: true, inputTokens: 40, outputTokens: 7 }), 200, reservation, PRICE);
    expect(usage).toMatchObject({ inputTokens: 40, outputTokens: 7 });
  });

  it('a cut stream: streamed bytes as output tokens (at most the cap), the input estimate when none was reported', () => {
    expect(chargeFor(observed({ outputBytes: 420 }), 200, reservation, PRICE)).toMatchObject({
      inputTokens: 300,
      outputTokens: 420,
    });
    expect(
      chargeFor(observed({ outputBytes: 5000, inputTokens: 50, outputTokens: 1 }), 200, reservation, PRICE),
    ).toMatchObject({
      inputTokens: 50,
      outputTokens: 1000,
    });
  });

  it('an error answer with no usage, and no answer at all, cost no tokens', () => {
    expect(chargeFor(observed({ outputBytes: 90 }), 429, reservation, PRICE)).toMatchObject({
      inputTokens: 0,
      outputTokens: 0,
    });
    expect(chargeFor(null, 502, reservation, PRICE)).toMatchObject({ requests: 1, inputTokens: 0, outputTokens: 0 });
  });
});
