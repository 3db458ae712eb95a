/**
 * Golden: `crustcore run` on real repositories, honestly. Workers that live
 * outside the repository, git inside the sandbox, failures that say what
 * went wrong (and stop when retrying cannot help), and refusals that come
 * before any work. Real CLI, real git, real bubblewrap.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI, crustcore, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';
import { keptPatch, listTree, writeFile } from './honest-harness.js';

beforeAll(() => buildCli(), 120_000);

const EXIT = { ok: 0, verifyFailed: 1, usage: 2, denied: 4, environment: 7 };

/** A Node worker that fixes add() through a sibling module (so its directory must be visible). */
function nodeWorkerOutside(box: Sandbox): string {
  const dir = join(box.root, 'tools', 'my-agent');
  writeFile(
    join(dir, 'fix.mjs'),
    "import { readFileSync, writeFileSync } from 'node:fs';\nexport function fix(path) {\n  writeFileSync(path, readFileSync(path, 'utf8').replace('a - b', 'a + b'));\n}\n",
  );
  return writeFile(join(dir, 'agent.mjs'), "import { fix } from './fix.mjs';\nfix('src/math.js');\n");
}

const untouched = (box: Sandbox): void => {
  const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
    cwd: box.repo,
    encoding: 'utf8',
  });
  expect(status).toBe('');
};

describe('golden: the worker’s own files are visible in the sandbox', { timeout: 240_000 }, () => {
  it('node /abs/agent.mjs outside the repository (with a sibling module) fixes the bug', () => {
    const box = makeRepo(NODE_REPO);
    const agent = nodeWorkerOutside(box);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `node ${agent}`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
  });

  it('an untracked ./fix.sh in the repository runs (it is not in the worktree checkout)', () => {
    const box = makeRepo(NODE_REPO);
    writeFile(join(box.repo, 'fix.sh'), "#!/bin/sh\nsed -i 's/a - b/a + b/' src/math.js\n", true);
    const run = crustcore(box, ['run', '--goal', 'fix add', '--worker', './fix.sh', '--approve', 'auto', '--json']);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
  });

  it('a program found on the user’s PATH outside the system directories runs', () => {
    const box = makeRepo(NODE_REPO);
    writeFile(join(box.root, 'bin', 'fixer-agent'), "#!/bin/sh\nsed -i 's/a - b/a + b/' src/math.js\n", true);
    const result = execFileSync(
      process.execPath,
      [CLI, 'run', '--goal', 'fix', '--worker', 'fixer-agent', '--approve', 'auto', '--json'],
      {
        cwd: box.repo,
        encoding: 'utf8',
        env: {
          PATH: `${join(box.root, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
          HOME: box.root,
          CRUSTCORE_HOME: box.home,
          NO_COLOR: '1',
        },
      },
    );
    expect(JSON.parse(result.trim().split('\n').pop() ?? '{}')).toMatchObject({ outcome: 'completed' });
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
  });

  it('a worker that cannot start shows its own stderr (text and --json), and is not run four times', () => {
    const box = makeRepo(NODE_REPO);
    const missing = join(box.root, 'nowhere', 'agent.mjs');
    const json = crustcore(box, ['run', '--goal', 'fix', '--worker', `node ${missing}`, '--approve', 'auto', '--json']);
    expect(json.status, json.stdout + json.stderr).toBe(EXIT.verifyFailed);
    const worker = json.json?.worker as { argv: string[]; exitCode: number; stderrTail: string };
    expect(worker.argv).toEqual(['node', missing]);
    expect(worker.exitCode).toBe(1);
    expect(worker.stderrTail).toContain('Cannot find module');
    // Two identical failures are enough to know a third would be the same.
    expect(json.json?.attempts).toBe(2);
    expect(String(json.json?.reason)).toMatch(/ended exactly like attempt 1/);
    const text = crustcore(box, ['run', '--goal', 'fix', '--worker', `node ${missing}`, '--approve', 'auto']);
    expect(text.stdout).toContain('exited 1 and changed nothing');
    expect(text.stdout).toContain('Cannot find module');
    expect(text.stdout).not.toMatch(/attempt 3/);
  });
});

describe('golden: git inside the sandbox', { timeout: 240_000 }, () => {
  const probe = [
    "import { execFileSync } from 'node:child_process';",
    "import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';",
    "import { dirname, join } from 'node:path';",
    "const git = (...a) => { try { return 'ok ' + execFileSync('git', a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }); } catch (e) { return 'fail ' + e.status + ' ' + String(e.stderr).trim(); } };",
    "const write = (p) => { try { mkdirSync(dirname(p), { recursive: true }); writeFileSync(p, 'x'); return 'wrote'; } catch (e) { return 'refused ' + e.code; } };",
    "writeFileSync('src/math.js', readFileSync('src/math.js', 'utf8').replace('a - b', 'a + b'));",
    "const gitDir = git('rev-parse', '--git-dir').slice(3).trim();",
    "const objects = readFileSync(join(gitDir, 'objects/info/alternates'), 'utf8').trim();",
    'const userGit = dirname(objects);',
    'const report = {',
    "  status: git('status', '--porcelain'), diff: git('diff', '--stat'), log: git('log', '--format=%H %s'),",
    "  commit: git('commit', '-qam', 'worker commit'), updateRef: git('update-ref', 'refs/heads/evil', 'HEAD'),",
    "  hashObject: git('hash-object', '-w', 'src/math.js'), config: git('config', 'evil.key', '1'),",
    "  writeObjects: write(join(objects, 'ev', 'il')), writeRefs: write(join(userGit, 'refs/heads/evil2')),",
    "  writeHooks: write(join(userGit, 'hooks/pre-commit')), writeConfig: write(join(userGit, 'config')),",
    '};',
    "writeFileSync('git-report.json', JSON.stringify(report, null, 1));",
  ].join('\n');

  it('status, diff and log work; commit and every write to the user’s .git fail; planted hooks and fsmonitor never run', () => {
    const box = makeRepo(NODE_REPO);
    const gitUser = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: box.repo, encoding: 'utf8' });
    // Planted in the user's repository: a command-string fsmonitor and a pre-commit hook, each leaving a marker.
    gitUser('config', 'core.fsmonitor', 'echo ran > fsmonitor-ran.txt; false');
    writeFile(join(box.repo, '.git/hooks/pre-commit'), '#!/bin/sh\necho ran > hook-ran.txt\n', true);
    // CONTROL: on the host, git honours both (so the planted config is live).
    gitUser('status', '--porcelain');
    expect(existsSync(join(box.repo, 'fsmonitor-ran.txt'))).toBe(true);
    gitUser('commit', '-q', '--allow-empty', '-m', 'control');
    expect(existsSync(join(box.repo, 'hook-ran.txt'))).toBe(true);
    for (const marker of ['fsmonitor-ran.txt', 'hook-ran.txt']) rmSync(join(box.repo, marker));
    const head = gitUser('rev-parse', 'HEAD').trim();
    const configBefore = readFileSync(join(box.repo, '.git/config'), 'utf8');
    const refsBefore = gitUser('for-each-ref').trim();

    const agent = writeFile(join(box.root, 'probe', 'agent.mjs'), probe);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `node ${agent}`,
      '--approve',
      'deny',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.denied);
    const patch = keptPatch(box, String(run.json?.taskId)) ?? '';
    const reportLines = patch
      .split('diff --git')
      .find((part) => part.includes('b/git-report.json'))
      ?.split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      .map((line) => line.slice(1));
    const report = JSON.parse((reportLines ?? []).join('\n')) as Record<string, string>;
    expect(report.status).toMatch(/^ok [ M]M src\/math\.js/);
    expect(report.diff).toMatch(/^ok .*src\/math\.js/);
    expect(report.log).toContain(`ok ${head} control`);
    for (const key of ['commit', 'updateRef', 'hashObject', 'config']) expect(report[key], key).toMatch(/^fail /);
    // The object store is bound read-only; refs, hooks and config are not shown at all (a write
    // there lands in the sandbox's own /tmp or fails, and never reaches the user's files: below).
    expect(report.writeObjects).toMatch(/^refused (EROFS|EACCES|ENOENT)/);
    // Nothing planted ran inside: no marker in what the worker left.
    expect(patch).not.toContain('fsmonitor-ran.txt');
    expect(patch).not.toContain('hook-ran.txt');
    // Nor did CrustCore's own git on the host run them.
    expect(existsSync(join(box.repo, 'fsmonitor-ran.txt'))).toBe(false);
    expect(existsSync(join(box.repo, 'hook-ran.txt'))).toBe(false);
    // The user's repository is exactly as it was.
    expect(gitUser('rev-parse', 'HEAD').trim()).toBe(head);
    expect(readFileSync(join(box.repo, '.git/config'), 'utf8')).toBe(configBefore);
    expect(gitUser('for-each-ref').trim()).toBe(refsBefore);
    expect(readFileSync(join(box.repo, '.git/hooks/pre-commit'), 'utf8')).toContain('hook-ran');
    expect(existsSync(join(box.repo, '.git/refs/heads/evil2'))).toBe(false);
    expect(existsSync(join(box.repo, '.git/objects/ev/il'))).toBe(false);
  });
});

describe('golden: failures that say what went wrong', { timeout: 240_000 }, () => {
  it('a base that cannot pass (command not found) stops at once with one clear line and exit 7', () => {
    const box = makeRepo(NODE_REPO);
    // The worker would sleep for ten minutes: the task ends only because the base's failure stopped it.
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix',
      '--verify',
      'jest',
      '--worker',
      'sh -c "sleep 600"',
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.environment);
    expect(run.json).toMatchObject({ outcome: 'environment', attempts: 1 });
    expect(String(run.json?.reason)).toMatch(/command `jest` was not found/);
    const text = crustcore(box, [
      'run',
      '--goal',
      'fix',
      '--verify',
      'jest',
      '--worker',
      'sh -c "sleep 600"',
      '--approve',
      'auto',
    ]);
    expect(text.status).toBe(EXIT.environment);
    const errors = text.stderr.split('\n').filter((line) => line.startsWith('error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/unmodified base: command `jest` was not found .*--verify/);
    expect(text.stdout).not.toMatch(/attempt 2/);
  });

  it('a base whose dependency is not installed stops at once and names it', () => {
    const box = makeRepo({
      ...NODE_REPO,
      'test/dep.test.js':
        "import { test } from 'node:test';\nimport _ from 'left-pad-not-installed';\ntest('x', () => {});\n",
    });
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix',
      '--worker',
      'sh -c "sleep 600"',
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.environment);
    expect(String(run.json?.reason)).toMatch(/dependency `left-pad-not-installed` is not installed/);
  });

  /** NODE_REPO with a dependency in its lockfile that is not installed: verify needs a setup. */
  const WITH_LOCKFILE = {
    ...NODE_REPO,
    'package.json':
      '{ "name": "golden", "private": true, "type": "module", "scripts": { "test": "node --test" }, "dependencies": { "ms": "2.1.3" } }\n',
    'package-lock.json': `${JSON.stringify({
      name: 'golden',
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'golden', dependencies: { ms: '2.1.3' } }, 'node_modules/ms': { version: '2.1.3' } },
    })}\n`,
    '.gitignore': 'node_modules\n',
  };

  it('a setup that fails stops after the first verify when the patch changes no dependency file (exit 7, one line)', () => {
    const box = makeRepo(WITH_LOCKFILE);
    const fix = `sh -c "sed -i 's/a - b/a + b/' src/math.js"`;
    const run = crustcore(box, ['run', '--goal', 'fix', '--setup', 'false', '--worker', fix, '--approve', 'auto']);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.environment);
    expect(run.stdout).not.toMatch(/attempt 2/);
    const errors = run.stderr.split('\n').filter((line) => line.startsWith('error:'));
    expect(errors).toEqual([expect.stringMatching(/setup "false" exited with 1\. .*nothing was retried/)]);
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a - b');
  });

  it.each([
    ['package.json', 'echo >> package.json'],
    ['.npmrc (classed as a secret-looking file)', 'echo fund=false >> .npmrc'],
    ['a workspace manifest under test/', 'mkdir -p test/ws && echo {} > test/ws/package.json'],
  ])(
    'CONTROL: the same failing setup is retried when the patch changes %s (its failure may be the patch’s)',
    (_what, edit) => {
      const box = makeRepo(WITH_LOCKFILE);
      const run = crustcore(box, [
        'run',
        '--goal',
        'fix',
        '--setup',
        'false',
        '--worker',
        `sh -c "${edit}"`,
        '--max-revisits',
        '1',
        '--approve',
        'auto',
        '--json',
      ]);
      expect(run.status, run.stdout + run.stderr).toBe(EXIT.verifyFailed);
      expect(run.json?.attempts).toBe(2);
    },
  );

  it('a deterministic worker that proposes the same failing patch again is not retried', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `sh -c "sed -i 's/a - b/a * b/' src/math.js"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.verifyFailed);
    // Attempt 1 was verified and failed; attempt 2 gave the same patch and the task stopped (not 4 runs).
    expect(run.json?.attempts).toBe(2);
    expect(String(run.json?.reason)).toMatch(/same patch as attempt 1/);
  });

  it('a risk found only at verify time is in --json and the hint names --approve ask', () => {
    const box = makeRepo(NODE_REPO);
    const dropTest = writeFile(
      join(box.root, 'drop-test.sh'),
      "#!/bin/sh\nsed -i 's/a - b/a + b/' src/math.js\nsed -i '/adds negatives/,$d' test/math.test.js\n",
      true,
    );
    const run = crustcore(box, ['run', '--goal', 'fix add', '--worker', dropTest, '--approve', 'auto', '--json']);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.denied);
    expect(run.json?.risks).toContain('tests-weakened');
    const verified = run.json?.verified as { risks: { kind: string }[] };
    expect(verified.risks.map((risk) => risk.kind)).toContain('tests-weakened');
    expect(String(run.json?.hint)).toMatch(/tests-weakened needs a person: run again with --approve ask/);
    untouched(box);
    const text = crustcore(box, ['run', '--goal', 'fix add', '--worker', dropTest, '--approve', 'auto']);
    expect(text.stdout).toMatch(/risks found at verify: .*tests-weakened/);
    expect(text.stderr).toMatch(/hint: risk .*tests-weakened needs a person: run again with --approve ask/);
  });
});

describe('golden: refused before any work', { timeout: 240_000 }, () => {
  const nothingDone = (box: Sandbox): void => {
    expect(listTree(join(box.home, 'worktrees'))).toEqual([]);
    expect(listTree(join(box.home, 'pool'))).toEqual([]);
    expect(listTree(join(box.home, 'projects'))).toEqual([]);
  };

  it('--approve ask (the default) without a terminal fails fast: no worktree, no worker, names the alternatives', () => {
    const box = makeRepo(NODE_REPO);
    writeFile(join(box.repo, 'fix.sh'), "#!/bin/sh\nsed -i 's/a - b/a + b/' src/math.js\n", true);
    const run = crustcore(box, ['run', '--goal', 'fix add', '--worker', './fix.sh']);
    expect(run.status).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/--approve auto/);
    expect(run.stderr).toMatch(/--approve deny/);
    expect(run.stderr).toMatch(/crustcore diff .*--export/);
    nothingDone(box);
  });

  it.each([
    ['sh -c', `sh -c 'node --test'`],
    ['bash script', 'bash run-tests.sh'],
    ['env sh', `env sh -c 'npm test'`],
  ])('a verify command with a shell (%s) is refused before the worker runs', (_name, verify) => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, ['run', '--goal', 'x', '--worker', 'true', '--verify', verify, '--approve', 'auto']);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/the verify sandbox refuses it/);
    nothingDone(box);
  });
});
