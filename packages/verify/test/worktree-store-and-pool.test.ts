/**
 * Task object stores and the warm verify pool, on real git:
 * - a patch's objects (extraction, verify's `git apply --index`) are written
 *   to the task's store under $CRUSTCORE_HOME, never into the user's .git;
 *   apply still works, and removing the store leaves the user's repository
 *   as it was (control: the same `git add` without the store grows .git);
 * - a pooled verify worktree comes back exactly at the base however the
 *   previous run left it, and one whose `.git` pointer moved is replaced.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  applyVerifiedPatch,
  createTaskWorktree,
  extractPatch,
  objectStoreDir,
  removeObjectStore,
  removeTaskWorktree,
  verifyPatch,
} from '../src/index.js';
import { cap, type Fixture, git, makeRepo, repoOf } from './git-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const fixture of fixtures.splice(0)) fixture.cleanup();
});

function fixture(): Fixture {
  const made = makeRepo({
    'package.json': '{ "name": "p", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n',
    'src/math.js': 'export const add = (a, b) => a - b;\n',
    'test/math.test.js':
      "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { add } from '../src/math.js';\ntest('adds', () => assert.equal(add(2, 3), 5));\n",
    '.gitignore': 'ignored/\n',
  });
  fixtures.push(made);
  return made;
}

/** Every object file (loose and packs) in the user's object directory. */
function userObjects(repoDir: string): string[] {
  const objects = join(repoDir, '.git', 'objects');
  return readdirSync(objects, { recursive: true, encoding: 'utf8' })
    .filter((name) => !name.startsWith('info'))
    .sort();
}

describe('task object stores', () => {
  it('a rejected patch leaves no object in the user repository; an applied one still applies', async () => {
    const f = fixture();
    const repo = await repoOf(f);
    const before = userObjects(f.repoDir);
    const worktree = await createTaskWorktree({ repo, taskId: 't_store', home: f.home });
    if (worktree._tag === 'Left') throw new Error(worktree.left.message);
    // A large random file: its blob would land in .git/objects without the store.
    writeFileSync(join(worktree.right.path, 'blob.bin'), randomBytes(256 * 1024));
    writeFileSync(join(worktree.right.path, 'src/math.js'), 'export const add = (a, b) => a + b;\n');
    const patch = await extractPatch(worktree.right);
    if (patch._tag === 'Left' || patch.right === null) throw new Error('no patch');
    expect(userObjects(f.repoDir)).toEqual(before);
    await removeTaskWorktree(worktree.right);
    const verified = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_store',
      patch: patch.right,
      argv: ['npm', 'test'],
      nowMs: 1,
      home: f.home,
      pool: true,
    });
    if (verified._tag === 'Left' || verified.right._tag !== 'Verified') throw new Error(JSON.stringify(verified));
    expect(userObjects(f.repoDir)).toEqual(before);
    expect(readdirSync(objectStoreDir(f.home, repo, 't_store'), { recursive: true }).length).toBeGreaterThan(2);
    const applied = await applyVerifiedPatch(verified.right.verified, { repo, home: f.home });
    expect(applied._tag).toBe('Right');
    expect(readFileSync(join(f.repoDir, 'src/math.js'), 'utf8')).toContain('a + b');
    removeObjectStore(f.home, repo, 't_store');
    expect(existsSync(objectStoreDir(f.home, repo, 't_store'))).toBe(false);
    expect(userObjects(f.repoDir)).toEqual(before);
  });

  it('control: the same git add without a store writes into the user repository', () => {
    const f = fixture();
    const before = userObjects(f.repoDir);
    writeFileSync(join(f.repoDir, 'blob.bin'), randomBytes(1024));
    git(f.repoDir, 'add', 'blob.bin');
    expect(userObjects(f.repoDir).length).toBeGreaterThan(before.length);
  });
});

describe('warm verify pool', () => {
  it('hands back the same slot, exactly at the base, whatever the last run left there', async () => {
    const f = fixture();
    const repo = await repoOf(f);
    const first = await createTaskWorktree({ repo, taskId: 't_pool', purpose: 'verify', home: f.home, pool: true });
    if (first._tag === 'Left') throw new Error(first.left.message);
    const path = first.right.path;
    writeFileSync(join(path, 'src/math.js'), 'tampered\n');
    writeFileSync(join(path, 'untracked.txt'), 'x');
    rmSync(join(path, 'package.json'));
    git(path, 'init', '-q', 'nested');
    writeFileSync(join(path, '.gitignore'), 'ignored/\n');
    await removeTaskWorktree(first.right);
    expect(existsSync(path)).toBe(true);
    const second = await createTaskWorktree({ repo, taskId: 't_pool', purpose: 'verify', home: f.home, pool: true });
    if (second._tag === 'Left') throw new Error(second.left.message);
    expect(second.right.path).toBe(path);
    expect(readFileSync(join(path, 'src/math.js'), 'utf8')).toBe('export const add = (a, b) => a - b;\n');
    expect(existsSync(join(path, 'untracked.txt'))).toBe(false);
    expect(existsSync(join(path, 'nested'))).toBe(false);
    expect(git(path, 'status', '--porcelain', '--ignored')).toBe('');
    // A second concurrent claim gets another slot, not the busy one.
    const third = await createTaskWorktree({ repo, taskId: 't_pool', purpose: 'verify', home: f.home, pool: true });
    if (third._tag === 'Left') throw new Error(third.left.message);
    expect(third.right.path).not.toBe(path);
    await removeTaskWorktree(second.right);
    await removeTaskWorktree(third.right);
  });

  it('replaces a slot whose .git pointer was rewritten', async () => {
    const f = fixture();
    const repo = await repoOf(f);
    const first = await createTaskWorktree({ repo, taskId: 't_ptr', purpose: 'verify', home: f.home, pool: true });
    if (first._tag === 'Left') throw new Error(first.left.message);
    writeFileSync(join(first.right.path, '.git'), 'gitdir: /tmp/elsewhere\n');
    writeFileSync(join(first.right.path, 'marker'), 'old slot');
    await removeTaskWorktree(first.right);
    const again = await createTaskWorktree({ repo, taskId: 't_ptr', purpose: 'verify', home: f.home, pool: true });
    if (again._tag === 'Left') throw new Error(again.left.message);
    expect(existsSync(join(again.right.path, 'marker'))).toBe(false);
    expect(readFileSync(join(again.right.path, '.git'), 'utf8')).toContain(`${repo.commonDir}/worktrees/`);
    await removeTaskWorktree(again.right);
  });
});
