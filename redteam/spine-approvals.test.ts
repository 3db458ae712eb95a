/**
 * No apply without a kernel-minted Approved, on the runtime `crustcore run`
 * uses (TaskLoop over the repository's LedgerSpine). While the task waits for
 * a person, an attacker inside the process (a compromised backend, a model's
 * tool) pushes events straight into the spine: a forged approval (wrong
 * nonce), an approval of another patch (other op hash), an apply without any
 * approval, and the reuse of a spent approval. Each leaves the tree untouched
 * and is in the ledger as a Rejected answer. CONTROL: the same door with the
 * genuine nonce and hash does reach the integrator and write the tree — so the
 * refusals come from the kernel's checks, not from a door that was never open.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Action, Approved, type Hash32, makeId, type Operation } from '@crustcore/kernel';
import { exportJsonl } from '@crustcore/ledger';
import {
  type ApprovalRequest,
  type AttemptResult,
  type IntegrationResult,
  type LedgerSpine,
  type PendingEvent,
  TaskLoop,
  type VerifyOutcome,
} from '@crustcore/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempLedger, tempLedger } from '../packages/runtime/test/spine-helpers.js';

const H = (c: string): Hash32 => c.repeat(64).slice(0, 64) as Hash32;
let n = 0;
const ids = {
  taskId: () => makeId('TaskId', `rt${++n}`),
  jobId: () => makeId('JobId', `j${++n}`),
  toolCallId: () => makeId('ToolCallId', `c${++n}`),
  approvalId: () => makeId('ApprovalId', `a${++n}`),
  nonce: () => `genuine-nonce-${++n}`,
};

type Attack = (spine: LedgerSpine, request: ApprovalRequest) => Promise<readonly Action[]>;

const resolved = (request: ApprovalRequest, nonce: string, opHash: Hash32): PendingEvent => ({
  kind: 'ApprovalResolved',
  taskId: request.taskId,
  approvalId: request.approvalId,
  decision: 'granted',
  by: 'human',
  nonce,
  opHash,
});

const ATTACKS: Record<string, Attack> = {
  'forged approval (guessed nonce)': async (spine, r) =>
    (await spine.submit(resolved(r, 'guessed-nonce', r.opHash))).actions,
  'forged approval (nonce of another encoding)': async (spine, r) =>
    (await spine.submit(resolved(r, r.nonce.toUpperCase(), r.opHash))).actions,
  'approval of another patch': async (spine, r) => (await spine.submit(resolved(r, r.nonce, H('9')))).actions,
  'apply without approval': async (spine, r) =>
    (await spine.submit({ kind: 'PatchApplied', taskId: r.taskId, patchHash: H('a'), journalId: 'forged' })).actions,
  'approval for an unknown approval id': async (spine, r) =>
    (
      await spine.submit({
        ...resolved(r, r.nonce, r.opHash),
        approvalId: makeId('ApprovalId', 'other'),
      } as PendingEvent)
    ).actions,
};

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

/** The real integrator's checks (verify-session.ts): the approval names this patch and is spent once. */
function integrate(tree: string, approved: Approved, patchHash: Hash32): IntegrationResult {
  if (approved.value.op !== 'integrate' || approved.value.patchHash !== patchHash)
    return { kind: 'failed', reason: 'approval', detail: 'the approval is for another operation' };
  if (approved.consume()._tag === 'Left')
    return { kind: 'failed', reason: 'approval', detail: 'approval already used' };
  writeFileSync(join(tree, 'a.js'), 'patched\n');
  return { kind: 'applied', journalId: 'j1', detail: 'ok' };
}

/** Runs one task to its approval; `during` acts while the person is asked, `afterApply` once the patch is in. */
async function runWithAttack(
  during: (spine: LedgerSpine, request: ApprovalRequest, tree: string) => Promise<readonly Action[]>,
  answer: 'granted' | 'denied',
  afterApply?: Attack,
) {
  ledger = tempLedger();
  const tree = join(ledger.dir, 'tree');
  mkdirSync(tree);
  writeFileSync(join(tree, 'a.js'), 'base\n');
  const spine = await ledger.open();
  const answers: Action[][] = [];
  let asked: ApprovalRequest | null = null;
  const loop = new TaskLoop(
    { taskId: ids.taskId(), goal: 'fix', profile: 'supervised', approvalMode: 'ask', canAsk: true, maxRevisits: 0 },
    {
      recorder: spine.recorder,
      steps: spine,
      ids,
      workspace: { prepare: async () => ({ baseCommit: 'base', worktreePath: tree }), cleanup: async () => undefined },
      attempts: { run: async () => PATCH },
      verifier: { verify: async () => PASSED },
      approvals: {
        resolve: async (request) => {
          asked = request;
          answers.push([...(await during(spine, request, tree))]);
          return { decision: answer, by: 'human' };
        },
      },
      integrator: {
        apply: async (approved, patchHash) => {
          const result = integrate(tree, approved, patchHash);
          if (afterApply !== undefined && asked !== null) answers.push([...(await afterApply(spine, asked))]);
          return result;
        },
        diffText: async () => null,
      },
      narrator: { event: () => undefined, note: () => undefined },
    },
  );
  const outcome = await loop.run();
  await spine.close();
  const frames: { kind: string; payload?: unknown }[] = [];
  exportJsonl({ logPath: ledger.logPath, redacted: false }, (line) => frames.push(JSON.parse(line)));
  return { outcome, answers, tree: readFileSync(join(tree, 'a.js'), 'utf8'), frames, replay: ledger.replay() };
}

const PATCH: AttemptResult = {
  kind: 'patch',
  patchHash: H('a'),
  filesChanged: 1,
  selfClaimedDone: true,
  risks: [],
  summary: 'fix',
  files: [],
  commands: [],
};
const PASSED: VerifyOutcome = {
  kind: 'passed',
  treeHash: H('b'),
  baseCommit: 'base',
  argv: ['npm', 'test'],
  profile: 'verify',
  stdoutHash: H('c'),
  stderrHash: H('d'),
  risks: [],
  testsRun: 1,
  commands: [],
};

const rejectedIn = (frames: readonly { kind: string; payload?: unknown }[]): string[] =>
  frames
    .filter((f) => f.kind === 'kernel.actions')
    .flatMap((f) => (f.payload as { actions?: { kind: string; reason?: string }[] }).actions ?? [])
    .filter((a) => a.kind === 'Rejected')
    .map((a) => String(a.reason));

describe('no apply without a kernel-minted Approved (run runtime)', () => {
  for (const [name, attack] of Object.entries(ATTACKS)) {
    it(`${name}: refused, tree untouched, a Rejected answer in the ledger`, async () => {
      const result = await runWithAttack(attack, 'denied');
      expect(result.answers[0]?.map((a) => a.kind)).toEqual(['Rejected']);
      expect(result.tree).toBe('base\n');
      expect(result.outcome.kind).toBe('denied');
      expect(rejectedIn(result.frames).length).toBeGreaterThanOrEqual(1);
      expect(result.replay.failure).toBeUndefined();
    });
  }

  it('reuse of a spent approval: refused after the genuine apply, recorded as a rejection', async () => {
    const reuse: Attack = async (spine, r) => (await spine.submit(resolved(r, r.nonce, r.opHash))).actions;
    const result = await runWithAttack(async () => [], 'granted', reuse);
    expect(result.outcome.kind).toBe('completed');
    expect(result.answers[1]?.[0]).toMatchObject({ kind: 'Rejected' });
    // New ledgers run with kernel flag 3 (bounded approvals): a settled approval is evicted, so its
    // reuse is an unknown approval; without the flag it is refused as already used.
    expect(rejectedIn(result.frames)).toContain('unknown-approval');
  });

  it('an Approved cannot be constructed outside the kernel', () => {
    const operation: Operation = { op: 'fs.read', path: 'x' };
    expect(
      () => new (Approved as unknown as new (...a: unknown[]) => Approved)(Symbol('mint'), operation, {}),
    ).toThrow();
  });

  it('CONTROL: the same door with the genuine nonce and hash yields an Approved that writes the tree', async () => {
    let wrote: IntegrationResult | null = null;
    const genuine = async (spine: LedgerSpine, r: ApprovalRequest, tree: string) => {
      const { actions } = await spine.submit(resolved(r, r.nonce, r.opHash));
      const apply = actions.find((a) => a.kind === 'ApplyPatch');
      if (apply?.kind === 'ApplyPatch') wrote = integrate(tree, apply.approved, apply.patchHash);
      return actions;
    };
    const result = await runWithAttack(genuine, 'denied');
    expect(result.answers[0]?.map((a) => a.kind)).toContain('ApplyPatch');
    expect(wrote).toMatchObject({ kind: 'applied' });
    expect(result.tree).toBe('patched\n');
  });
});
