/**
 * The worker's slot made while the ledger opens (WarmWorkspace), on real
 * git: taken once, and its taker owns it; never taken (the task failed
 * before its workspace was prepared), it is given back, so the next task
 * gets the same slot instead of a pool that fills with orphans.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRepository, type Repository, removeTaskWorktree } from '@crustcore/verify';
import { afterEach, describe, expect, it } from 'vitest';
import { WarmWorkspace } from '../src/warm-workspace.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

async function repository(): Promise<{ repo: Repository; home: string }> {
  const root = mkdtempSync(join(tmpdir(), 'crustcore-warm-'));
  roots.push(root);
  const dir = join(root, 'repo');
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.txt'), 'a\n');
  const env = {
    PATH: '/usr/bin:/bin',
    HOME: root,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  for (const args of [
    ['init', '-q'],
    ['add', '-A'],
    ['commit', '-qm', 'base'],
  ])
    execFileSync('git', args, { cwd: dir, env });
  const opened = await openRepository(dir);
  if (opened._tag === 'Left') throw new Error(opened.left.message);
  return { repo: opened.right, home: join(root, 'home') };
}

describe('WarmWorkspace', () => {
  it('is taken once; the taker owns the slot', async () => {
    const { repo, home } = await repository();
    const warm = WarmWorkspace.forTask({ taskId: 't_warm', home }, repo, 1);
    const made = await warm.take();
    expect(warm.take()).toBeNull();
    if (made?._tag !== 'Right') throw new Error('no slot');
    await warm.release();
    // Released by nobody but its taker: the claim stays.
    expect(existsSync(made.right.ownerFile)).toBe(true);
    await removeTaskWorktree(made.right);
    expect(existsSync(made.right.ownerFile)).toBe(false);
  });

  it('never taken, it is given back, and the next task gets the same slot', async () => {
    const { repo, home } = await repository();
    const first = WarmWorkspace.forTask({ taskId: 't_orphan', home }, repo, 1);
    await expect(first.releasedIfThrows(async () => Promise.reject(new Error('the ledger is busy')))).rejects.toThrow(
      'the ledger is busy',
    );
    const next = await WarmWorkspace.forTask({ taskId: 't_next', home }, repo, 2).take();
    if (next?._tag !== 'Right') throw new Error('no slot');
    expect(next.right.path.endsWith('/work-0')).toBe(true);
    await removeTaskWorktree(next.right);
  });
});
