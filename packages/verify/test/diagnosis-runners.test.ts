/**
 * The classifier on real runner output: mocha/chai captured here (fixtures,
 * see fixtures/runner-output/README.md), `node --test` and a shell run live.
 * The first failing test must come with its own message and location, a
 * runner's usage error must not pass for an assertion, and what was missing
 * must be named.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baselineBlocker, diagnoseFailure } from '../src/index.js';

const fixture = (name: string): string =>
  readFileSync(join(import.meta.dirname, 'fixtures/runner-output', `${name}.txt`), 'utf8');

const failed = (stdout: string, stderr = '', exitCode: number | null = 1, roots: string[] = []) =>
  diagnoseFailure({ exitCode, signal: null, timedOut: false, stdout, stderr, roots });

describe('the first failure keeps its own message and location', () => {
  it('mocha + chai: failure #1 (node:assert) is not given failure #3’s chai message', () => {
    const d = failed(fixture('mocha-chai-spec'), '', 3);
    expect(d.kind).toBe('assertion');
    expect(d.failingTests).toEqual(['calc negates', 'calc divides by zero', 'calc adds two numbers']);
    expect(d.firstFailure).toEqual({
      test: 'calc negates',
      message: 'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 4 !== -4',
      location: { file: 'test/calc.test.js', line: 7, column: 12 },
    });
    expect(d.firstErrorLocation).toEqual({ file: 'test/calc.test.js', line: 7, column: 12 });
    // The values are failure #1's (4 vs -4), never failure #3's chai "expected -1 to equal 5".
    expect(d).toMatchObject({ expected: '-4', received: '4' });
    expect(d.summary).toContain('4 !== -4');
    expect(d.summary).not.toContain('expected -1 to equal 5');
  });

  it('node --test (real run): the first failing test, its message and its line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crustcore-diag-'));
    writeFileSync(
      join(dir, 'a.test.mjs'),
      [
        "import assert from 'node:assert/strict';",
        "import { test } from 'node:test';",
        "test('first breaks', () => { assert.equal(1 + 1, 3); });",
        "test('passes', () => {});",
        "test('second breaks', () => { assert.deepEqual({ a: 1 }, { a: 2 }); });",
        '',
      ].join('\n'),
    );
    for (const reporter of ['tap', 'spec']) {
      const run = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, 'a.test.mjs'], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1' },
      });
      expect(run.status).toBe(1);
      const d = failed(run.stdout, run.stderr, 1, [dir]);
      expect(d.kind, reporter).toBe('assertion');
      expect(d.failingTests[0], reporter).toBe('first breaks');
      expect(d.firstFailure?.test, reporter).toBe('first breaks');
      expect(d.firstFailure?.message, reporter).toMatch(/2 !== 3|strictly equal/);
      expect(d.firstFailure?.message, reporter).not.toMatch(/deep/i);
      expect(d.firstErrorLocation?.file, reporter).toBe('a.test.mjs');
      expect(d.firstErrorLocation?.line, reporter).toBe(3);
    }
  });
});

describe('a runner’s usage or configuration error is not an assertion', () => {
  it.each([
    ['mocha-bad-reporter', 'Could not load reporter'],
    ['mocha-no-files', 'No test files found'],
    ['mocha-broken-config', 'mocharc'],
    ['vitest-no-files', 'No test files found'],
  ])('%s → usage-error', (name, words) => {
    const d = failed(fixture(name));
    expect(d.kind).toBe('usage-error');
    expect(d.summary).toContain(words);
    expect(d.remediation).toMatch(/command line or configuration/);
  });

  it('npm without a test script (real npm) → usage-error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crustcore-diag-'));
    writeFileSync(join(dir, 'package.json'), '{ "name": "x", "private": true }\n');
    const run = spawnSync('npm', ['test', '--offline'], { cwd: dir, encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(failed(run.stdout, run.stderr, run.status).kind).toBe('usage-error');
  });

  it('a test whose own message mentions an unknown option is still an assertion', () => {
    const d = failed(fixture('mocha-chai-spec').replace('cannot read the divisor', 'Unknown option --x'), '', 3);
    expect(d.kind).toBe('assertion');
  });
});

describe('what was missing is named', () => {
  it('a command the shell could not find (real sh)', () => {
    const run = spawnSync('sh', ['-c', 'crustcore-no-such-tool --version'], { encoding: 'utf8' });
    const d = failed(run.stdout, run.stderr, run.status);
    expect(d).toMatchObject({ kind: 'environment', environmentCause: 'command-not-found' });
    expect(d.missing).toBe('crustcore-no-such-tool');
    expect(d.summary).toMatch(/^command not found: crustcore-no-such-tool/);
    expect(d.summary).not.toMatch(/environment/);
  });

  it('a program bubblewrap could not exec, and a missing package (real node)', () => {
    expect(failed('', 'bwrap: execvp jest: No such file or directory\n').missing).toBe('jest');
    const dir = mkdtempSync(join(tmpdir(), 'crustcore-diag-'));
    writeFileSync(join(dir, 'a.mjs'), "import 'left-pad-crustcore-missing';\n");
    const run = spawnSync(process.execPath, ['a.mjs'], { cwd: dir, encoding: 'utf8' });
    const d = failed(run.stdout, run.stderr, run.status, [dir]);
    expect(d).toMatchObject({ kind: 'missing-module', missing: 'left-pad-crustcore-missing' });
    expect(d.summary).toMatch(/^module not found: left-pad-crustcore-missing/);
  });
});

describe('baselineBlocker: only what no patch can fix stops the task', () => {
  const sh = (command: string) => {
    const run = spawnSync('sh', ['-c', command], { encoding: 'utf8' });
    return failed(run.stdout, run.stderr, run.status);
  };

  it('a missing command stops, naming it and --verify', () => {
    const blocker = baselineBlocker(sh('crustcore-no-such-runner'), ['crustcore-no-such-runner']);
    expect(blocker?.missing).toBe('command `crustcore-no-such-runner`');
    expect(blocker?.message).toMatch(/unmodified base: command `crustcore-no-such-runner` was not found.*--verify/);
  });

  it('a missing repository script does not stop (the task may be to write it)', () => {
    const d = sh('./run-tests.sh');
    expect(baselineBlocker(d, ['./run-tests.sh'])).toBeNull();
  });

  it('a missing package stops; a missing local module does not; a Python module stops only if it is the runner', () => {
    const pkg = failed('', "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'vitest' imported from /w/x.js");
    expect(baselineBlocker(pkg, ['npm', 'test'])?.missing).toBe('dependency `vitest`');
    const local = failed('', "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/w/src/new.js' imported from /w/t.js");
    expect(baselineBlocker(local, ['npm', 'test'])).toBeNull();
    const runner = failed('', '/usr/bin/python3: No module named pytest\n');
    expect(baselineBlocker(runner, ['python3', '-m', 'pytest'])?.missing).toBe('dependency `pytest`');
    const own = failed("E   ModuleNotFoundError: No module named 'calc'\n");
    expect(baselineBlocker(own, ['python3', '-m', 'pytest'])).toBeNull();
  });

  it('an assertion on the base never stops the task', () => {
    expect(baselineBlocker(failed(fixture('mocha-chai-spec'), '', 3), ['npx', 'mocha'])).toBeNull();
  });

  it('the host really lacks the command used above', () => {
    expect(() => execFileSync('sh', ['-c', 'command -v crustcore-no-such-runner'])).toThrow();
  });
});
