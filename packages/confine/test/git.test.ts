import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FsReadCap,
  filterDriverNames,
  filterOverrideEnv,
  gitBaseArgs,
  gitDiff,
  gitEnv,
  gitLog,
  gitStatus,
  resolveReadPath,
  WorktreeRoot,
} from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=Tess T', ...args], { cwd, encoding: 'utf8' });

function repo() {
  const box = makeSandbox();
  git(box.rootPath, 'init', '-q', '-b', 'main');
  box.put('a.txt', 'one\n');
  box.put('b.txt', 'bee\n');
  git(box.rootPath, 'add', '-A');
  git(box.rootPath, 'commit', '-qm', 'first commit');
  box.put('a.txt', 'one\ntwo\n');
  git(box.rootPath, 'commit', '-qam', 'second: with spaces');
  return box;
}

describe('gitEnv / gitBaseArgs', () => {
  it('builds the environment from scratch with config and prompts disabled', () => {
    process.env.CRUSTCORE_SENTINEL = 'leak';
    try {
      const env = gitEnv({ root: '/work/x' });
      expect(env.CRUSTCORE_SENTINEL).toBeUndefined();
      expect(env).toMatchObject({
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_TERMINAL_PROMPT: '0',
        GIT_OPTIONAL_LOCKS: '0',
        GIT_CEILING_DIRECTORIES: '/work',
      });
      // Nothing can exist under a character device: no per-user config, ever, and nothing to clean up.
      expect(env.HOME).toBe('/dev/null');
      expect(env.XDG_CONFIG_HOME).toBe('/dev/null/.config');
    } finally {
      delete process.env.CRUSTCORE_SENTINEL;
    }
    const args = gitBaseArgs().join(' ');
    for (const needle of [
      'core.hooksPath=/dev/null',
      'core.fsmonitor=false',
      'diff.external=',
      'core.pager=cat',
      'protocol.allow=never',
    ]) {
      expect(args).toContain(needle);
    }
  });

  it('finds filter drivers in config listings and overrides each verbatim', () => {
    const listing =
      'core.bare\nfalse\u0000filter.lfs.clean\ngit-lfs clean\u0000filter.we=ird.process\nx\u0000diff.x.textconv\ny\u0000';
    const names = filterDriverNames(listing);
    expect(names).toEqual(['lfs', 'we=ird']);
    const env = filterOverrideEnv(names);
    expect(env.GIT_CONFIG_COUNT).toBe('8');
    expect(env.GIT_CONFIG_KEY_4).toBe('filter.we=ird.clean');
    expect(env.GIT_CONFIG_VALUE_4).toBe('');
    expect(env.GIT_CONFIG_KEY_7).toBe('filter.we=ird.required');
    expect(env.GIT_CONFIG_VALUE_7).toBe('false');
  });
});

describe('gitStatus', () => {
  const saved = process.env.GIT_DIR;
  afterEach(() => {
    if (saved === undefined) delete process.env.GIT_DIR;
    else process.env.GIT_DIR = saved;
  });

  it('reports branch, modified, staged, renamed and untracked files (ignoring a hostile process.env)', async () => {
    const box = repo();
    box.put('b.txt', 'changed\n');
    box.put('new dir/untracked file.txt', 'u\n');
    git(box.rootPath, 'mv', 'a.txt', 'renamed.txt');
    process.env.GIT_DIR = '/nonexistent'; // Must not reach the git that gitStatus runs.
    const status = right(await gitStatus(box.read));
    expect(status.branch.head).toBe('main');
    expect(status.branch.oid).toMatch(/^[0-9a-f]{40}$/);
    expect(status.entries).toEqual([
      { kind: 'changed', path: 'b.txt', originalPath: null, index: '.', worktree: 'M' },
      { kind: 'renamed', path: 'renamed.txt', originalPath: 'a.txt', index: 'R', worktree: '.' },
      { kind: 'untracked', path: 'new dir/untracked file.txt', originalPath: null, index: '?', worktree: '?' },
    ]);
  });

  it('pins the work tree to the root even when the repository config says otherwise', async () => {
    const box = repo();
    const elsewhere = join(box.base, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'outside-file.txt'), 'x');
    git(box.rootPath, 'config', 'core.worktree', elsewhere);
    const status = right(await gitStatus(box.read));
    expect(status.entries.map((entry) => entry.path)).not.toContain('outside-file.txt');
    expect(status.entries).toEqual([]);
  });

  it('does not climb into an enclosing repository', async () => {
    const box = repo();
    mkdirSync(join(box.rootPath, 'inner'));
    const inner = right(WorktreeRoot.open(join(box.rootPath, 'inner')));
    const error = left(await gitStatus(right(FsReadCap.grant(inner, 't'))));
    expect(error._tag).toBe('GitFailed');
  });
});

describe('gitDiff', () => {
  it('diffs the worktree, the index, against a base, and for chosen paths', async () => {
    const box = repo();
    box.put('b.txt', 'bee\nmore\n');
    const worktree = right(await gitDiff(box.read));
    expect(worktree.patch).toContain('diff --git a/b.txt b/b.txt');
    expect(worktree.patch).toContain('+more');
    expect(worktree.truncated).toBe(false);
    expect(right(await gitDiff(box.read, { staged: true })).patch).toBe('');
    const base = right(await gitDiff(box.read, { base: 'HEAD~1' }));
    expect(base.patch).toContain('+two');
    expect(base.patch).toContain('+more');
    const onlyA = right(
      await gitDiff(box.read, { base: 'HEAD~1', paths: [right(resolveReadPath(box.read, 'a.txt'))] }),
    );
    expect(onlyA.patch).toContain('+two');
    expect(onlyA.patch).not.toContain('+more');
  });

  it('exports binary-safe patches', async () => {
    const box = repo();
    box.put('blob.bin', 'a\u0000b\u0001c');
    git(box.rootPath, 'add', 'blob.bin');
    const plain = right(await gitDiff(box.read, { staged: true }));
    expect(plain.patch).toContain('Binary files');
    const binary = right(await gitDiff(box.read, { staged: true, binary: true }));
    expect(binary.patch).toContain('GIT binary patch');
    expect(binary.patch).toMatch(/index 0{40}\.\.[0-9a-f]{40}/);
  });

  it('refuses revisions that could be read as options or ranges', async () => {
    const box = repo();
    for (const base of ['--output=/tmp/x', '-p', 'HEAD..main', 'HEAD:a.txt', 'a b', '']) {
      expect(left(await gitDiff(box.read, { base }))._tag).toBe('InvalidRevision');
    }
  });

  it('refuses paths of another root', async () => {
    const box = repo();
    const other = makeSandbox();
    other.put('x', '');
    const foreign = right(resolveReadPath(other.read, 'x'));
    expect(left(await gitDiff(box.read, { paths: [foreign] }))._tag).toBe('RootMismatch');
  });
});

describe('gitLog', () => {
  it('lists commits newest first with parents and subjects', async () => {
    const box = repo();
    const commits = right(await gitLog(box.read));
    expect(commits.map((commit) => commit.subject)).toEqual(['second: with spaces', 'first commit']);
    expect(commits[0]?.parents).toEqual([commits[1]?.hash]);
    expect(commits[1]?.parents).toEqual([]);
    expect(commits[0]).toMatchObject({ authorName: 'Tess T', authorEmail: 't@t' });
    expect(right(await gitLog(box.read, { maxCount: 1 }))).toHaveLength(1);
    expect(right(await gitLog(box.read, { revision: 'HEAD~1' }))).toHaveLength(1);
  });

  it('returns an empty history for a repository without commits', async () => {
    const box = makeSandbox();
    git(box.rootPath, 'init', '-q');
    expect(right(await gitLog(box.read))).toEqual([]);
  });
});
