/**
 * Test fixtures: throwaway git repositories with a failing test, sandbox
 * capabilities, and a private CRUSTCORE_HOME per test.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mintSandboxExecCap, type SandboxExecCap } from '@crustcore/sandbox';
import { openRepository, type Repository } from '../src/index.js';

const gitEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface Fixture {
  readonly base: string;
  readonly home: string;
  readonly repoDir: string;
  readonly cleanup: () => void;
}

export function makeRepo(files: Readonly<Record<string, string>>, executable: readonly string[] = []): Fixture {
  const base = mkdtempSync(join(tmpdir(), 'cc-verify-'));
  const repoDir = join(base, 'repo');
  const home = join(base, 'home');
  mkdirSync(repoDir);
  mkdirSync(home);
  for (const [path, text] of Object.entries(files)) {
    const full = join(repoDir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
    if (executable.includes(path)) chmodSync(full, 0o755);
  }
  git(repoDir, 'init', '-q', '-b', 'main');
  git(repoDir, 'add', '-A');
  git(repoDir, 'commit', '-q', '-m', 'base');
  return { base, home, repoDir, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

export async function repoOf(fixture: Fixture): Promise<Repository> {
  const repo = await openRepository(fixture.repoDir);
  if (repo._tag === 'Left') throw new Error(repo.left.message);
  return repo.right;
}

export function cap(profile: 'verify' | 'worker'): SandboxExecCap {
  const minted = mintSandboxExecCap(profile);
  if (minted._tag === 'Left') throw new Error(minted.left.message);
  return minted.right;
}

/** A Node project whose `node --test` fails: add() subtracts. */
export const NODE_PROJECT: Readonly<Record<string, string>> = {
  'package.json': JSON.stringify({ name: 'fixture', type: 'module', scripts: { test: 'node --test' } }, null, 2),
  'src/math.js': 'export const add = (a, b) => a - b;\n',
  'test/math.test.js': [
    "import { test } from 'node:test';",
    "import assert from 'node:assert/strict';",
    "import { add } from '../src/math.js';",
    "test('adds', () => { assert.equal(add(1, 2), 3); });",
    "test('adds zero', () => { assert.equal(add(5, 0), 5); });",
    '',
  ].join('\n'),
  'README.md': '# fixture\n',
};

/** Node code (for `node -e`) run as a worker: reads the JSON input on stdin, then `body`. */
export function nodeWorker(body: string): [string, ...string[]] {
  const script = ["const fs = require('node:fs');", "const input = JSON.parse(fs.readFileSync(0, 'utf8'));", body].join(
    '\n',
  );
  return ['node', '-e', script];
}
