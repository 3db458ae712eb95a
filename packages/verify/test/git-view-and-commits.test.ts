/**
 * The worker's private git view (git-view.ts) takes its object format from the base commit's id
 * (40 hex digits SHA-1, 64 SHA-256) instead of asking git: `git log` through the view must work
 * in both kinds of repository. And `resolveCommit` remembers only full commit ids git confirmed:
 * a moving ref (HEAD after a commit) resolves anew every time, a missing id is never remembered.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareGitView } from '../src/git-view.js';
import { createTaskWorktree, openRepository, removeTaskWorktree, resolveCommit } from '../src/index.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-git-view-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();

let made = 0;
async function repository(format: 'sha1' | 'sha256') {
  made += 1;
  const path = join(scratch, `${format}-${made}`);
  execFileSync('git', ['init', '-q', `--object-format=${format}`, path]);
  writeFileSync(join(path, 'a.txt'), 'a\n');
  git(path, 'add', '-A');
  git(path, 'commit', '-qm', 'base');
  const opened = await openRepository(path);
  if (opened._tag === 'Left') throw new Error(opened.left.message);
  return { path, repo: opened.right };
}

describe('the git view in SHA-1 and SHA-256 repositories', () => {
  it.each(['sha1', 'sha256'] as const)('git log through the view of a %s repository shows the base', async (format) => {
    const { path, repo } = await repository(format);
    const base = git(path, 'rev-parse', 'HEAD');
    expect(base).toHaveLength(format === 'sha1' ? 40 : 64);
    const home = join(scratch, `home-${format}`);
    const made = await createTaskWorktree({ repo, taskId: `t_view_${format}`, home });
    if (made._tag === 'Left') throw new Error(made.left.message);
    const view = await prepareGitView(made.right, home);
    expect(view).not.toBeNull();
    expect(git(made.right.path, 'log', '--format=%H')).toBe(base);
    expect(git(made.right.path, 'rev-parse', '--show-object-format')).toBe(format);
    view?.dispose();
    await removeTaskWorktree(made.right);
  });
});

describe('resolveCommit remembers confirmed commit ids only', () => {
  it('HEAD resolves anew after a commit; a missing id stays missing; a confirmed id stays confirmed', async () => {
    const { path, repo } = await repository('sha1');
    const first = await resolveCommit(repo, 'HEAD');
    git(path, 'commit', '-q', '--allow-empty', '-m', 'next');
    const second = await resolveCommit(repo, 'HEAD');
    expect(first._tag === 'Right' && second._tag === 'Right' && first.right !== second.right).toBe(true);
    expect(second).toEqual({ _tag: 'Right', right: git(path, 'rev-parse', 'HEAD') });
    const missing = 'f'.repeat(40);
    expect((await resolveCommit(repo, missing))._tag).toBe('Left');
    expect((await resolveCommit(repo, missing))._tag).toBe('Left');
    if (first._tag === 'Right') expect(await resolveCommit(repo, first.right)).toEqual(first);
  });
});

describe('resolveCommit: what HEAD resolved to is confirmed too', () => {
  it('the id HEAD gave is answered without git; CONTROL: another real commit id is asked of git, which is gone', async () => {
    const { path, repo } = await repository('sha1');
    git(path, 'commit', '-q', '--allow-empty', '-m', 'next');
    const parent = git(path, 'rev-parse', 'HEAD~1');
    const head = await resolveCommit(repo, 'HEAD');
    if (head._tag === 'Left') throw new Error(head.left.message);
    renameSync(join(path, '.git'), join(path, 'moved.git'));
    try {
      expect(await resolveCommit(repo, head.right)).toEqual(head);
      expect((await resolveCommit(repo, parent))._tag).toBe('Left');
    } finally {
      renameSync(join(path, 'moved.git'), join(path, '.git'));
    }
    expect((await resolveCommit(repo, parent))._tag).toBe('Right');
  });
});

describe('HEAD is the opened worktree’s own', () => {
  it('a linked worktree and the main one, resolved together, each get their own HEAD', async () => {
    const { path, repo: main } = await repository('sha1');
    const side = join(scratch, `side-${made}`);
    git(path, 'worktree', 'add', '-q', '-b', 'side', side);
    git(side, 'commit', '-q', '--allow-empty', '-m', 'side only');
    const opened = await openRepository(side);
    if (opened._tag === 'Left') throw new Error(opened.left.message);
    expect(opened.right.commonDir).toBe(main.commonDir);
    expect(opened.right.repoId).toBe(main.repoId);
    const [mainHead, sideHead] = await Promise.all([resolveCommit(main, 'HEAD'), resolveCommit(opened.right, 'HEAD')]);
    expect(mainHead).toEqual({ _tag: 'Right', right: git(path, 'rev-parse', 'HEAD') });
    expect(sideHead).toEqual({ _tag: 'Right', right: git(side, 'rev-parse', 'HEAD') });
    expect(sideHead).not.toEqual(mainHead);
  });
});
