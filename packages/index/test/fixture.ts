/** Throwaway repositories for the index tests (git is run here, by the test, to set the scene). */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

export interface Fixture {
  readonly base: string;
  readonly repoDir: string;
  /** A state directory outside the repository. */
  readonly stateDir: string;
  readonly write: (path: string, text: string) => void;
  readonly cleanup: () => void;
}

export function makeRepo(files: Readonly<Record<string, string>>): Fixture {
  const base = mkdtempSync(join(tmpdir(), 'cc-index-'));
  const repoDir = join(base, 'repo');
  const stateDir = join(base, 'state');
  mkdirSync(repoDir);
  const write = (path: string, text: string) => {
    const full = join(repoDir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  };
  for (const [path, text] of Object.entries(files)) write(path, text);
  git(repoDir, 'init', '-q', '-b', 'main');
  git(repoDir, 'add', '-A');
  git(repoDir, 'commit', '-q', '-m', 'base');
  return { base, repoDir, stateDir, write, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}
