/**
 * The executor (TaskLoop) with fake ports — no git, no sandbox, no model — and
 * the real kernel and ledger spine, one test per kind of action it performs.
 * Each test ends with a replay of the log the loop wrote.
 */
import { readFileSync } from 'node:fs';
import { type Action, type Approved, type Hash32, isApproved, makeId, type Operation } from '@crustcore/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ApprovalChannel,
  type ApprovalContext,
  type AttemptResult,
  type IntegrationResult,
  type LedgerSpine,
  type RuntimeIds,
  TaskLoop,
  type TaskPorts,
  TOO_LARGE_TO_RECORD,
  type VerifyOutcome,
} from '../src/index.js';
import { logFrames, type TempLedger, tempLedger } from './spine-helpers.js';

const H = (c: string): Hash32 => c.repeat(64).slice(0, 64) as Hash32;
let counter = 0;
const ids: RuntimeIds = {
  taskId: () => makeId('TaskId', `t${++counter}`),
  jobId: () => makeId('JobId', `j${++counter}`),
  toolCallId: () => makeId('ToolCallId', `c${++counter}`),
  approvalId: () => makeId('ApprovalId', `a${++counter}`),
  nonce: () => `nonce${++counter}`,
};

const patch = (hash: Hash32): AttemptResult => ({
  kind: 'patch',
  patchHash: hash,
  filesChanged: 1,
  selfClaimedDone: true,
  risks: [],
  summary: 'fixed',
  files: [{ path: 'a.js', status: 'M', fileClass: 'source' }],
  commands: [{ argv: ['worker'], exitCode: 0, outputBytes: 3, durationMs: 1, timedOut: false, purpose: 'worker' }],
});
const passed: VerifyOutcome = {
  kind: 'passed',
  treeHash: H('b'),
  baseCommit: 'base',
  argv: ['npm', 'test'],
  profile: 'verify',
  stdoutHash: H('c'),
  stderrHash: H('d'),
  risks: [],
  testsRun: 2,
  commands: [],
};
const failed: VerifyOutcome = {
  kind: 'failed',
  category: 'assertion',
  summary: 'expected 5',
  failingTests: ['adds'],
  firstError: null,
  commands: [],
};

interface Fakes {
  attempts: AttemptResult[];
  verdicts: VerifyOutcome[];
  answer: 'granted' | 'denied';
  integration: IntegrationResult;
  applied: Approved[];
  asked: Extract<Action, { kind: 'RequestApproval' }>[];
  /** What the person was shown with each request. */
  contexts: ApprovalContext[];
  cleanups: number;
  onAttempt?: (loop: TaskLoop) => Promise<void>;
}

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

async function runLoop(
  fakes: Partial<Fakes>,
  spec: { limits?: Record<string, number>; approvalMode?: 'auto' | 'ask' | 'deny' } = {},
) {
  ledger = tempLedger();
  const spine: LedgerSpine = await ledger.open();
  const f: Fakes = {
    attempts: [],
    verdicts: [],
    answer: 'granted',
    integration: { kind: 'applied', journalId: 'j-1', detail: 'ok' },
    applied: [],
    asked: [],
    contexts: [],
    cleanups: 0,
    ...fakes,
  };
  let loop: TaskLoop | null = null;
  const approvals: ApprovalChannel = {
    resolve: async (request, context) => {
      f.asked.push(request);
      f.contexts.push(context);
      return { decision: f.answer, by: 'human' };
    },
  };
  const ports: TaskPorts = {
    recorder: spine.recorder,
    steps: spine,
    ids,
    workspace: {
      prepare: async () => ({ baseCommit: 'base', worktreePath: '/nowhere' }),
      cleanup: async () => void f.cleanups++,
    },
    attempts: {
      run: async () => {
        if (f.onAttempt !== undefined && loop !== null) await f.onAttempt(loop);
        const next = f.attempts.shift();
        if (next === undefined) throw new Error('the fake worker has no more attempts');
        return next;
      },
    },
    verifier: { verify: async () => f.verdicts.shift() ?? failed },
    approvals,
    integrator: {
      apply: async (approved) => {
        f.applied.push(approved);
        return f.integration;
      },
      diffText: async () => 'diff --git a/a.js b/a.js',
    },
    narrator: { event: () => undefined, note: () => undefined },
  };
  loop = new TaskLoop(
    {
      taskId: ids.taskId(),
      goal: 'fix it',
      profile: 'supervised',
      approvalMode: spec.approvalMode ?? 'ask',
      canAsk: true,
      maxRevisits: 1,
      ...(spec.limits ? { limits: spec.limits } : {}),
    },
    ports,
  );
  const outcome = await loop.run();
  await spine.close();
  const report = ledger.replay();
  expect(report.failure).toBeUndefined();
  return { outcome, f, loop, report };
}

describe('TaskLoop with fake ports', () => {
  it('PrepareWorkspace → PlanTask → StartAttempt → StartVerify → RequestApproval → ApplyPatch → TaskFinished', async () => {
    const { outcome, f } = await runLoop({ attempts: [patch(H('a'))], verdicts: [passed] });
    expect(outcome).toMatchObject({ kind: 'completed', patchHash: H('a'), journalId: 'j-1', attempts: 1 });
    expect(f.asked).toHaveLength(1);
    expect(f.asked[0]?.subject).toBe('integrate');
    // The integrator got the kernel's Approved, bound to the operation the person saw.
    expect(f.applied).toHaveLength(1);
    expect(isApproved(f.applied[0])).toBe(true);
    expect(f.applied[0]?.opHash).toBe(f.asked[0]?.opHash);
    expect(f.cleanups).toBe(1);
  });

  it('a failed verification starts the next attempt with the diagnosis; the revisit budget ends it', async () => {
    const retried = await runLoop({ attempts: [patch(H('a')), patch(H('e'))], verdicts: [failed, passed] });
    expect(retried.outcome).toMatchObject({ kind: 'completed', attempts: 2 });
    const spent = await runLoop({ attempts: [patch(H('a')), patch(H('e'))], verdicts: [failed, failed] });
    expect(spent.outcome).toMatchObject({
      kind: 'verify-failed',
      attempts: 2,
      lastDiagnosis: { category: 'assertion' },
    });
    expect(spent.f.applied).toHaveLength(0);
  });

  it('a worker that makes no patch is a rejected attempt', async () => {
    const none: AttemptResult = {
      kind: 'no-patch',
      category: 'no-change',
      summary: 'nothing',
      selfClaimedDone: true,
      commands: [],
    };
    const { outcome } = await runLoop({ attempts: [none, none] });
    expect(outcome.kind).toBe('verify-failed');
  });

  it('an approval denied: nothing applied, outcome denied', async () => {
    const { outcome, f } = await runLoop({ attempts: [patch(H('a'))], verdicts: [passed], answer: 'denied' });
    expect(outcome.kind).toBe('denied');
    expect(f.applied).toHaveLength(0);
  });

  it('drift at apply: IntegrationFailed, outcome drift', async () => {
    const { outcome } = await runLoop({
      attempts: [patch(H('a'))],
      verdicts: [passed],
      integration: { kind: 'failed', reason: 'drift', detail: 'a.js changed' },
    });
    expect(outcome).toMatchObject({ kind: 'drift' });
    expect(outcome.reason).toContain('a.js changed');
  });

  it('BudgetExhausted (model turns) stops the task: StopTask, TaskFinished', async () => {
    const { outcome } = await runLoop(
      {
        attempts: [patch(H('a'))],
        verdicts: [passed],
        onAttempt: async (loop) => {
          const gate = loop.toolGate();
          expect((await gate.modelTurn({ inputTokens: 1, outputTokens: 1, costMicros: 0 })).stop).toBe(true);
        },
      },
      { limits: { turns: 0 } },
    );
    expect(outcome.kind).toBe('budget-exhausted');
  });

  it('tool calls: ExecuteTool + DeliverToolResult (receipted) when allowed; RequestApproval → DenyTool when denied', async () => {
    const read: Operation = { op: 'fs.read', path: 'a.js' };
    const exec: Operation = { op: 'exec', argv: ['curl', 'x'], cwd: '.', profile: 'build', recognizedRunner: false };
    let ran = 0;
    const results: string[] = [];
    const { f } = await runLoop({
      attempts: [patch(H('a'))],
      verdicts: [passed],
      answer: 'denied',
      onAttempt: async (loop) => {
        const gate = loop.toolGate();
        const execute = async () => {
          ran++;
          return { text: 'contents', ok: true, outputBytes: 8 };
        };
        const allowed = await gate.call({
          tool: 'read_file',
          args: { path: 'a.js' },
          operation: read,
          actor: 'agent',
          execute,
        });
        results.push(allowed.kind === 'result' ? allowed.output.receiptHash : allowed.kind);
        const denied = await gate.call({
          tool: 'run_command',
          args: { argv: ['curl', 'x'] },
          operation: exec,
          actor: 'agent',
          execute,
        });
        results.push(denied.kind);
      },
    });
    expect(results[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(results[1]).toBe('denied');
    expect(ran).toBe(1);
    expect(f.asked[0]?.subject).toBe('tool');
    // The person saw the call itself, not only its operation.
    expect(f.contexts[0]?.toolCall).toEqual({ tool: 'run_command', arguments: '{"argv":["curl","x"]}' });
  });

  it('a tool call too large for a ledger frame is refused with a reason the model can act on; the task goes on and the next call runs', async () => {
    // 64 words of 4,096 characters, each six bytes of JSON (\u0001): within the agent's bounds, over the frame's.
    const huge: Operation = {
      op: 'exec',
      argv: ['sh', ...Array.from({ length: 63 }, () => '\u0001'.repeat(4_096))],
      cwd: '.',
      profile: 'build',
      recognizedRunner: false,
    };
    const read: Operation = { op: 'fs.read', path: 'a.js' };
    const results: string[] = [];
    let ran = 0;
    const execute = async () => {
      ran++;
      return { text: 'contents', ok: true, outputBytes: 8 };
    };
    const { outcome } = await runLoop({
      attempts: [patch(H('a'))],
      verdicts: [passed],
      onAttempt: async (loop) => {
        const gate = loop.toolGate();
        const refused = await gate.call({ tool: 'run_command', args: {}, operation: huge, actor: 'agent', execute });
        results.push(refused.kind === 'denied' ? refused.reason : refused.kind);
        const allowed = await gate.call({
          tool: 'read_file',
          args: { path: 'a.js' },
          operation: read,
          actor: 'agent',
          execute,
        });
        results.push(allowed.kind);
      },
    });
    expect(results).toEqual([TOO_LARGE_TO_RECORD, 'result']);
    expect(ran).toBe(1);
    expect(outcome.kind).toBe('completed');
    const notes = logFrames(ledger?.logPath as string).filter((f) => f.kind === 'note.tool.refused');
    expect(notes).toHaveLength(1);
  });

  it('SpawnSubagent within budget, DenySubagent beyond it', async () => {
    const answers: boolean[] = [];
    await runLoop(
      {
        attempts: [patch(H('a'))],
        verdicts: [passed],
        onAttempt: async (loop) => {
          const gate = loop.toolGate();
          answers.push((await gate.spawnSubagent('reviewer')).allowed, (await gate.spawnSubagent('reviewer')).allowed);
        },
      },
      { limits: { subagents: 1 } },
    );
    expect(answers).toEqual([true, false]);
  });

  it('cancel: the kernel answers StopTask + TaskFinished (killed); late outcomes are refused quietly', async () => {
    const { outcome, f } = await runLoop({
      attempts: [patch(H('a'))],
      verdicts: [passed],
      onAttempt: async (loop) => {
        await loop.cancel('interrupted by the user');
        expect(loop.signal.aborted).toBe(true);
      },
    });
    expect(outcome.kind).toBe('killed');
    expect(f.applied).toHaveLength(0);
  });

  it('a port that throws: TaskFailed is recorded and the outcome is internal', async () => {
    const { outcome, f } = await runLoop({ attempts: [] });
    expect(outcome.kind).toBe('internal');
    // The failure and its detail are in the log (the outcome's wording is the CLI's business).
    const log = readFileSync((ledger as TempLedger).logPath, 'latin1');
    expect(log).toContain('TaskFailed');
    expect(log).toContain('the fake worker has no more attempts');
    expect(f.cleanups).toBe(1);
  });
});
