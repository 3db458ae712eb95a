/**
 * Red team: the verify layer remembers which filter drivers a repository's
 * config names (git-config-cache.ts) instead of listing the config before
 * every git call. The attack: let it remember a harmless config, then add a
 * filter driver — by `git config` (a new file), by an in-place append, by an
 * in-place rewrite of the same size, in the linked worktree's own
 * config.worktree, or inside a file that `include.path` pulls in — and run
 * the next git command at once or once the edit is older than the cache's
 * racy window. The filter must never run. Each case has a control: plain git
 * on the same repository does run it.
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GitLocation, runGitAt } from '@crustcore/verify';
import { afterAll, describe, expect, it } from 'vitest';

const base = mkdtempSync(join(tmpdir(), 'redteam-git-config-cache-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

let counter = 0;
/** `[filter "evil"]` + `clean` is 11 characters longer than `[alias]` + `zz`. */
const PADDING = 11;

/** A repository whose a.txt is selected for filter "evil" (defined nowhere yet) and is modified. */
function trappedRepo(): { path: string; marker: string; trap: string; location: GitLocation } {
  counter += 1;
  const path = join(base, `repo-${counter}`);
  execFileSync('git', ['init', '-q', path]);
  writeFileSync(join(path, '.gitattributes'), '*.txt filter=evil\n');
  writeFileSync(join(path, 'a.txt'), 'one\n');
  git(path, 'add', '-A');
  git(path, 'commit', '-qm', 'base');
  writeFileSync(join(path, 'a.txt'), 'two\n');
  const marker = join(base, `fired-${counter}`);
  const trap = join(base, `trap-${counter}.sh`);
  writeFileSync(trap, `#!/bin/sh\ntouch '${marker}'\ncat\n`);
  chmodSync(trap, 0o755);
  return { path, marker, trap, location: { gitDir: join(path, '.git'), workTree: path, cwd: path } };
}

/**
 * Handshake on the file's own clock: the cache refuses files changed in the
 * last 2 s (git's racy-clean rule), so the test waits until `file` is older
 * than that before letting the cache remember it.
 */
async function untilSettled(file: string): Promise<void> {
  const changedMs = (): number => Number(statSync(file, { bigint: true }).ctimeNs / 1_000_000n);
  while (Date.now() - changedMs() <= 2_100) await new Promise((resume) => setTimeout(resume, 100));
}

async function remembered(location: GitLocation, configFile: string): Promise<void> {
  await untilSettled(configFile);
  // Two calls: the first lists and remembers, the second is answered from memory.
  for (let i = 0; i < 2; i++) {
    const status = await runGitAt(location, ['status', '--porcelain']);
    expect(status._tag, JSON.stringify(status)).toBe('Right');
  }
}

async function diffThroughVerify(location: GitLocation): Promise<void> {
  const diffed = await runGitAt(location, ['diff', '--no-ext-diff', '--no-textconv']);
  expect(diffed._tag, JSON.stringify(diffed)).toBe('Right');
}

function control(path: string, marker: string): void {
  rmSync(marker, { force: true });
  git(path, 'diff');
  expect(existsSync(marker)).toBe(true);
}

const edits: readonly (readonly [string, (repo: ReturnType<typeof trappedRepo>) => void])[] = [
  ['git config (the file is replaced)', ({ path, trap }) => git(path, 'config', 'filter.evil.clean', trap)],
  [
    'an in-place append (same inode)',
    ({ path, trap }) => appendFileSync(join(path, '.git/config'), `[filter "evil"]\n\tclean = ${trap}\n`),
  ],
  [
    'an in-place rewrite of the same size',
    ({ path, trap }) => {
      const file = join(path, '.git/config');
      const text = readFileSync(file, 'utf8');
      const harmless = `[alias]\n\tzz = ${'x'.repeat(trap.length + PADDING)}\n`;
      const evil = `[filter "evil"]\n\tclean = ${trap}\n`;
      expect(evil.length).toBe(harmless.length);
      expect(text).toContain(harmless);
      writeFileSync(file, text.replace(harmless, evil));
      expect(statSync(file).size).toBe(text.length);
    },
  ],
];

describe('redteam: a remembered git config never hides a filter driver added later', () => {
  // "At once" meets the racy-window rule; "after it settled" meets the file-identity key alone.
  const cases = edits.flatMap(([name, edit]) => [
    [`${name}, the next call at once`, edit, false] as const,
    [`${name}, the next call after the edit settled`, edit, true] as const,
  ]);
  it.each(cases)('%s', async (_name, edit, settle) => {
    const repo = trappedRepo();
    // Room for the same-size rewrite: a harmless alias exactly as long as the filter definition.
    git(repo.path, 'config', 'alias.zz', 'x'.repeat(repo.trap.length + PADDING));
    await remembered(repo.location, join(repo.path, '.git/config'));
    edit(repo);
    if (settle) await untilSettled(join(repo.path, '.git/config'));
    await diffThroughVerify(repo.location);
    expect(existsSync(repo.marker)).toBe(false);
    control(repo.path, repo.marker);
  });

  it('a filter driver added to a file that include.path pulls in (never remembered)', async () => {
    const repo = trappedRepo();
    const included = join(base, `included-${counter}.cfg`);
    writeFileSync(included, '[core]\n\tquotePath = true\n');
    git(repo.path, 'config', 'include.path', included);
    await remembered(repo.location, join(repo.path, '.git/config'));
    await untilSettled(included);
    appendFileSync(included, `[filter "evil"]\n\tclean = ${repo.trap}\n`);
    await diffThroughVerify(repo.location);
    expect(existsSync(repo.marker)).toBe(false);
    control(repo.path, repo.marker);
  });

  it("a filter driver added to a linked worktree's config.worktree", async () => {
    const repo = trappedRepo();
    git(repo.path, 'config', 'extensions.worktreeConfig', 'true');
    const linked = join(base, `linked-${counter}`);
    git(repo.path, 'worktree', 'add', '-q', linked);
    writeFileSync(join(linked, 'a.txt'), 'three\n');
    const gitDir = join(repo.path, '.git/worktrees', `linked-${counter}`);
    const location: GitLocation = { gitDir, workTree: linked, cwd: linked };
    await untilSettled(join(repo.path, '.git/config'));
    await remembered(location, join(repo.path, '.git/config'));
    git(linked, 'config', '--worktree', 'filter.evil.clean', repo.trap);
    await diffThroughVerify(location);
    expect(existsSync(repo.marker)).toBe(false);
    control(linked, repo.marker);
  });
});
