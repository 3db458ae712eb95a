import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTaskWorktree, openRepository } from '@crustcore/verify';
import { describe, expect, it } from 'vitest';
import { WorktreeSnapshots } from '../src/index.js';
import { openWorkspace, tempTree } from './helpers.js';

async function worktree() {
  const root = tempTree({ 'repo/a.txt': 'a1\n', 'repo/b.txt': 'b1\n' });
  const repoDir = join(root, 'repo');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'base'],
  ])
    execFileSync('git', args, { cwd: repoDir, env, stdio: 'pipe' });
  const repo = await openRepository(repoDir);
  if (repo._tag === 'Left') throw new Error(repo.left.message);
  const made = await createTaskWorktree({ repo: repo.right, taskId: 'snap1', home: join(root, 'home') });
  if (made._tag === 'Left') throw new Error(made.left.message);
  return { root, repoDir, wt: made.right };
}

describe('worktree snapshots', () => {
  it('a snapshot per turn, restored through confine; the user repository gets no objects or refs', async () => {
    const { root, repoDir, wt } = await worktree();
    const objectsBefore = execFileSync('git', ['count-objects'], { cwd: repoDir, encoding: 'utf8' });
    const snapshots = new WorktreeSnapshots(wt, join(root, 'sessions'), 'session1');
    const first = await snapshots.take();
    if (first._tag === 'Left') throw new Error(first.left.message);
    writeFileSync(join(wt.path, 'a.txt'), 'a2\n');
    writeFileSync(join(wt.path, 'new.txt'), 'new\n');
    const second = await snapshots.take();
    if (second._tag === 'Left') throw new Error(second.left.message);
    expect(second.right.commit).not.toBe(first.right.commit);
    writeFileSync(join(wt.path, 'b.txt'), 'b3\n');

    const ws = openWorkspace(wt.path);
    const back = await snapshots.restore(ws, first.right.commit);
    if (back._tag === 'Left') throw new Error(back.left.message);
    expect([...back.right.written].sort()).toEqual(['a.txt', 'b.txt']);
    expect(back.right.deleted).toEqual(['new.txt']);
    expect(readFileSync(join(wt.path, 'a.txt'), 'utf8')).toBe('a1\n');
    expect(readFileSync(join(wt.path, 'b.txt'), 'utf8')).toBe('b1\n');
    expect(existsSync(join(wt.path, 'new.txt'))).toBe(false);

    const forward = await snapshots.restore(ws, second.right.commit);
    if (forward._tag === 'Left') throw new Error(forward.left.message);
    expect(readFileSync(join(wt.path, 'a.txt'), 'utf8')).toBe('a2\n');
    expect(readFileSync(join(wt.path, 'new.txt'), 'utf8')).toBe('new\n');
    // The snapshot objects live in the session directory, not in the user's repository.
    expect(execFileSync('git', ['count-objects'], { cwd: repoDir, encoding: 'utf8' })).toBe(objectsBefore);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: repoDir, encoding: 'utf8' })).toBe('');
    expect(existsSync(join(root, 'sessions', 'objects'))).toBe(true);
  });

  it('refuses what is not a commit id', async () => {
    const { root, wt } = await worktree();
    const snapshots = new WorktreeSnapshots(wt, join(root, 'sessions'), 's');
    const refused = await snapshots.restore(openWorkspace(wt.path), '--upload-pack=evil');
    expect(refused._tag).toBe('Left');
  });
});
