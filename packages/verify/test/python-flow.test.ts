/**
 * Python end to end for this layer. The sandbox sees only system Python
 * (/usr/bin/python3), which has no pytest here, so the suite runs with
 * `python3 -m unittest` (pytest-compatible test files); that argv is not a
 * recognized runner, so it runs under an approval of its exact argv hash.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { argvHash } from '@crustcore/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import {
  applyVerifiedPatch,
  createTaskWorktree,
  ExternalCommandBackend,
  removeTaskWorktree,
  verifyPatch,
} from '../src/index.js';
import { cap, type Fixture, git, makeRepo, repoOf } from './git-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const fixture of fixtures.splice(0)) fixture.cleanup();
});

const PYTHON_PROJECT = {
  'calc.py': 'def mul(a, b):\n    return a + b\n',
  'tests/__init__.py': '',
  'tests/test_calc.py': [
    'import unittest',
    'from calc import mul',
    '',
    'class CalcTest(unittest.TestCase):',
    '    def test_mul(self):',
    '        self.assertEqual(mul(3, 4), 12)',
    '',
    '    def test_mul_one(self):',
    '        self.assertEqual(mul(5, 1), 5)',
    '',
  ].join('\n'),
};

describe('worker → verify → apply (Python, unittest)', () => {
  it('a failing suite is diagnosed, a worker fix is verified and applied', async () => {
    const fixture = makeRepo(PYTHON_PROJECT);
    fixtures.push(fixture);
    const repo = await repoOf(fixture);
    const argv = ['python3', '-m', 'unittest', '-v'] as const;
    const approvedArgvHashes = new Set([argvHash(argv)]);
    const worktree = await createTaskWorktree({ repo, taskId: 't_py1', home: fixture.home });
    if (worktree._tag === 'Left') throw new Error(worktree.left.message);
    const worker = new ExternalCommandBackend(cap('worker'), {
      argv: [
        'sh',
        '-c',
        'sed -i \'s/return a + b/return a * b/\' calc.py && echo \'{"summary":"fixed mul","done":true}\'',
      ],
    });
    const input = {
      taskId: 't_py1',
      goal: 'fix mul',
      attempt: 1,
      previousDiagnosis: null,
      allowedRoots: [],
      forbiddenPaths: [],
      maxSeconds: 60,
      maxOutputBytes: 1 << 20,
    };
    const result = await worker.run(input, { worktree: worktree.right, home: fixture.home });
    await removeTaskWorktree(worktree.right);
    if (result.patch._tag !== 'Patch') throw new Error(JSON.stringify(result.patch));
    expect(result.summary).toBe('fixed mul');

    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_py1',
      patch: result.patch.patch,
      argv,
      approvedArgvHashes,
      nowMs: 5,
      home: fixture.home,
      env: { PYTHONDONTWRITEBYTECODE: '1' },
    });
    if (outcome._tag !== 'Right' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
    expect(outcome.right.run.testCounts).toMatchObject({ runner: 'unittest', total: 2, passed: 2 });
    const applied = await applyVerifiedPatch(outcome.right.verified, { repo, home: fixture.home });
    expect(applied._tag).toBe('Right');
    expect(readFileSync(join(fixture.repoDir, 'calc.py'), 'utf8')).toContain('a * b');
    expect(git(fixture.repoDir, 'status', '--porcelain')).toBe(' M calc.py\n');
  });

  it('the unfixed suite fails with an assertion diagnosis naming the test and values', async () => {
    const fixture = makeRepo(PYTHON_PROJECT);
    fixtures.push(fixture);
    const repo = await repoOf(fixture);
    const worktree = await createTaskWorktree({ repo, taskId: 't_py2', home: fixture.home });
    if (worktree._tag === 'Left') throw new Error(worktree.left.message);
    const worker = new ExternalCommandBackend(cap('worker'), { argv: ['sh', '-c', "echo '# touched' >> calc.py"] });
    const result = await worker.run(
      {
        taskId: 't_py2',
        goal: 'x',
        attempt: 1,
        previousDiagnosis: null,
        allowedRoots: [],
        forbiddenPaths: [],
        maxSeconds: 60,
        maxOutputBytes: 1 << 20,
      },
      { worktree: worktree.right, home: fixture.home },
    );
    await removeTaskWorktree(worktree.right);
    if (result.patch._tag !== 'Patch') throw new Error(JSON.stringify(result.patch));
    const argv = ['python3', '-m', 'unittest'] as const;
    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_py2',
      patch: result.patch.patch,
      argv,
      approvedArgvHashes: new Set([argvHash(argv)]),
      nowMs: 5,
      home: fixture.home,
    });
    if (outcome._tag !== 'Right' || outcome.right._tag !== 'Failed') throw new Error(JSON.stringify(outcome));
    const { diagnosis } = outcome.right;
    expect(diagnosis.kind).toBe('assertion');
    expect(diagnosis.failingTests).toEqual([
      'test_mul (tests.test_calc.CalcTest.test_mul)',
      'test_mul_one (tests.test_calc.CalcTest.test_mul_one)',
    ]);
    expect(diagnosis).toMatchObject({ expected: '12', received: '7' });
    expect(diagnosis.firstErrorLocation).toMatchObject({ file: 'tests/test_calc.py', line: 6 });
  });
});
