/**
 * Git calls that start side by side share one `git config --list` (git.ts filterNamesAt), but
 * only where the remembered answer would be sound too: a config that includes other files is
 * listed by every caller (so is a config file changed within the racy window: it has no
 * fingerprint, the same rule the cache's own tests in redteam/verify-git-config-cache pin).
 * `configListingsStarted()` counts the listings this process started.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configListingsStarted, type GitLocation, runGitAt } from '../src/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'crustcore-config-sharing-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let made = 0;
function repo(config = ''): { location: GitLocation; configFile: string } {
  made += 1;
  const path = join(scratch, `r${made}`);
  execFileSync('git', ['init', '-q', path]);
  const configFile = join(path, '.git', 'config');
  if (config !== '') appendFileSync(configFile, config);
  return { location: { gitDir: join(path, '.git'), workTree: path, cwd: path }, configFile };
}

/** Handshake on the file's own clock: its change time older than the cache's 2 s racy window. */
async function untilSettled(file: string): Promise<void> {
  const changedMs = (): number => Number(statSync(file, { bigint: true }).ctimeNs / 1_000_000n);
  while (Date.now() - changedMs() <= 2_100) await new Promise((resume) => setTimeout(resume, 100));
}

/** Three git calls at once; how many listings they started. */
async function listingsForThreeAtOnce(location: GitLocation): Promise<number> {
  const before = configListingsStarted();
  const results = await Promise.all([0, 1, 2].map(() => runGitAt(location, ['status', '--porcelain'])));
  for (const result of results) expect(result._tag, JSON.stringify(result)).toBe('Right');
  return configListingsStarted() - before;
}

describe('git config listings shared by calls that start together', () => {
  it('one listing for three calls on a settled config', async () => {
    const { location, configFile } = repo();
    await untilSettled(configFile);
    expect(await listingsForThreeAtOnce(location)).toBe(1);
    // And remembered afterwards: no listing at all.
    expect(await listingsForThreeAtOnce(location)).toBe(0);
  }, 30_000);

  it('every call lists a config that includes another file (no fingerprint covers it)', async () => {
    const included = join(scratch, 'included.conf');
    writeFileSync(included, '[alias]\n\tzz = status\n');
    const { location, configFile } = repo(`[include]\n\tpath = ${included}\n`);
    await untilSettled(configFile);
    expect(await listingsForThreeAtOnce(location)).toBe(3);
  }, 30_000);
});

describe("a linked worktree reads its repository's config: one listing serves both", () => {
  function linkedTo(path: string, name: string): GitLocation {
    const linked = join(scratch, name);
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'b'], {
      cwd: path,
    });
    execFileSync('git', ['worktree', 'add', '-q', linked], { cwd: path });
    return { gitDir: join(path, '.git', 'worktrees', name), workTree: linked, cwd: linked };
  }

  it('no listing in a linked worktree once the main one listed; its own config.worktree gets its own', async () => {
    const { location, configFile } = repo();
    const linked = linkedTo(location.workTree as string, `linked-${made}`);
    await untilSettled(configFile);
    expect(await listingsForThreeAtOnce(location)).toBe(1);
    expect(await listingsForThreeAtOnce(linked)).toBe(0);
    // A config.worktree of its own (extensions.worktreeConfig) is read by that worktree alone.
    execFileSync('git', ['config', 'extensions.worktreeConfig', 'true'], { cwd: location.workTree as string });
    await untilSettled(configFile);
    const own = join(linked.gitDir, 'config.worktree');
    writeFileSync(own, '[alias]\n\tzz = status\n');
    await untilSettled(own);
    expect(await listingsForThreeAtOnce(location)).toBe(1);
    expect(await listingsForThreeAtOnce(linked)).toBe(1);
  }, 30_000);
});

describe('a config listing that fails stops the command (fail closed)', () => {
  it('the command never starts when git cannot list the config; its filters would have gone unoverridden', async () => {
    const { location, configFile } = repo();
    appendFileSync(configFile, '[core\nbroken');
    const result = await runGitAt(location, ['status', '--porcelain']);
    expect(result._tag).toBe('Left');
    // The listing's own failure, not the command's: nothing ran without the overrides.
    if (result._tag === 'Left') {
      expect(result.left.command).toBe('config');
      expect(result.left.message).toMatch(/could not list the repository config/);
    }
  });
});
