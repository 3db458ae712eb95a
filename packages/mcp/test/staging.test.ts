/**
 * `stage_diff` refuses what docs/mcp.md says it refuses — for the class, not
 * the spelling: `.git` in any form a host treats as `.git`, invisible or
 * non-NFC names, trailing dots/spaces, 8.3 short names, names that fold
 * together, and symlinks or submodules on either side (never staged as a
 * regular file). CONTROLS: git's own host protections call each `.git`
 * spelling `.git`, and plain `git apply` of the same diff really creates a
 * symlink or a gitlink.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRepository, type Repository } from '@crustcore/verify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planStagedFiles } from '../src/index.js';

const env = {
  PATH: '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, env, encoding: 'utf8' });

let root = '';
let repoDir = '';
let repo: Repository;
let base = '';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'cc-staging-'));
  repoDir = join(root, 'repo');
  execFileSync('mkdir', ['-p', repoDir]);
  git(repoDir, 'init', '-q', '-b', 'main');
  writeFileSync(join(repoDir, 'a.txt'), 'one\n');
  execFileSync('ln', ['-s', 'a.txt', join(repoDir, 'link')]);
  git(repoDir, 'add', '-A');
  git(repoDir, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/sub`);
  git(repoDir, 'commit', '-q', '-m', 'base');
  base = git(repoDir, 'rev-parse', 'HEAD').trim();
  const opened = await openRepository(repoDir);
  if (opened._tag === 'Left') throw new Error(opened.left.message);
  repo = opened.right;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const createDiff = (path: string, text = 'x'): string =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${text}\n`;

/** CONTROL: git, with the protections it uses on NTFS and HFS+ hosts, calls this path invalid. */
function gitCallsItInvalid(path: string): boolean {
  const file = join(root, 'control.diff');
  writeFileSync(file, createDiff(path));
  const checked = spawnSync(
    'git',
    ['-c', 'core.protectNTFS=true', '-c', 'core.protectHFS=true', 'apply', '--check', file],
    { cwd: repoDir, env, encoding: 'utf8' },
  );
  return checked.status !== 0 && /invalid path/.test(checked.stderr);
}

async function refusal(diff: string): Promise<string> {
  const planned = await planStagedFiles(repo, base, diff);
  expect(planned._tag, 'expected a refusal').toBe('Left');
  return planned._tag === 'Left' ? planned.left.message : '';
}

describe('stage_diff: .git in every spelling a host treats as .git', () => {
  it.each([
    '.GIT/config',
    '.git./config',
    '.git /config',
    '.g\u200Bit/config',
    '.g\u200Cit/hooks/pre-commit',
    '.gi\uFEFFt/config',
    'GIT~1/config',
    'sub/.Git/config',
    'deep/er/.GIT../hooks/post-checkout',
  ])('%j is refused', async (path) => {
    expect(await refusal(createDiff(path))).toMatch(/git's own directory|zero-width|dot or space|short name/);
  });

  it.each(['.GIT/config', '.git./config', '.git /config', '.g\u200Cit/config', 'GIT~1/config'])(
    'CONTROL: git itself calls %j a .git path on protected hosts',
    (path) => {
      expect(gitCallsItInvalid(path)).toBe(true);
    },
  );
});

describe('stage_diff: names that mean something else on another host', () => {
  it.each([
    ['zero-width inside a name', 'src/ma\u200Bth.js', /zero-width/],
    ['a bidi mark', 'src/\u200Fevil.js', /zero-width/],
    ['NFD (macOS would merge it with the NFC name)', 'cafe\u0301.txt', /NFC/],
    ['a trailing dot', 'notes.', /dot or space/],
    ['a trailing space', 'dir /x.txt', /dot or space/],
    ['an 8.3 short name', 'PROGRA~1/x.txt', /short name/],
  ])('%s is refused', async (_what, path, reason) => {
    expect(await refusal(createDiff(path))).toMatch(reason);
  });

  it('two names that fold to one file cannot both be staged', async () => {
    expect(await refusal(createDiff('Readme.txt') + createDiff('README.TXT'))).toMatch(/appears twice/);
  });

  it('an ordinary new file still stages', async () => {
    const planned = await planStagedFiles(repo, base, createDiff('src/café.txt'.normalize('NFC'), 'ok'));
    expect(planned._tag).toBe('Right');
  });
});

describe('stage_diff: symlinks and submodules are refused, never staged as regular files', () => {
  const symlinkDiff =
    'diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n';
  const gitlinkDiff = `diff --git a/mod b/mod\nnew file mode 160000\nindex 0000000..${'2'.repeat(40)}\n--- /dev/null\n+++ b/mod\n@@ -0,0 +1 @@\n+Subproject commit ${'2'.repeat(40)}\n`;

  it('a new symlink is refused; CONTROL: git apply makes it a real symlink', async () => {
    expect(await refusal(symlinkDiff)).toMatch(/evil: a symlink cannot be staged/);
    const clone = join(root, 'symlink-control');
    git(root, 'clone', '-q', repoDir, clone);
    writeFileSync(join(root, 'symlink.diff'), symlinkDiff);
    git(clone, 'apply', join(root, 'symlink.diff'));
    expect(lstatSync(join(clone, 'evil')).isSymbolicLink()).toBe(true);
  });

  it('a new submodule is refused; CONTROL: git apply --index records a gitlink', async () => {
    expect(await refusal(gitlinkDiff)).toMatch(/mod: a submodule cannot be staged/);
    const clone = join(root, 'gitlink-control');
    git(root, 'clone', '-q', repoDir, clone);
    writeFileSync(join(root, 'gitlink.diff'), gitlinkDiff);
    git(clone, 'apply', '--index', join(root, 'gitlink.diff'));
    expect(git(clone, 'ls-files', '-s', 'mod')).toMatch(/^160000 /);
  });

  it('a regular file turned into a symlink by a mode change is refused', async () => {
    const diff =
      'diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 120000\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+/etc/passwd\n';
    expect(await refusal(diff)).toMatch(/a symlink cannot be staged/);
  });

  it('editing a symlink or a submodule that exists at the base is refused', async () => {
    const link = 'diff --git a/link b/link\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-a.txt\n+/etc/shadow\n';
    expect(await refusal(link)).toMatch(/symlink, submodule or directory/);
    const sub = `diff --git a/vendor/sub b/vendor/sub\n--- a/vendor/sub\n+++ b/vendor/sub\n@@ -1 +1 @@\n-Subproject commit ${'1'.repeat(40)}\n+Subproject commit ${'3'.repeat(40)}\n`;
    expect(await refusal(sub)).toMatch(/symlink, submodule or directory|does not apply/);
  });
});
