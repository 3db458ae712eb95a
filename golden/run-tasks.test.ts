/**
 * Golden tasks through `crustcore run`, as a user runs them: real git,
 * real bubblewrap, real sandboxed workers, the real ledger. Each worker is a
 * small shell script run in the `worker` sandbox profile.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, crustcore, makeRepo, NODE_REPO } from './cli-harness.js';

beforeAll(() => buildCli(), 60_000);

const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";
const EXIT = { ok: 0, verifyFailed: 1, usage: 2, denied: 4, drift: 5 };

describe('golden: fix a failing unit test', () => {
  it('Node: a worker fixes add(); verified, approved (auto), applied; inspect says intact', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `sh -c "${FIX_ADD}"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stderr).toBe(EXIT.ok);
    expect(run.json).toMatchObject({ outcome: 'completed', attempts: 1 });
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
    const inspect = crustcore(box, ['inspect', '--dir', String(run.json?.stateDir), '--replay']);
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
  });

  it('Python (unittest): a worker fixes the function; verified and applied', () => {
    const box = makeRepo({
      'calc.py': 'def double(x):\n    return x + 1\n',
      'tests/test_calc.py':
        'import unittest\nfrom calc import double\n\nclass T(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(4), 8)\n',
      'tests/__init__.py': '',
    });
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix double',
      '--verify',
      'python3 -m unittest discover -s tests -t .',
      '--worker',
      `sh -c "sed -i 's/x + 1/x * 2/' calc.py"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(readFileSync(join(box.repo, 'calc.py'), 'utf8')).toContain('x * 2');
  });

  it('adds a small feature with tests (more tests run afterwards)', () => {
    const box = makeRepo(NODE_REPO);
    const script = [
      FIX_ADD,
      "printf 'export function sub(a, b) {\\n  return a - b;\\n}\\n' >> src/math.js",
      "printf \"import assert from 'node:assert/strict';\\nimport { test } from 'node:test';\\nimport { sub } from '../src/math.js';\\ntest('subtracts', () => assert.equal(sub(5, 3), 2));\\n\" > test/sub.test.js",
    ].join(' && ');
    const run = crustcore(box, [
      'run',
      '--goal',
      'add sub()',
      '--worker',
      `sh -c "${script.replace(/"/g, '\\"')}"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(existsSync(join(box.repo, 'test/sub.test.js'))).toBe(true);
  });

  it('a docs-only change still has to pass verification, then applies', () => {
    const box = makeRepo({ ...NODE_REPO, 'src/math.js': 'export function add(a, b) {\n  return a + b;\n}\n' });
    const run = crustcore(box, [
      'run',
      '--goal',
      'document',
      '--worker',
      `sh -c "echo 'Adds numbers.' >> README.md"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(readFileSync(join(box.repo, 'README.md'), 'utf8')).toContain('Adds numbers.');
  });
});

describe('golden: a task started in a linked worktree', () => {
  const gitIn = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd,
      stdio: 'pipe',
      encoding: 'utf8',
    });

  it("is based on that worktree's HEAD, not the main worktree's: verified there and applied there", () => {
    const box = makeRepo(NODE_REPO);
    const side = join(box.root, 'side');
    gitIn(box.repo, 'worktree', 'add', '-q', '-b', 'side', side);
    // The side branch's math.js differs from main's: a patch made on main's HEAD drifts here.
    execFileSync('sed', ['-i', 's|return a - b;|return a - b; // side|', join(side, 'src/math.js')]);
    gitIn(side, 'commit', '-qam', 'side');
    const sideHead = gitIn(side, 'rev-parse', 'HEAD').trim();
    const run = crustcore({ ...box, repo: side }, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `sh -c "${FIX_ADD}"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(readFileSync(join(side, 'src/math.js'), 'utf8')).toContain('return a + b; // side');
    // The main worktree is untouched, and so are both HEADs.
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('return a - b;\n');
    expect(gitIn(side, 'rev-parse', 'HEAD').trim()).toBe(sideHead);
    expect(gitIn(box.repo, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');
  });
});

describe('golden: cheats and faults leave the user tree untouched', () => {
  const untouched = (repo: string): void => {
    expect(readFileSync(join(repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
    expect(readFileSync(join(repo, 'test/math.test.js'), 'utf8')).toBe(NODE_REPO['test/math.test.js']);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' })).toBe('');
  };

  it('a worker that edits the test to pass is flagged and needs a person (none here → denied)', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'make tests pass',
      '--worker',
      `sh -c "sed -i 's/, 5)/, -1)/; s/, -5)/, 1)/' test/math.test.js"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.denied);
    untouched(box.repo);
  });

  it('a worker that deletes the tests is flagged (fewer tests) and denied without a person', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'make tests pass',
      '--worker',
      'rm test/math.test.js',
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.denied);
    untouched(box.repo);
  });

  it('a worker that writes outside the worktree cannot; nothing lands outside', () => {
    const box = makeRepo(NODE_REPO);
    const outside = join(box.root, 'escaped.txt');
    const run = crustcore(box, [
      'run',
      '--goal',
      'x',
      '--worker',
      `sh -c "echo pwned > ${outside}; echo pwned > ../escaped2.txt; echo pwned > /tmp/escaped3.txt; true"`,
      '--approve',
      'auto',
      '--max-revisits',
      '0',
      '--json',
    ]);
    expect(run.status).toBe(EXIT.verifyFailed);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(box.root, 'escaped2.txt'))).toBe(false);
    untouched(box.repo);
  });

  it('a worker that claims done without fixing is not complete', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix',
      '--worker',
      `sh -c 'echo "{\\"done\\": true, \\"summary\\": \\"all fixed\\"}"'`,
      '--approve',
      'auto',
      '--max-revisits',
      '1',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.verifyFailed);
    // A worker that fails the same way twice is not run a third time; either way it ends as verify-failed.
    expect(String(run.json?.reason)).toMatch(/revisit budget|ended exactly like attempt 1/);
    untouched(box.repo);
  });

  // Each of these passes verify, and each needs a person even under --approve auto: with no
  // terminal to ask, the run is denied and the tree stays as it was.
  it.each([
    ['a CI workflow', "mkdir -p .github/workflows && printf 'on: push\\n' > .github/workflows/ci.yml"],
    ['a secret-looking file', "printf 'TOKEN=x\\n' > .env"],
    ['a symlink out of the worktree', 'ln -s /etc/passwd passwd-link'],
    ['an edited test', "sed -i 's/adds negatives/adds two negatives/' test/math.test.js"],
  ])('a fix that also adds %s is not applied by --approve auto', (_what, extra) => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `sh -c "${FIX_ADD} && ${extra.replaceAll('"', '\\"')}"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.denied);
    expect(run.json).toMatchObject({ outcome: 'denied' });
    untouched(box.repo);
  });

  it('a worker that leaves a background process: it dies with the sandbox and cannot fake the verify', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix',
      '--worker',
      `sh -c "${FIX_ADD}; (setsid sleep 30 &) ; true"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    const survivors = execFileSync('sh', ['-c', 'pgrep -f "^sleep 30$" || true'], { encoding: 'utf8' }).trim();
    expect(survivors).toBe('');
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
  });

  it('--timeout stops a worker that takes too long: exit 130, says why, nothing applied', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add slowly',
      '--worker',
      `sh -c "sleep 60; ${FIX_ADD}"`,
      '--approve',
      'auto',
      '--timeout',
      '3',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(130);
    expect(String(run.json?.reason)).toContain('--timeout');
    // No clock needed: had the timeout not stopped it, the worker would have fixed add() and the run
    // would have completed (exit 0) with the fix applied.
    untouched(box.repo);
  });

  it('native-agent options with another backend are refused, not ignored', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, ['run', '--goal', 'x', '--worker', 'true', '--thinking', 'high']);
    expect(run.status).toBe(EXIT.usage);
    expect(run.stderr).toContain('--thinking: only the native agent takes this');
  });

  it('bad input is a usage error with a hint, not a crash', () => {
    const box = makeRepo(NODE_REPO);
    const noGoal = crustcore(box, ['run', '--worker', 'true']);
    expect(noGoal.status).toBe(EXIT.usage);
    expect(noGoal.stderr).toMatch(/--goal is required/);
    const shellOps = crustcore(box, ['run', '--goal', 'x', '--worker', 'true', '--verify', 'npm test && curl evil']);
    expect(shellOps.status).toBe(EXIT.usage);
    expect(shellOps.stderr).toMatch(/--verify/);
  });
});
