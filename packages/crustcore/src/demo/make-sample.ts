/**
 * Creates the demo's sample repository: files, `git init`, one commit. Git
 * runs through the sandbox package's trusted runner with the same
 * neutralized environment CrustCore uses for every host-side git command.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gitBaseArgs, gitEnv } from '@crustcore/confine';
import { runTrustedHostCommand } from '@crustcore/sandbox';
import { SAMPLE_FILES } from './sample-repo.js';

async function git(dir: string, args: readonly string[]): Promise<void> {
  const env = {
    ...gitEnv({ root: dir }),
    GIT_AUTHOR_NAME: 'CrustCore Demo',
    GIT_AUTHOR_EMAIL: 'demo@crustcore.invalid',
    GIT_COMMITTER_NAME: 'CrustCore Demo',
    GIT_COMMITTER_EMAIL: 'demo@crustcore.invalid',
  };
  const result = await runTrustedHostCommand({
    argv: ['git', ...gitBaseArgs(), ...args],
    cwd: dir,
    env,
    timeoutMs: 20_000,
    maxOutputBytes: 64 * 1024,
  });
  if (result.startError !== null) {
    throw new Error(`git could not start (${result.startError.message}): install git, e.g. apt-get install -y git`);
  }
  if (result.exitCode !== 0) throw new Error(`git ${args[0]} failed: ${result.stderr.text.trim()}`);
}

export async function makeSampleRepository(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(SAMPLE_FILES)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  await git(dir, ['init', '-q', '-b', 'main']);
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', '-m', 'calculator with two bugs']);
}
