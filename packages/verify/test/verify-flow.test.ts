import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { argvHash } from '@crustcore/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import {
  applyVerifiedPatch,
  type BackendResult,
  commitVerifiedPatch,
  createTaskWorktree,
  ExternalCommandBackend,
  exportPatch,
  gcWorktrees,
  loadPatchRecord,
  removeTaskWorktree,
  runBaselineVerify,
  type UnverifiedPatch,
  VerifiedPatch,
  verifyPatch,
  type WorkerInput,
} from '../src/index.js';
import { cap, type Fixture, git, makeRepo, NODE_PROJECT, nodeWorker, repoOf } from './git-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const fixture of fixtures.splice(0)) fixture.cleanup();
});

const input = (taskId: string, attempt = 1): WorkerInput => ({
  taskId,
  goal: 'make the tests pass',
  attempt,
  previousDiagnosis: null,
  allowedRoots: [],
  forbiddenPaths: [],
  maxSeconds: 60,
  maxOutputBytes: 1 << 20,
});

async function runWorker(fixture: Fixture, taskId: string, argv: [string, ...string[]]) {
  const repo = await repoOf(fixture);
  const worktree = await createTaskWorktree({ repo, taskId, home: fixture.home });
  if (worktree._tag === 'Left') throw new Error(worktree.left.message);
  const backend = new ExternalCommandBackend(cap('worker'), { argv });
  const result = await backend.run(input(taskId), { worktree: worktree.right, home: fixture.home });
  return { repo, worktree: worktree.right, result };
}

function patchOf(result: BackendResult): UnverifiedPatch {
  if (result.patch._tag !== 'Patch') throw new Error(`expected a patch, got ${JSON.stringify(result.patch)}`);
  return result.patch.patch;
}

describe('worker → verify → apply (Node, node --test)', () => {
  it('fixes the failing test, verifies in a fresh worktree, applies through the journal', async () => {
    const fixture = makeRepo(NODE_PROJECT);
    fixtures.push(fixture);
    const { repo, worktree, result } = await runWorker(
      fixture,
      't_node1',
      nodeWorker(
        [
          "fs.writeFileSync('src/math.js', 'export const add = (a, b) => a + b;\\n');",
          "console.log(JSON.stringify({ summary: 'fixed add for ' + input.task_id, done: true, commands_run: ['node --test'] }));",
        ].join('\n'),
      ),
    );
    expect(result.failure).toBeNull();
    expect(result.selfClaimedDone).toBe(true);
    expect(result.summary).toBe('fixed add for t_node1');
    const patch = patchOf(result);
    expect(patch.files.map((f) => [f.status, f.path, f.fileClass])).toEqual([['M', 'src/math.js', 'source']]);
    // Full object ids, never abbreviations (which can become ambiguous and then read as nothing).
    expect(patch.files.map((f) => [f.baseBlob, f.newBlob])).toEqual([
      [git(fixture.repoDir, 'rev-parse', 'HEAD:src/math.js').trim(), expect.stringMatching(/^[0-9a-f]{40}$/)],
    ]);
    expect(patch.risks).toEqual([]);
    // The user's tree and index are untouched so far.
    expect(git(fixture.repoDir, 'status', '--porcelain')).toBe('');
    await removeTaskWorktree(worktree);

    const verifyCap = cap('verify');
    const argv = ['npm', 'test'] as const;
    const baseline = await runBaselineVerify(verifyCap, {
      repo,
      taskId: 't_node1',
      baseCommit: patch.baseCommit,
      argv,
      home: fixture.home,
    });
    expect(baseline._tag).toBe('Right');
    if (baseline._tag !== 'Right') return;
    expect(baseline.right.run.exitCode).not.toBe(0);
    expect(baseline.right.run.testCounts).toMatchObject({ total: 2, failed: 1 });

    const outcome = await verifyPatch(verifyCap, {
      repo,
      taskId: 't_node1',
      patch,
      argv,
      nowMs: 1_800_000_000_000,
      baseline: baseline.right,
      home: fixture.home,
    });
    expect(outcome._tag).toBe('Right');
    if (outcome._tag !== 'Right' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
    const verified = outcome.right.verified;
    expect(VerifiedPatch.is(verified)).toBe(true);
    expect(verified.stillMatches(patch.bytes)).toBe(true);
    const tampered = new Uint8Array(patch.bytes);
    tampered[tampered.length - 2] = (tampered[tampered.length - 2] ?? 0) ^ 1;
    expect(verified.stillMatches(tampered)).toBe(false);
    const evidence = verified.evidence();
    expect(evidence).toMatchObject({
      exitCode: 0,
      profile: 'verify',
      baseCommit: patch.baseCommit,
      verifiedAtMs: 1_800_000_000_000,
    });
    expect(evidence.testCounts).toMatchObject({ total: 2, passed: 2 });
    expect(evidence.risks).toEqual([]);
    expect(JSON.parse(JSON.stringify(verified))).toMatchObject({ treeId: verified.treeId });

    const applied = await applyVerifiedPatch(verified, { repo, home: fixture.home });
    expect(applied._tag).toBe('Right');
    expect(readFileSync(join(fixture.repoDir, 'src/math.js'), 'utf8')).toBe('export const add = (a, b) => a + b;\n');
    expect(git(fixture.repoDir, 'status', '--porcelain')).toBe(' M src/math.js\n');
    // No worktree left behind.
    const gc = await gcWorktrees({ home: fixture.home });
    expect(gc.removed).toEqual([]);
    expect(git(fixture.repoDir, 'worktree', 'list').trim().split('\n')).toHaveLength(1);

    // The stored record exports a patch git apply accepts on a clean clone.
    const stored = loadPatchRecord(fixture.home, 't_node1');
    expect(stored._tag === 'Right' && stored.right.record.status).toBe('verified');
    if (stored._tag !== 'Right') return;
    const exported = exportPatch(stored.right, join(fixture.base, 'out.patch'));
    expect(exported._tag).toBe('Right');
    git(fixture.repoDir, 'stash', '-q');
    git(fixture.repoDir, 'apply', '--check', join(fixture.base, 'out.patch'));
  });

  it('--commit mode creates crustcore/<task> from the verified tree without touching the working tree', async () => {
    const fixture = makeRepo(NODE_PROJECT);
    fixtures.push(fixture);
    const { repo, worktree, result } = await runWorker(
      fixture,
      't_commit1',
      nodeWorker("fs.writeFileSync('src/math.js', 'export const add = (a, b) => a + b;\\n');"),
    );
    await removeTaskWorktree(worktree);
    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_commit1',
      patch: patchOf(result),
      argv: ['node', '--test'],
      nowMs: 1_800_000_000_000,
      home: fixture.home,
    });
    if (outcome._tag !== 'Right' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
    const committed = await commitVerifiedPatch(outcome.right.verified, {
      repo,
      nowMs: 1_800_000_000_000,
      home: fixture.home,
    });
    expect(committed._tag).toBe('Right');
    if (committed._tag !== 'Right') return;
    expect(committed.right.branch).toBe('crustcore/t_commit1');
    expect(git(fixture.repoDir, 'rev-parse', 'crustcore/t_commit1^{tree}').trim()).toBe(outcome.right.verified.treeId);
    expect(git(fixture.repoDir, 'rev-parse', 'crustcore/t_commit1^').trim()).toBe(outcome.right.verified.baseCommit);
    expect(git(fixture.repoDir, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(fixture.repoDir, 'src/math.js'), 'utf8')).toContain('a - b');
    const again = await commitVerifiedPatch(outcome.right.verified, {
      repo,
      nowMs: 1_800_000_000_000,
      home: fixture.home,
    });
    expect(again._tag === 'Left' && again.left._tag).toBe('BranchExists');
  });

  it('a user edit between verify and apply (same size, same mtime) is drift: zero writes', async () => {
    const fixture = makeRepo({ ...NODE_PROJECT, 'src/other.js': 'export const other = 1;\n' });
    fixtures.push(fixture);
    const { repo, worktree, result } = await runWorker(
      fixture,
      't_drift1',
      nodeWorker(
        [
          "fs.writeFileSync('src/math.js', 'export const add = (a, b) => a + b;\\n');",
          "fs.writeFileSync('src/other.js', 'export const other = 2;\\n');",
        ].join('\n'),
      ),
    );
    await removeTaskWorktree(worktree);
    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_drift1',
      patch: patchOf(result),
      argv: ['node', '--test'],
      nowMs: 1,
      home: fixture.home,
    });
    if (outcome._tag !== 'Right' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
    const target = join(fixture.repoDir, 'src/other.js');
    utimesSync(target, 1_700_000_000, 1_700_000_000);
    const before = statSync(target);
    writeFileSync(target, 'export const other = 9;\n');
    utimesSync(target, 1_700_000_000, 1_700_000_000);
    expect(statSync(target).size).toBe(before.size);
    expect(statSync(target).mtimeMs).toBe(before.mtimeMs);
    const applied = await applyVerifiedPatch(outcome.right.verified, { repo, home: fixture.home });
    expect(applied._tag === 'Left' && applied.left._tag).toBe('Drift');
    if (applied._tag === 'Left' && applied.left._tag === 'Drift') {
      expect(applied.left.drifted.map((d) => d.path)).toEqual(['src/other.js']);
    }
    expect(readFileSync(join(fixture.repoDir, 'src/math.js'), 'utf8')).toContain('a - b');
    expect(readFileSync(target, 'utf8')).toBe('export const other = 9;\n');
  });

  it('an unrecognized verify command needs approval of its exact argv', async () => {
    const fixture = makeRepo(NODE_PROJECT);
    fixtures.push(fixture);
    const repo = await repoOf(fixture);
    const argv = ['node', 'test/math.test.js'] as const;
    const refused = await runBaselineVerify(cap('verify'), {
      repo,
      taskId: 't_ap1',
      baseCommit: 'HEAD',
      argv,
      home: fixture.home,
    });
    expect(refused._tag === 'Left' && refused.left._tag).toBe('CommandNeedsApproval');
    const approved = await runBaselineVerify(cap('verify'), {
      repo,
      taskId: 't_ap1',
      baseCommit: 'HEAD',
      argv,
      home: fixture.home,
      approvedArgvHashes: new Set([argvHash(argv)]),
    });
    expect(approved._tag).toBe('Right');
    const wrongProfile = await runBaselineVerify(cap('worker'), {
      repo,
      taskId: 't_ap1',
      baseCommit: 'HEAD',
      argv,
      home: fixture.home,
    });
    expect(wrongProfile._tag === 'Left' && wrongProfile.left._tag).toBe('WrongProfile');
  });
});

describe('VerifiedPatch cannot be forged', () => {
  it('rejects plain objects at compile time and construction without the mint key at run time', () => {
    // @ts-expect-error a plain object lacks the private fields
    const forged: VerifiedPatch = { taskId: 't', patchSha256: 'x', stillMatches: () => true };
    expect(VerifiedPatch.is(forged)).toBe(false);
    // @ts-expect-error the mint key is a unique symbol only verify-patch.ts holds
    expect(() => new VerifiedPatch(Symbol('fake'), new Uint8Array(), {})).toThrow(TypeError);
  });
});
