/**
 * Property: any interleaving of several tasks' events through one LedgerSpine
 * (some submitted concurrently, the ledger closed and reopened in between)
 * writes a log that replays byte for byte — every recorded answer and state
 * hash equal to what a kernel stepping the log from the start gives — and a
 * reopened spine continues from exactly the state it closed with.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempLedger, tempLedger } from './spine-helpers.js';
import { submitBatch, TaskScript } from './task-script.js';

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

describe('one spine, many tasks', () => {
  it('random interleavings of N tasks through one runtime replay byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('apply' as const, 'deny' as const, 'reject' as const), { minLength: 2, maxLength: 5 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 3 }), fc.boolean()), { minLength: 5, maxLength: 60 }),
        async (fates, schedule) => {
          ledger?.remove();
          ledger = tempLedger();
          const scripts = fates.map((fate, n) => new TaskScript(n + 1, fate));
          let spine = await ledger.open();
          for (const [pick, width, reopen] of schedule) {
            const live = scripts.filter((s) => !s.done);
            if (live.length === 0) break;
            const chosen = Array.from(
              { length: Math.min(width, live.length) },
              (_, k) => live[(pick + k) % live.length] as TaskScript,
            );
            await submitBatch(spine, [...new Set(chosen)]);
            // compact() is a no-op for a task still running: only finished ones go.
            for (const s of scripts) await spine.compact(s.taskId);
            if (reopen) {
              const before = spine.kernel.stateHash();
              await spine.close();
              spine = await ledger.open();
              // Every finished task was compacted before closing, so the rebuilt state is the one closed.
              expect(spine.kernel.stateHash()).toBe(before);
            }
          }
          await spine.close();
          const report = ledger.replay();
          expect(report.failure).toBeUndefined();
          expect(report.ok).toBe(true);
        },
      ),
      { numRuns: 25 },
    );
  }, 240_000);
});
