/**
 * Small real git projects for the `crustcore run` benches: the environment they run in, a
 * project made from files and committed, and the one-line bug they all fix (`add` subtracts).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A bare environment with `home` as HOME and a git identity (no user config leaks in). */
export const benchEnv = (home: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@b',
});

/** The bug and its test: `add` subtracts; the worker's fix is `sed 's/a - b/a + b/'`. */
export const BUGGY_ADD_FILES: Readonly<Record<string, string>> = {
  'src/math.js': 'export function add(a, b) {\n  return a - b;\n}\n',
  'test/math.test.js':
    "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { add } from '../src/math.js';\ntest('adds', () => assert.equal(add(2, 3), 5));\n",
};

/** Writes `files` under `dir` and commits them as the base. */
export function gitProject(dir: string, files: Readonly<Record<string, string>>, env: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const args of [
    ['init', '-q'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'base'],
  ])
    execFileSync('git', args, { cwd: dir, env });
  return dir;
}

export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
