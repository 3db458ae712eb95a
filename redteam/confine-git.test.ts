/**
 * Red team: a worktree whose repository has been booby-trapped (hooks,
 * `core.hooksPath`, `core.fsmonitor`, filter and textconv drivers, an
 * external diff, a gpg program behind `log.showSignature`, a filter driver
 * hidden behind `include.path` with a name git's `-c` cannot express). Each
 * trap runs a script that touches a marker file. For each trap a control
 * first proves that plain git really fires it; then the harness's
 * gitStatus/gitDiff/gitLog must leave no marker behind.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsReadCap, gitDiff, gitLog, gitStatus, WorktreeRoot } from '@crustcore/confine';
import type { Result } from '@crustcore/kernel';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';

const base = mkdtempSync(join(tmpdir(), 'redteam-git-'));
const markers = join(base, 'markers');
const scripts = join(base, 'scripts');
mkdirSync(markers);
mkdirSync(scripts);
afterAll(() => rmSync(base, { recursive: true, force: true }));

function right<E, A>(result: Result<E, A>): A {
  if (result._tag === 'Left') throw new Error(`expected Right, got ${JSON.stringify(result.left)}`);
  return result.right;
}

/** Plain git, as a user (or an unprotected harness) would run it. */
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
const gitQuiet = (cwd: string, ...args: string[]): void => {
  try {
    git(cwd, ...args);
  } catch {
    // Traps may make plain git fail (a failing filter); the marker is what matters.
  }
};

/** A trap script: touches markers/<name>, then behaves like `cat` for filters and textconv. */
function trap(name: string): string {
  const path = join(scripts, `${name}.sh`);
  writeFileSync(
    path,
    `#!/bin/sh\ntouch '${join(markers, name)}'\nif [ -n "$1" ] && [ -f "$1" ]; then cat "$1"; else cat; fi\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

const fired = (): string[] => readdirSync(markers).sort();

function clearMarkers(): void {
  for (const name of readdirSync(markers)) rmSync(join(markers, name));
}

let counter = 0;
/** A fresh repository with one commit and a modified tracked file. */
function repo(): { path: string; cap: FsReadCap } {
  counter += 1;
  const path = join(base, `repo-${counter}`);
  mkdirSync(path);
  git(path, 'init', '-q', '-b', 'main');
  writeFileSync(join(path, 'a.txt'), 'one\n');
  writeFileSync(join(path, 'b.txt'), 'bee\n');
  git(path, 'add', '-A');
  git(path, 'commit', '-qm', 'base');
  writeFileSync(join(path, 'a.txt'), 'one\ntwo\n');
  const cap = right(FsReadCap.grant(right(WorktreeRoot.open(path)), 'redteam'));
  return { path, cap };
}

/** Runs the harness's three git tools and checks each succeeded. */
async function harness(cap: FsReadCap): Promise<void> {
  const status = right(await gitStatus(cap));
  expect(status.entries.some((entry) => entry.path === 'a.txt')).toBe(true);
  const diff = right(await gitDiff(cap));
  expect(diff.patch).toContain('+two');
  right(await gitDiff(cap, { base: 'HEAD', binary: true }));
  right(await gitLog(cap));
}

beforeEach(clearMarkers);

describe('planted git traps do not run in the harness', () => {
  it('hooks in .git/hooks (post-checkout, pre-commit, post-index-change, reference-transaction)', async () => {
    const { path, cap } = repo();
    for (const hook of ['post-checkout', 'pre-commit', 'post-index-change', 'reference-transaction']) {
      const target = join(path, '.git/hooks', hook);
      writeFileSync(target, `#!/bin/sh\ntouch '${join(markers, hook)}'\n`);
      chmodSync(target, 0o755);
    }
    await harness(cap);
    expect(fired()).toEqual([]);
    // Control: the hooks are live for plain git.
    gitQuiet(path, 'checkout', '-q', '-b', 'control');
    gitQuiet(path, 'commit', '-qam', 'control');
    expect(fired()).toEqual(expect.arrayContaining(['post-checkout', 'pre-commit']));
  });

  it('core.hooksPath in the repository config pointing at a hooks dir inside the worktree', async () => {
    const { path, cap } = repo();
    mkdirSync(join(path, 'evil-hooks'));
    writeFileSync(join(path, 'evil-hooks/post-index-change'), `#!/bin/sh\ntouch '${join(markers, 'hooks-path')}'\n`);
    chmodSync(join(path, 'evil-hooks/post-index-change'), 0o755);
    git(path, 'config', 'core.hooksPath', 'evil-hooks');
    // Make the index stale so a status would want to refresh (and write) it.
    writeFileSync(join(path, 'b.txt'), 'bee\n');
    await harness(cap);
    expect(fired()).toEqual([]);
    gitQuiet(path, 'status');
    expect(fired()).toEqual(['hooks-path']);
  });

  it('core.fsmonitor in the repository config', async () => {
    const { path, cap } = repo();
    git(path, 'config', 'core.fsmonitor', trap('fsmonitor'));
    await harness(cap);
    expect(fired()).toEqual([]);
    gitQuiet(path, 'status');
    expect(fired()).toEqual(['fsmonitor']);
  });

  it('a clean/smudge/process filter driver selected by .gitattributes', async () => {
    const { path, cap } = repo();
    writeFileSync(join(path, '.gitattributes'), '*.txt filter=evil\n');
    git(path, 'config', 'filter.evil.clean', trap('filter-clean'));
    git(path, 'config', 'filter.evil.smudge', trap('filter-smudge'));
    git(path, 'config', 'filter.evil.required', 'true');
    await harness(cap);
    expect(fired()).toEqual([]);
    gitQuiet(path, 'status');
    gitQuiet(path, 'diff');
    expect(fired()).toEqual(['filter-clean']);
  });

  it('a filter driver with an unusual name, defined through include.path and selected by info/attributes', async () => {
    const { path, cap } = repo();
    const included = join(path, 'innocent.cfg');
    writeFileSync(included, `[filter "Ev=il.x"]\n\tclean = ${trap('included-filter')}\n\trequired = true\n`);
    git(path, 'config', 'include.path', included);
    mkdirSync(join(path, '.git/info'), { recursive: true });
    writeFileSync(join(path, '.git/info/attributes'), '* filter=Ev=il.x\n');
    await harness(cap);
    expect(fired()).toEqual([]);
    // Control: diff must read the modified file through the clean filter. (A status alone runs
    // it only when the index entry is racy, which depends on timing.)
    gitQuiet(path, 'status');
    gitQuiet(path, 'diff');
    expect(fired()).toEqual(['included-filter']);
  });

  it('a diff.<driver>.textconv driver and a diff.<driver>.command driver', async () => {
    const { path, cap } = repo();
    writeFileSync(join(path, '.gitattributes'), 'a.txt diff=conv\nb.txt diff=cmd\n');
    writeFileSync(join(path, 'b.txt'), 'bee\nsee\n');
    git(path, 'config', 'diff.conv.textconv', trap('textconv'));
    git(path, 'config', 'diff.cmd.command', trap('diff-command'));
    await harness(cap);
    right(await gitLog(cap, { maxCount: 5 }));
    expect(fired()).toEqual([]);
    gitQuiet(path, 'diff');
    expect(fired()).toEqual(['diff-command', 'textconv']);
  });

  it('diff.external in the repository config', async () => {
    const { path, cap } = repo();
    git(path, 'config', 'diff.external', trap('external-diff'));
    await harness(cap);
    expect(fired()).toEqual([]);
    gitQuiet(path, 'diff');
    expect(fired()).toEqual(['external-diff']);
  });

  it('gpg.program behind log.showSignature on a signed commit', async () => {
    const { path, cap } = repo();
    const tree = git(path, 'rev-parse', 'HEAD^{tree}').trim();
    const parent = git(path, 'rev-parse', 'HEAD').trim();
    const body = [
      `tree ${tree}`,
      `parent ${parent}`,
      'author t <t@t> 1700000000 +0000',
      'committer t <t@t> 1700000000 +0000',
      'gpgsig -----BEGIN PGP SIGNATURE-----',
      ' ',
      ' iQEzBAABCAAdFiEE',
      ' -----END PGP SIGNATURE-----',
      '',
      'signed',
      '',
    ].join('\n');
    const commit = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: path,
      input: body,
      encoding: 'utf8',
    }).trim();
    git(path, 'update-ref', 'HEAD', commit);
    git(path, 'config', 'gpg.program', trap('gpg'));
    git(path, 'config', 'log.showSignature', 'true');
    const commits = right(await gitLog(cap));
    expect(commits[0]?.subject).toBe('signed');
    await harness(cap);
    expect(fired()).toEqual([]);
    gitQuiet(path, 'log', '-1');
    expect(fired()).toEqual(['gpg']);
  });

  it('the empty HOME and /dev/null global config keep the host user`s config out', async () => {
    const { path, cap } = repo();
    const fakeHome = join(base, 'fake-home');
    mkdirSync(fakeHome, { recursive: true });
    writeFileSync(join(fakeHome, '.gitconfig'), `[core]\n\tfsmonitor = ${trap('home-config')}\n`);
    const saved = process.env.HOME;
    process.env.HOME = fakeHome;
    try {
      await harness(cap);
      expect(fired()).toEqual([]);
      gitQuiet(path, 'status');
      expect(fired()).toEqual(['home-config']);
    } finally {
      process.env.HOME = saved;
    }
    expect(existsSync(join(markers, 'home-config'))).toBe(true);
  });
});
