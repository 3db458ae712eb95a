/**
 * Numbered behaviour flags (src/flags.ts): each one changes what a log replays
 * to, so each is tested both ways — off (the v1 behaviour old logs were
 * written with) and on.
 */
import { describe, expect, it } from 'vitest';
import {
  type Action,
  assert,
  createKernel,
  isKernelFlag,
  KERNEL_FLAGS,
  type KernelFlag,
  KernelInvariantError,
  LATEST_KERNEL_FLAGS,
  makeId,
} from '../src/index.js';
import { Driver, HAPPY_PATH, type Intent } from './driver.js';

const ONE = makeId('TaskId', 'one');
const driver = (flags: readonly KernelFlag[], extra: object = {}) =>
  new Driver(createKernel({ defaultMaxRevisits: 1, flags, ...extra }));
const actionsOf = (d: Driver): Action[] => d.log.flatMap((e) => [...e.actions]);
const finishedOf = (d: Driver) => actionsOf(d).find((a) => a.kind === 'TaskFinished');

const running = (fail: boolean, mode: 'auto' | 'ask' = 'ask', canAsk = true): Intent[] => [
  { i: 'create', t: 0, mode, canAsk, fail },
  { i: 'ready', t: 0 },
  { i: 'planned', t: 0 },
];
const spendTokens: Intent[] = [{ i: 'model', t: 0, tokens: 11_000 }];

describe('flag 1: a paused task reports the phase it paused in', () => {
  it('a running task paused by its budget is in IMPLEMENT', () => {
    const d = driver([KERNEL_FLAGS.pausedPhase]);
    d.run([...running(false), ...spendTokens]);
    expect(d.kernel.taskStatus(ONE)).toBe('Blocked');
    expect(actionsOf(d).find((a) => a.kind === 'StatusChanged' && a.to === 'Blocked')).toMatchObject({
      from: 'Running',
      phase: 'IMPLEMENT',
    });
  });

  it('without the flag (v1 logs) the same pause still replays as INIT', () => {
    const d = driver([]);
    d.run([...running(false), ...spendTokens]);
    expect(actionsOf(d).find((a) => a.kind === 'StatusChanged' && a.to === 'Blocked')).toMatchObject({
      phase: 'INIT',
    });
  });

  it('a paused task can still be killed, and then reports ABORTED', () => {
    const d = driver(LATEST_KERNEL_FLAGS);
    d.run([...running(false), ...spendTokens, { i: 'kill', t: 0 }]);
    expect(d.kernel.taskStatus(ONE)).toBe('Killed');
    expect(
      actionsOf(d)
        .filter((a) => a.kind === 'StatusChanged')
        .at(-1),
    ).toMatchObject({
      from: 'Blocked',
      phase: 'ABORTED',
    });
  });
});

describe('flag 2: TaskFinished carries a typed cause', () => {
  const verifiedAsk: Intent[] = [
    ...running(true),
    { i: 'propose', t: 0, p: 0, risky: false },
    { i: 'verified', t: 0, p: 0 },
  ];
  const paths: readonly (readonly [string, readonly Intent[]])[] = [
    ['applied', HAPPY_PATH],
    ['cancelled', [...running(true), { i: 'cancel', t: 0 }]],
    ['killed', [...running(true), { i: 'kill', t: 0 }]],
    ['task-failed', [...running(true), { i: 'failed', t: 0 }]],
    ['budget-exhausted', [...running(true), ...spendTokens]],
    ['approval-denied', [...verifiedAsk, { i: 'resolve', t: 0, grant: false, human: true, tamper: 0 }]],
    [
      'integration-failed',
      [...verifiedAsk, { i: 'resolve', t: 0, grant: true, human: true, tamper: 0 }, { i: 'integrationFailed', t: 0 }],
    ],
    [
      'revisits-spent',
      [
        ...running(true),
        { i: 'propose', t: 0, p: 0, risky: false },
        { i: 'rejectPatch', t: 0 },
        { i: 'propose', t: 0, p: 0, risky: false },
        { i: 'rejectPatch', t: 0 },
      ],
    ],
  ];

  it.each(paths)('%s', (cause, intents) => {
    const on = driver([KERNEL_FLAGS.finishCause]);
    on.run(intents);
    expect(finishedOf(on)).toMatchObject({ kind: 'TaskFinished', cause });
    const off = driver([]);
    off.run(intents);
    const v1 = finishedOf(off);
    expect(v1).toBeDefined();
    expect(v1).not.toHaveProperty('cause');
    // Everything else about the action is what v1 said.
    expect({ ...finishedOf(on), cause: undefined }).toEqual({ ...v1, cause: undefined });
  });
});

describe('flag 3: approvals are bounded', () => {
  const askTool = (n: number): Intent[] => Array.from({ length: n }, () => ({ i: 'tool', t: 0, op: 4, actor: 0 }));

  it('pending approvals are capped; one more is refused as capacity-exceeded without changing state', () => {
    const d = driver([KERNEL_FLAGS.boundedApprovals], { maxPendingApprovals: 3 });
    d.run([...running(true), ...askTool(3)]);
    expect(actionsOf(d).filter((a) => a.kind === 'RequestApproval')).toHaveLength(3);
    const before = d.kernel.stateHash();
    const out = d.feed(d.eventFor({ i: 'tool', t: 0, op: 4, actor: 0 }));
    expect(out).toMatchObject([{ kind: 'Rejected', reason: 'capacity-exceeded' }]);
    expect(d.kernel.stateHash()).toBe(before);
  });

  it('without the flag (v1) the same fourth request is asked, as old logs recorded', () => {
    const d = driver([], { maxPendingApprovals: 3 });
    d.run([...running(true), ...askTool(4)]);
    expect(actionsOf(d).filter((a) => a.kind === 'RequestApproval')).toHaveLength(4);
  });

  it('settled approvals leave the state: answering one twice is refused, and the state returns to its size', () => {
    const settledHash = (flags: readonly KernelFlag[], answers: number): string => {
      const d = driver(flags, { maxPendingApprovals: 2 });
      d.run(running(true));
      for (let i = 0; i < answers; i++) {
        d.run([...askTool(1), { i: 'resolve', t: 0, grant: false, human: true, tamper: 0 }]);
      }
      const again = d.feed(d.eventFor({ i: 'resolve', t: 0, grant: true, human: true, tamper: 0 }));
      expect(again[0]?.kind).toBe('Rejected');
      return d.kernel.stateHash();
    };
    // Far more settled approvals than the cap: none is refused for capacity, because none is kept.
    const d = driver([KERNEL_FLAGS.boundedApprovals], { maxPendingApprovals: 2 });
    d.run(running(true));
    for (let i = 0; i < 10; i++) d.run([...askTool(1), { i: 'resolve', t: 0, grant: true, human: true, tamper: 0 }]);
    expect(actionsOf(d).filter((a) => a.kind === 'Rejected')).toEqual([]);
    expect(actionsOf(d).filter((a) => a.kind === 'ExecuteTool')).toHaveLength(10);
    // v1 keeps every settled approval in its state (so the hash depends on them); flag 3 does not.
    expect(settledHash([], 1)).not.toBe(settledHash([], 2));
    expect(actionsOf(d).length).toBeGreaterThan(0);
  });

  it("a finished task's pending approvals are dropped", () => {
    const d = driver([KERNEL_FLAGS.boundedApprovals], { maxPendingApprovals: 2 });
    d.run([...running(true), ...askTool(2), { i: 'kill', t: 0 }]);
    // Both slots are free again: the other task can ask twice.
    d.run([
      { i: 'create', t: 1, mode: 'ask', canAsk: true, fail: true },
      { i: 'ready', t: 1 },
      { i: 'planned', t: 1 },
      { i: 'tool', t: 1, op: 4, actor: 0 },
      { i: 'tool', t: 1, op: 4, actor: 0 },
    ]);
    const two = makeId('TaskId', 'two');
    expect(actionsOf(d).filter((a) => a.kind === 'RequestApproval' && a.taskId === two)).toHaveLength(2);
    expect(actionsOf(d).filter((a) => a.kind === 'Rejected')).toEqual([]);
  });
});

describe('the flag list', () => {
  it('every flag is numbered once, and the latest list has them all', () => {
    const numbers = Object.values(KERNEL_FLAGS);
    expect(new Set(numbers).size).toBe(numbers.length);
    expect([...LATEST_KERNEL_FLAGS].sort()).toEqual([...numbers].sort());
    for (const n of numbers) expect(isKernelFlag(n)).toBe(true);
    expect(isKernelFlag(0)).toBe(false);
    expect(isKernelFlag('1')).toBe(false);
  });

  it('a flag from a newer kernel is refused loudly, never silently treated as off', () => {
    expect(() => createKernel({ flags: [99 as KernelFlag] })).toThrow(KernelInvariantError);
    expect(() => createKernel({ flags: [99 as KernelFlag] })).toThrow(/kernel flag 99 is unknown/);
    expect(() => createKernel({ flags: LATEST_KERNEL_FLAGS })).not.toThrow();
  });
});

describe('assertions', () => {
  it('a broken invariant throws a KernelInvariantError, loudly', () => {
    expect(() => assert(false, 'two plus two is four')).toThrow(KernelInvariantError);
    expect(() => assert(false, 'two plus two is four')).toThrow(/kernel invariant broken: two plus two is four/);
    expect(() => assert(true, 'fine')).not.toThrow();
  });
});
