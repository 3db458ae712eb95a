/**
 * Property: any interleaving of several tasks' events through one LedgerSpine
 * (some submitted concurrently, the ledger closed and reopened in between)
 * writes a log that replays byte for byte — every recorded answer and state
 * hash equal to what a kernel stepping the log from the start gives — and a
 * reopened spine continues from exactly the state it closed with.
 */
import { type Action, type Hash32, makeId, type TaskId } from '@crustcore/kernel';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerSpine, PendingEvent } from '../src/index.js';
import { type TempLedger, tempLedger } from './spine-helpers.js';

const hash = (n: number, salt: string): Hash32 =>
  (n.toString(16).padStart(8, '0') + salt).padEnd(64, '0').slice(0, 64) as Hash32;

/** One task's script: each call gives the next event, from the kernel's last answer. */
class TaskScript {
  readonly taskId: TaskId;
  #step = 0;
  #approval: Extract<Action, { kind: 'RequestApproval' }> | null = null;
  readonly #n: number;
  #fate: 'apply' | 'deny' | 'reject';
  done = false;

  constructor(n: number, fate: 'apply' | 'deny' | 'reject') {
    this.#n = n;
    this.taskId = makeId('TaskId', `t${n}`);
    this.#fate = fate;
  }

  answer(actions: readonly Action[]): void {
    for (const a of actions) if (a.kind === 'RequestApproval') this.#approval = a;
    if (actions.some((a) => a.kind === 'TaskFinished')) this.#step = 99;
  }

  next(): PendingEvent | null {
    const taskId = this.taskId;
    const patchHash = hash(this.#n, 'aa');
    switch (this.#step++) {
      case 0:
        return {
          kind: 'TaskCreated',
          taskId,
          goal: `goal ${this.#n}`,
          profile: 'supervised',
          approvalMode: 'ask',
          canAsk: true,
        } as PendingEvent;
      case 1:
        return { kind: 'WorkspaceReady', taskId, baseCommit: 'base' };
      case 2:
        return { kind: 'TaskPlanned', taskId, summary: 'plan' };
      case 3:
        return { kind: 'ModelOutputReceived', taskId, inputTokens: 10 * this.#n, outputTokens: 5, costMicros: 1 };
      case 4:
        return { kind: 'PatchProposed', taskId, patchHash, selfClaimedDone: true, filesChanged: 1, risks: [] };
      case 5:
        if (this.#fate === 'reject') {
          // Rejected once: the kernel starts a new attempt, which is then verified and applied.
          this.#step = 3;
          this.#fate = 'apply';
          return {
            kind: 'PatchRejected',
            taskId,
            patchHash,
            category: 'test-failure',
            summary: 'red',
            failingTests: [],
          };
        }
        return {
          kind: 'PatchVerified',
          taskId,
          patchHash,
          treeHash: hash(this.#n, 'bb'),
          baseCommit: 'base',
          argv: ['npm', 'test'],
          profile: 'verify',
          exitCode: 0,
          stdoutHash: hash(1, 'cc'),
          stderrHash: hash(2, 'cc'),
          risks: [],
          approvalId: makeId('ApprovalId', `a${this.#n}`),
          nonce: `nonce-${this.#n}`,
        };
      case 6: {
        const request = this.#approval;
        if (request === null) throw new Error('the kernel asked for no approval');
        return {
          kind: 'ApprovalResolved',
          taskId,
          approvalId: request.approvalId,
          decision: this.#fate === 'deny' ? 'denied' : 'granted',
          by: 'human',
          nonce: request.nonce,
          opHash: request.opHash,
        };
      }
      case 7:
        return { kind: 'PatchApplied', taskId, patchHash, journalId: `j${this.#n}` };
      default:
        this.done = true;
        return null;
    }
  }
}

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

/** Submits `batch` next events at once (each task at most once), then feeds the answers back. */
async function submitBatch(spine: LedgerSpine, scripts: readonly TaskScript[]): Promise<void> {
  const pending = scripts.map((s) => ({ s, event: s.next() })).filter((p) => p.event !== null);
  const steps = await Promise.all(pending.map((p) => spine.submit(p.event as PendingEvent)));
  steps.forEach((step, i) => {
    pending[i]?.s.answer(step.actions);
  });
}

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
