/**
 * Properties over random event sequences (fast-check). The driver turns
 * random intents into well-formed events so sequences reach deep states.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Action,
  createKernel,
  encodeActions,
  isLegalTransition,
  type KernelFlag,
  LATEST_KERNEL_FLAGS,
  reversibilityOf,
  TOOL_ACTION_KINDS,
} from '../src/index.js';
import { Driver, type Intent, intentArb } from './driver.js';

const runs = { numRuns: 400 };
const t = fc.integer({ min: 0, max: 1 });
/** Short well-ordered chunks mixed with random intents, so deep states are common. */
const chunkArb: fc.Arbitrary<Intent[]> = fc.oneof(
  fc.tuple(t, fc.constantFrom('auto' as const, 'ask' as const), fc.boolean()).map(([ti, mode, canAsk]): Intent[] => [
    { i: 'create', t: ti, mode, canAsk, fail: false },
    { i: 'ready', t: ti },
    { i: 'planned', t: ti },
  ]),
  fc.tuple(t, fc.boolean()).map(([ti, risky]): Intent[] => [
    { i: 'propose', t: ti, p: 0, risky },
    { i: 'rejectPatch', t: ti },
  ]),
  fc.tuple(t, fc.boolean()).map(([ti, human]): Intent[] => [
    { i: 'propose', t: ti, p: 0, risky: false },
    { i: 'verified', t: ti, p: 0 },
    { i: 'resolve', t: ti, grant: true, human, tamper: 0 },
  ]),
  // Spend the token budget, so tasks created with `fail: false` pause (Blocked).
  t.map((ti): Intent[] => Array.from({ length: 4 }, () => ({ i: 'model' as const, t: ti, tokens: 3_000 }))),
  intentArb.map((i) => [i]),
);
const sequences = fc
  .array(
    fc.oneof(
      intentArb.map((i) => [i]),
      chunkArb,
    ),
    { minLength: 1, maxLength: 30 },
  )
  .map((chunks) => chunks.flat());

// Every property holds with the v1 behaviour (old logs) and with every flag on (new runs).
describe.each([
  ['v1 behaviour', [] as readonly KernelFlag[]],
  ['latest flags', LATEST_KERNEL_FLAGS],
])('kernel properties (%s)', (_name, flags) => {
  const config = { defaultMaxRevisits: 3, flags };
  it('a killed or finished task emits no new tool action', () => {
    fc.assert(
      fc.property(sequences, (intents) => {
        const d = new Driver(createKernel(config));
        d.run(intents);
        const finished = new Set<string>();
        for (const { actions } of d.log) {
          for (const a of actions) {
            if ('taskId' in a && a.taskId !== null && finished.has(a.taskId) && TOOL_ACTION_KINDS.has(a.kind))
              return false;
          }
          for (const a of actions) if (a.kind === 'TaskFinished') finished.add(a.taskId);
        }
        return true;
      }),
      runs,
    );
  });

  it('no irreversible action without a matching, unexpired, unused approval', () => {
    fc.assert(
      fc.property(sequences, (intents) => {
        const d = new Driver(createKernel(config));
        d.run(intents);
        const requested = new Map<string, { opHash: string; expiresAt: number }>();
        const used = new Set<string>();
        for (const { event, actions } of d.log) {
          for (const a of actions) {
            if (a.kind === 'RequestApproval') requested.set(a.approvalId, { opHash: a.opHash, expiresAt: a.expiresAt });
            const gated =
              (a.kind === 'ExecuteTool' && reversibilityOf(a.operation) !== 'Reversible') || a.kind === 'ApplyPatch';
            if (!gated) continue;
            const approved = a.approved;
            if (approved === null) return false;
            const req = requested.get(approved.approvalId);
            if (req === undefined || req.opHash !== approved.opHash) return false;
            if (event.at > req.expiresAt) return false;
            if (used.has(approved.approvalId)) return false;
            used.add(approved.approvalId);
          }
        }
        return true;
      }),
      runs,
    );
  });

  it('no completion without a verified patch for the same task', () => {
    fc.assert(
      fc.property(sequences, (intents) => {
        const d = new Driver(createKernel(config));
        d.run(intents);
        const verified = new Map<string, Set<string>>();
        for (const { event, actions } of d.log) {
          const rejected = actions.length === 1 && actions[0]?.kind === 'Rejected';
          if (event.kind === 'PatchVerified' && !rejected) {
            const set = verified.get(event.taskId) ?? new Set();
            set.add(event.patchHash);
            verified.set(event.taskId, set);
          }
          for (const a of actions) {
            if (a.kind === 'TaskFinished' && a.outcome === 'completed') {
              if (a.patchHash === null || !verified.get(a.taskId)?.has(a.patchHash)) return false;
            }
          }
        }
        return true;
      }),
      runs,
    );
  });

  it('no transition outside the catalog, and revisits never exceed the budget', () => {
    fc.assert(
      fc.property(sequences, (intents) => {
        const d = new Driver(createKernel(config));
        d.run(intents);
        const revisits = new Map<string, number>();
        for (const a of d.log.flatMap((e) => e.actions)) {
          if (a.kind !== 'StatusChanged') continue;
          if (!isLegalTransition(a.from, a.to)) return false;
          if (a.to === 'Retrying') revisits.set(a.taskId, (revisits.get(a.taskId) ?? 0) + 1);
        }
        return [...revisits.values()].every((n) => n <= 3);
      }),
      runs,
    );
  });

  it('a rejected event changes nothing', () => {
    fc.assert(
      fc.property(sequences, (intents) => {
        const d = new Driver(createKernel(config));
        for (const intent of intents) {
          if (intent.i === 'wait') {
            d.run([intent]);
            continue;
          }
          const before = d.kernel.stateHash();
          const out: readonly Action[] = d.feed(d.eventFor(intent));
          if (out.length === 1 && out[0]?.kind === 'Rejected' && d.kernel.stateHash() !== before) return false;
        }
        return true;
      }),
      { numRuns: 150 },
    );
  });

  it('replaying the same events gives the same actions and the same state hash', () => {
    fc.assert(
      fc.property(sequences, (intents) => {
        const d = new Driver(createKernel(config));
        d.run(intents);
        const fresh = createKernel(config);
        for (const { event, actions } of d.log) {
          if (encodeActions(fresh.step(event)) !== encodeActions(actions)) return false;
        }
        return fresh.stateHash() === d.kernel.stateHash();
      }),
      { numRuns: 200 },
    );
  });
});

it('the property generator reaches completions, revisits and approvals', () => {
  // Guards against a generator that silently stops exercising deep states.
  const seen = new Set<string>();
  fc.assert(
    fc.property(sequences, (intents) => {
      const d = new Driver();
      d.run(intents);
      for (const a of d.log.flatMap((e) => e.actions)) {
        seen.add(a.kind === 'StatusChanged' ? `to:${a.to}` : a.kind);
      }
    }),
    { numRuns: 400, seed: 42 },
  );
  for (const k of [
    'to:Retrying',
    'to:AwaitingApproval',
    'to:Integrating',
    'RequestApproval',
    'ApplyPatch',
    'to:Killed',
    'to:Blocked',
  ]) {
    expect(seen.has(k), k).toBe(true);
  }
});
