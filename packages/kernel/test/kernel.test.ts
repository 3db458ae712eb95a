import { describe, expect, it } from 'vitest';
import {
  type Action,
  createKernel,
  decodeKernelEvent,
  encodeActions,
  isApproved,
  isLegalTransition,
  type KernelEvent,
  makeId,
  phaseOf,
  TASK_STATUSES,
  TASK_TRANSITIONS,
  TERMINAL_STATUSES,
} from '../src/index.js';
import { Driver, HAPPY_PATH, type Intent } from './driver.js';

const kinds = (actions: readonly Action[]) => actions.map((a) => a.kind);
const allActions = (d: Driver) => d.log.flatMap((e) => e.actions);

describe('kernel happy path', () => {
  it('goes from TaskCreated to an applied, completed patch', () => {
    const d = new Driver();
    d.run(HAPPY_PATH);
    const actions = allActions(d);
    expect(actions.filter((a) => a.kind === 'Rejected')).toEqual([]);
    expect(kinds(actions)).toContain('ApplyPatch');
    const finished = actions.find((a) => a.kind === 'TaskFinished');
    expect(finished).toMatchObject({ outcome: 'completed', patchHash: expect.any(String) });
    expect(d.kernel.taskStatus(makeId('TaskId', 'one'))).toBe('Completed');
    const apply = actions.find((a) => a.kind === 'ApplyPatch');
    expect(apply && apply.kind === 'ApplyPatch' && isApproved(apply.approved)).toBe(true);
  });

  it('an Approved token can be consumed exactly once', () => {
    const d = new Driver();
    d.run(HAPPY_PATH);
    const apply = allActions(d).find((a) => a.kind === 'ApplyPatch');
    if (apply?.kind !== 'ApplyPatch') throw new Error('no apply');
    expect(apply.approved.consume()._tag).toBe('Right');
    expect(apply.approved.consume()._tag).toBe('Left');
  });
});

describe('revisit budget', () => {
  it('caps VERIFY → IMPLEMENT at 3 and then fails with the evidence', () => {
    const d = new Driver();
    const attempts: Intent[] = [];
    for (let n = 0; n < 5; n++) attempts.push({ i: 'propose', t: 0, p: 0, risky: false }, { i: 'rejectPatch', t: 0 });
    d.run([HAPPY_PATH[0]!, HAPPY_PATH[1]!, HAPPY_PATH[2]!, ...attempts]);
    const actions = allActions(d);
    expect(actions.filter((a) => a.kind === 'StatusChanged' && a.to === 'Retrying')).toHaveLength(3);
    const finished = actions.find((a) => a.kind === 'TaskFinished');
    expect(finished).toMatchObject({ outcome: 'failed' });
    expect(finished?.kind === 'TaskFinished' && finished.reason).toMatch(/revisit budget \(3\)/);
    const starts = actions.filter((a) => a.kind === 'StartAttempt');
    expect(starts.map((a) => (a.kind === 'StartAttempt' ? a.attempt : 0))).toEqual([1, 2, 3, 4]);
    expect(starts[1]).toMatchObject({ diagnosis: { category: 'assertion', failingTests: ['adds'] } });
  });
});

describe('approvals', () => {
  const upToVerified = (mode: 'auto' | 'ask' | 'deny', canAsk: boolean, risky: boolean): Intent[] => [
    { i: 'create', t: 0, mode, canAsk, fail: true },
    { i: 'ready', t: 0 },
    { i: 'planned', t: 0 },
    { i: 'propose', t: 0, p: 0, risky },
    { i: 'verified', t: 0, p: 0 },
  ];

  it('auto mode cannot wave through a tests-weakened patch', () => {
    const d = new Driver();
    d.run(upToVerified('auto', true, true));
    const request = allActions(d).find((a) => a.kind === 'RequestApproval');
    expect(request).toMatchObject({ requiresHuman: true, risks: ['tests-weakened'] });
    const out = d.feed(d.eventFor({ i: 'resolve', t: 0, grant: true, human: false, tamper: 0 }));
    expect(out).toMatchObject([{ kind: 'Rejected', reason: 'approval-needs-human' }]);
    const human = d.feed(d.eventFor({ i: 'resolve', t: 0, grant: true, human: true, tamper: 0 }));
    expect(kinds(human)).toContain('ApplyPatch');
  });

  it('an approval that cannot be asked is a denial', () => {
    const d = new Driver();
    d.run(upToVerified('ask', false, false));
    const finished = allActions(d).find((a) => a.kind === 'TaskFinished');
    expect(finished).toMatchObject({ outcome: 'failed' });
    expect(kinds(allActions(d))).not.toContain('ApplyPatch');
  });

  it('rejects forged ids, wrong nonces, other operations and reuse, changing nothing', () => {
    const d = new Driver();
    d.run(upToVerified('ask', true, false));
    for (const tamper of [1, 2, 3]) {
      const before = d.kernel.stateHash();
      const out = d.feed(d.eventFor({ i: 'resolve', t: 0, grant: true, human: true, tamper }));
      expect(out).toHaveLength(1);
      expect(out[0]?.kind).toBe('Rejected');
      expect(d.kernel.stateHash()).toBe(before);
    }
    expect(kinds(d.feed(d.eventFor({ i: 'resolve', t: 0, grant: true, human: true, tamper: 0 })))).toContain(
      'ApplyPatch',
    );
    expect(d.feed(d.eventFor({ i: 'resolve', t: 0, grant: true, human: true, tamper: 0 }))).toMatchObject([
      { kind: 'Rejected', reason: 'approval-already-used' },
    ]);
  });

  it('an approval answered after its expiry is refused, and the task stays put', () => {
    const d = new Driver();
    d.run(upToVerified('ask', true, false));
    d.run([{ i: 'wait', advanceMs: 16 * 60_000 }]);
    const out = d.feed(d.eventFor({ i: 'resolve', t: 0, grant: true, human: true, tamper: 0 }));
    expect(out).toMatchObject([{ kind: 'Rejected', reason: 'approval-expired' }]);
    expect(d.kernel.taskStatus(makeId('TaskId', 'one'))).toBe('AwaitingApproval');
  });

  it('irreversible tool calls always ask, and destructive ones too', () => {
    const d = new Driver();
    d.run([HAPPY_PATH[0]!, HAPPY_PATH[1]!, HAPPY_PATH[2]!]);
    const push = d.feed(d.eventFor({ i: 'tool', t: 0, op: 4, actor: 0 }));
    // canAsk is false in HAPPY_PATH's create: ask becomes deny.
    expect(kinds(push)).toEqual(['DenyTool']);
  });

  it('a subagent may only read', () => {
    const d = new Driver();
    d.run([HAPPY_PATH[0]!, HAPPY_PATH[1]!, HAPPY_PATH[2]!]);
    expect(kinds(d.feed(d.eventFor({ i: 'tool', t: 0, op: 0, actor: 1 })))).toEqual(['ExecuteTool']);
    expect(kinds(d.feed(d.eventFor({ i: 'tool', t: 0, op: 1, actor: 1 })))).toEqual(['DenyTool']);
  });
});

describe('budgets', () => {
  it('token exhaustion fails (or pauses) the task as an event', () => {
    for (const fail of [true, false]) {
      const d = new Driver();
      d.run([{ i: 'create', t: 0, mode: 'auto', canAsk: true, fail }, HAPPY_PATH[1]!, HAPPY_PATH[2]!]);
      d.run([
        { i: 'model', t: 0, tokens: 6_000 },
        { i: 'model', t: 0, tokens: 6_000 },
      ]);
      const actions = allActions(d);
      expect(actions.find((a) => a.kind === 'BudgetExhausted')).toMatchObject({ budget: 'tokens', limit: 10_000 });
      expect(d.kernel.taskStatus(makeId('TaskId', 'one'))).toBe(fail ? 'Failed' : 'Blocked');
    }
  });
});

describe('bad input', () => {
  it('events for unknown tasks are typed rejections', () => {
    const d = new Driver();
    const out = d.feed(d.eventFor({ i: 'ready', t: 1 }));
    expect(out).toMatchObject([{ kind: 'Rejected', reason: 'unknown-task', eventKind: 'WorkspaceReady' }]);
  });

  it('decodeKernelEvent rejects malformed input with a reason', () => {
    expect(decodeKernelEvent(null)._tag).toBe('Left');
    expect(decodeKernelEvent({ kind: 'Nope' })._tag).toBe('Left');
    const bad = decodeKernelEvent({ kind: 'WorkspaceReady', seq: 0, at: 1, taskId: 'nope', baseCommit: 'x' });
    expect(bad._tag).toBe('Left');
    if (bad._tag === 'Left') expect(bad.left.problems.join(' ')).toMatch(/seq|taskId/);
    const good = decodeKernelEvent({ kind: 'WorkspaceReady', seq: 1, at: 1, taskId: 't_a', baseCommit: 'x' });
    expect(good._tag).toBe('Right');
  });
});

describe('the transition catalog', () => {
  it('every catalog edge follows the phase graph, and everything else is illegal', () => {
    // The spec's graph, written out independently of the catalog: forward one phase, stay in a
    // phase, abort from any live phase, or the one revisit edge VERIFY → IMPLEMENT.
    const order = ['INIT', 'PLAN', 'IMPLEMENT', 'VERIFY', 'APPROVAL_GATE', 'COMMITTED'];
    const allowedPhaseMove = (from: string, to: string): boolean =>
      from === to ||
      order.indexOf(to) === order.indexOf(from) + 1 ||
      (to === 'ABORTED' && from !== 'COMMITTED' && from !== 'ABORTED') ||
      (from === 'VERIFY' && to === 'IMPLEMENT');
    let illegal = 0;
    for (const from of TASK_STATUSES) {
      for (const to of TASK_STATUSES) {
        if (!isLegalTransition(from, to)) {
          illegal++;
          continue;
        }
        expect(from, `${from} → ${to}`).not.toBe(to);
        expect(TERMINAL_STATUSES.has(from), `nothing leaves ${from}`).toBe(false);
        if (from === 'Blocked' || to === 'Blocked') continue; // a pause keeps the phase
        expect(
          allowedPhaseMove(phaseOf(from), phaseOf(to)),
          `${from} (${phaseOf(from)}) → ${to} (${phaseOf(to)})`,
        ).toBe(true);
      }
    }
    // Nothing resumes a paused task: it can only end, and never as completed.
    expect([...TASK_TRANSITIONS.Blocked].sort()).toEqual(['Failed', 'Killed']);
    for (const end of TERMINAL_STATUSES) expect(TASK_TRANSITIONS[end]).toEqual([]);
    expect(illegal).toBeGreaterThan(120);
  });

  it('every event kind tried in every reachable status either moves along the catalog or is rejected without change', () => {
    // Reach each status with a prefix, then try every intent once.
    const prefixes: Intent[][] = [
      [{ i: 'create', t: 0, mode: 'ask', canAsk: true, fail: true }],
      [
        { i: 'create', t: 0, mode: 'ask', canAsk: true, fail: true },
        { i: 'ready', t: 0 },
      ],
      [...HAPPY_PATH.slice(0, 3)],
      [...HAPPY_PATH.slice(0, 3), { i: 'propose', t: 0, p: 0, risky: false }],
      [
        { i: 'create', t: 0, mode: 'ask', canAsk: true, fail: true },
        { i: 'ready', t: 0 },
        { i: 'planned', t: 0 },
        { i: 'propose', t: 0, p: 0, risky: false },
        { i: 'verified', t: 0, p: 0 },
      ],
      [...HAPPY_PATH.slice(0, 8)],
      [...HAPPY_PATH],
      [
        { i: 'create', t: 0, mode: 'ask', canAsk: true, fail: false },
        { i: 'ready', t: 0 },
        { i: 'planned', t: 0 },
        { i: 'model', t: 0, tokens: 11_000 },
      ],
      [...HAPPY_PATH.slice(0, 3), { i: 'kill', t: 0 }],
    ];
    const probes: Exclude<Intent, { i: 'wait' }>[] = [
      { i: 'ready', t: 0 },
      { i: 'planned', t: 0 },
      { i: 'propose', t: 0, p: 1, risky: false },
      { i: 'verified', t: 0, p: 1 },
      { i: 'verified', t: 0, p: 0 },
      { i: 'rejectPatch', t: 0 },
      { i: 'applied', t: 0 },
      { i: 'integrationFailed', t: 0 },
      { i: 'kill', t: 0 },
      { i: 'cancel', t: 0 },
      { i: 'resolve', t: 0, grant: true, human: true, tamper: 0 },
      { i: 'tool', t: 0, op: 1, actor: 0 },
    ];
    let rejected = 0;
    for (const prefix of prefixes) {
      for (const probe of probes) {
        const d = new Driver();
        d.run(prefix);
        const before = d.kernel.stateHash();
        const out = d.feed(d.eventFor(probe));
        if (out.length === 1 && out[0]?.kind === 'Rejected') {
          rejected++;
          expect(d.kernel.stateHash()).toBe(before);
        }
        for (const a of out) if (a.kind === 'StatusChanged') expect(isLegalTransition(a.from, a.to)).toBe(true);
      }
    }
    expect(rejected).toBeGreaterThan(40);
  });
});

describe('replay', () => {
  it('the same events give byte-identical actions and state hashes', () => {
    const a = new Driver();
    a.run(HAPPY_PATH);
    const b = createKernel({ defaultMaxRevisits: 3 });
    for (const { event, actions } of a.log) {
      expect(encodeActions(b.step(event))).toBe(encodeActions(actions));
    }
    expect(b.stateHash()).toBe(a.kernel.stateHash());
  });
});

describe('steering', () => {
  it('a steering line is recorded for a working task (no action) and refused once the task has finished', () => {
    const d = new Driver();
    d.run(HAPPY_PATH.slice(0, 3));
    const steer = (): KernelEvent => {
      const head = d.eventFor({ i: 'ready', t: 0 });
      const event = {
        kind: 'UserSteered',
        seq: head.seq,
        at: head.at,
        taskId: head.taskId,
        textHash: 'a'.repeat(64),
        bytes: 12,
      };
      const decoded = decodeKernelEvent(event);
      if (decoded._tag === 'Left') throw new Error('UserSteered does not decode');
      return decoded.right;
    };
    expect(d.feed(steer())).toEqual([]);
    d.run(HAPPY_PATH.slice(3));
    expect(d.kernel.taskStatus(makeId('TaskId', 'one'))).toBe('Completed');
    expect(d.feed(steer())).toMatchObject([{ kind: 'Rejected', reason: 'task-not-active' }]);
  });
});
