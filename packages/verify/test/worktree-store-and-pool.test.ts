/**
 * Task object stores and the warm verify pool, on real git:
 * - a patch's objects (extraction, verify's `git apply --index`) are written
 *   to the task's store under $CRUSTCORE_HOME, never into the user's .git;
 *   apply still works, and removing the store leaves the user's repository
 *   as it was (control: the same `git add` without the store grows .git);
 * - a pooled verify worktree comes back exactly at the base however the
 *   previous run left it, and one whose `.git` pointer moved is replaced;
 * - a worker's worktree comes from slots of its own, never a verify slot, and
 *   comes back as a fresh checkout would be even in what git does not track
 *   (special and group/other mode bits, hard links between tracked files).
 *   CONTROL: git's own reset + clean leaves all of that, with a clean status;
 * - a repository config that tells git to trust less stat data, ignore case
 *   or modes cannot hide a same-size rewrite, a case-twin file or a mode
 *   change from a slot's reset (CONTROL: plain git under that config keeps them).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  applyVerifiedPatch,
  createTaskWorktree,
  extractPatch,
  gcWorktrees,
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

describe('a .gitattributes the last run left untracked', () => {
  const BASE = 'export const add = (a, b) => a - b;\n';
  const plant = (path: string): void => {
    writeFileSync(join(path, 'src/math.js'), 'changed\n');
    writeFileSync(join(path, '.gitattributes'), '* eol=crlf\n');
  };

  it('CONTROL: git reset --hard takes it, and writes the base with CRLF', () => {
    const f = fixture();
    plant(f.repoDir);
    git(f.repoDir, 'reset', '-q', '--hard', 'HEAD');
    expect(readFileSync(join(f.repoDir, 'src/math.js'), 'latin1')).toBe(BASE.replace('\n', '\r\n'));
  });

  for (const purpose of ['task', 'verify'] as const) {
    it(`steers nothing: the reused ${purpose} slot holds the base's own bytes`, async () => {
      const f = fixture();
      const repo = await repoOf(f);
      const first = await createTaskWorktree({ repo, taskId: 't_attr', purpose, home: f.home, pool: true });
      if (first._tag === 'Left') throw new Error(first.left.message);
      const path = first.right.path;
      // Inode numbers come back at once after a removal; a directory's birth time does not.
      const born = statSync(path, { bigint: true }).birthtimeNs;
      expect(born, 'this file system records birth times').toBeGreaterThan(0n);
      plant(path);
      await removeTaskWorktree(first.right);
      const again = await createTaskWorktree({ repo, taskId: 't_attr2', purpose, home: f.home, pool: true });
      if (again._tag === 'Left') throw new Error(again.left.message);
      // Reused (not thrown away and checked out fresh), and exactly at the base.
      expect(again.right.path).toBe(path);
      expect(statSync(path, { bigint: true }).birthtimeNs).toBe(born);
      expect(readFileSync(join(path, 'src/math.js'), 'latin1')).toBe(BASE);
      expect(existsSync(join(path, '.gitattributes'))).toBe(false);
      await removeTaskWorktree(again.right);
    });
  }
});

describe('a slot that cannot be thrown away', () => {
  // Root removes anything but an immutable file; anyone else, anything but a directory it may not read.
  const asRoot = process.getuid?.() === 0;
  const lock = (dir: string): void => {
    if (asRoot) execFileSync('chattr', ['+i', join(dir, 'f')]);
    else chmodSync(dir, 0o000);
  };
  const unlock = (dir: string): void => {
    if (asRoot) execFileSync('chattr', ['-i', join(dir, 'f')]);
    else chmodSync(dir, 0o700);
  };

  it('is given back, and the task gets a fresh worktree outside the pool', async () => {
    const f = fixture();
    const repo = await repoOf(f);
    const first = await createTaskWorktree({ repo, taskId: 't_stuck', purpose: 'task', home: f.home, pool: true });
    if (first._tag === 'Left') throw new Error(first.left.message);
    const path = first.right.path;
    const stuck = join(path, 'stuck');
    mkdirSync(stuck);
    writeFileSync(join(stuck, 'f'), 'x');
    lock(stuck);
    // A moved pointer: the slot must be thrown away, and its removal fails.
    writeFileSync(join(path, '.git'), 'gitdir: /tmp/elsewhere\n');
    await removeTaskWorktree(first.right);
    try {
      const again = await createTaskWorktree({ repo, taskId: 't_stuck2', purpose: 'task', home: f.home, pool: true });
      if (again._tag === 'Left') throw new Error(again.left.message);
      expect(again.right.path).not.toBe(path);
      expect(again.right.pooled).not.toBe(true);
      expect(readFileSync(join(again.right.path, 'src/math.js'), 'utf8')).toBe('export const add = (a, b) => a - b;\n');
      await removeTaskWorktree(again.right);
    } finally {
      unlock(stuck);
    }
  });
});

describe('warm worker pool', () => {
  const SAME = 'shared line\n';
  const leaveUntrackedState = (path: string): void => {
    chmodSync(join(path, 'src'), 0o2777);
    chmodSync(join(path, 'src/math.js'), 0o4666);
    chmodSync(join(path, 'bin/run.sh'), 0o6777);
    // Identical content, so git sees nothing: after this, a write to one path changes the other.
    unlinkSync(join(path, 'b/same.txt'));
    linkSync(join(path, 'a/same.txt'), join(path, 'b/same.txt'));
  };
  const modeOf = (path: string): number => statSync(path).mode & 0o7777;

  function workerFixture(): Fixture {
    const made = makeRepo(
      {
        'src/math.js': 'export const add = (a, b) => a - b;\n',
        'bin/run.sh': '#!/bin/sh\necho run\n',
        'a/same.txt': SAME,
        'b/same.txt': SAME,
      },
      ['bin/run.sh'],
    );
    // A repository may tell git to trust less of the stat data (network file systems do): then a
    // hard link between identical files changes nothing git compares, and survives its reset.
    git(made.repoDir, 'config', 'core.trustctime', 'false');
    git(made.repoDir, 'config', 'core.checkStat', 'minimal');
    fixtures.push(made);
    return made;
  }

  it('CONTROL: git reset --hard + clean -ffdx keeps modes and hard links, and status says clean', () => {
    const f = workerFixture();
    leaveUntrackedState(f.repoDir);
    git(f.repoDir, 'reset', '-q', '--hard', 'HEAD');
    git(f.repoDir, 'clean', '-ffdxq');
    expect(git(f.repoDir, 'status', '--porcelain', '--ignored')).toBe('');
    expect(modeOf(join(f.repoDir, 'src'))).toBe(0o2777);
    expect(modeOf(join(f.repoDir, 'bin/run.sh'))).toBe(0o6777);
    expect(statSync(join(f.repoDir, 'b/same.txt')).ino).toBe(statSync(join(f.repoDir, 'a/same.txt')).ino);
  });

  it('hands a worker slot back as a fresh checkout makes it, and never a verify slot', async () => {
    const f = workerFixture();
    const repo = await repoOf(f);
    const fresh = await createTaskWorktree({ repo, taskId: 't_fresh', home: f.home });
    if (fresh._tag === 'Left') throw new Error(fresh.left.message);
    const expected = (path: string) => ({
      src: modeOf(join(path, 'src')),
      math: modeOf(join(path, 'src/math.js')),
      run: modeOf(join(path, 'bin/run.sh')),
    });
    const freshModes = expected(fresh.right.path);
    await removeTaskWorktree(fresh.right);

    const first = await createTaskWorktree({ repo, taskId: 't_work', purpose: 'task', home: f.home, pool: true });
    if (first._tag === 'Left') throw new Error(first.left.message);
    const path = first.right.path;
    expect(basename(path)).toMatch(/^work-\d+$/);
    leaveUntrackedState(path);
    await removeTaskWorktree(first.right);

    const verify = await createTaskWorktree({ repo, taskId: 't_work', purpose: 'verify', home: f.home, pool: true });
    if (verify._tag === 'Left') throw new Error(verify.left.message);
    expect(basename(verify.right.path)).toMatch(/^slot-\d+$/);
    await removeTaskWorktree(verify.right);

    const again = await createTaskWorktree({ repo, taskId: 't_work2', purpose: 'task', home: f.home, pool: true });
    if (again._tag === 'Left') throw new Error(again.left.message);
    expect(again.right.path).toBe(path);
    expect(expected(path)).toEqual(freshModes);
    expect(statSync(join(path, 'b/same.txt')).nlink).toBe(1);
    writeFileSync(join(path, 'a/same.txt'), 'changed\n');
    expect(readFileSync(join(path, 'b/same.txt'), 'utf8')).toBe(SAME);
    expect(git(path, 'status', '--porcelain')).toBe(' M a/same.txt\n');
    expect(readdirSync(join(path, 'b'))).toEqual(['same.txt']);
    await removeTaskWorktree(again.right);
  });

  it("hands a verify slot back the same way (a verify run executes the patch's own tests)", async () => {
    const f = workerFixture();
    const repo = await repoOf(f);
    const first = await createTaskWorktree({ repo, taskId: 't_vslot', purpose: 'verify', home: f.home, pool: true });
    if (first._tag === 'Left') throw new Error(first.left.message);
    const path = first.right.path;
    const srcMode = modeOf(join(path, 'src'));
    leaveUntrackedState(path);
    await removeTaskWorktree(first.right);
    const again = await createTaskWorktree({ repo, taskId: 't_vslot2', purpose: 'verify', home: f.home, pool: true });
    if (again._tag === 'Left') throw new Error(again.left.message);
    expect(again.right.path).toBe(path);
    expect(modeOf(join(path, 'src'))).toBe(srcMode);
    expect(modeOf(join(path, 'bin/run.sh')) & 0o7000).toBe(0);
    expect(statSync(join(path, 'b/same.txt')).nlink).toBe(1);
    await removeTaskWorktree(again.right);
  });
});

describe("a slot's reset sees what the repository's config tells git to overlook", () => {
  const BASE_TEXT = 'export const add = (a, b) => a - b;\n';
  const SAME_SIZE = 'export const add = (a, b) => a * b;\n';
  const LONG_AGO = new Date('2001-01-01T00:00:00Z');

  function trustingFixture(): Fixture {
    const made = makeRepo({ 'src/math.js': BASE_TEXT });
    // Settings users choose for network or case-insensitive file systems, and for speed.
    for (const [key, value] of [
      ['core.checkStat', 'minimal'],
      ['core.trustctime', 'false'],
      ['core.ignoreCase', 'true'],
      ['core.fileMode', 'false'],
      ['core.untrackedCache', 'true'],
    ] as const)
      git(made.repoDir, 'config', key, value);
    fixtures.push(made);
    return made;
  }

  /**
   * What a run can leave so that those settings hide it: a same-size rewrite with its mtime put
   * back (after an index refresh that records that mtime, so the entry is not racily clean and
   * git trusts the stat data), an untracked name that differs from a tracked one only in case,
   * and an executable bit.
   */
  function leaveHiddenChanges(path: string): void {
    const file = join(path, 'src/math.js');
    utimesSync(file, LONG_AGO, LONG_AGO);
    git(path, 'update-index', '-q', '--refresh');
    writeFileSync(file, SAME_SIZE);
    utimesSync(file, LONG_AGO, LONG_AGO);
    chmodSync(file, 0o755);
    writeFileSync(join(path, 'src/MATH.JS'), 'planted\n');
  }

  it('CONTROL: under those settings git clean + reset --hard keep all three and status says clean', () => {
    const f = trustingFixture();
    leaveHiddenChanges(f.repoDir);
    git(f.repoDir, 'clean', '-ffdxq');
    git(f.repoDir, 'reset', '-q', '--hard', 'HEAD');
    expect(git(f.repoDir, 'status', '--porcelain', '--ignored', '--untracked-files=all')).toBe('');
    expect(readFileSync(join(f.repoDir, 'src/math.js'), 'utf8')).toBe(SAME_SIZE);
    expect(existsSync(join(f.repoDir, 'src/MATH.JS'))).toBe(true);
    expect(statSync(join(f.repoDir, 'src/math.js')).mode & 0o111).not.toBe(0);
  });

  for (const purpose of ['task', 'verify'] as const) {
    it(`hands a ${purpose} slot back at the base's exact bytes, names and modes`, async () => {
      const f = trustingFixture();
      const repo = await repoOf(f);
      const first = await createTaskWorktree({ repo, taskId: 't_hide', purpose, home: f.home, pool: true });
      if (first._tag === 'Left') throw new Error(first.left.message);
      const path = first.right.path;
      leaveHiddenChanges(path);
      await removeTaskWorktree(first.right);
      const again = await createTaskWorktree({ repo, taskId: 't_hide2', purpose, home: f.home, pool: true });
      if (again._tag === 'Left') throw new Error(again.left.message);
      expect(again.right.path).toBe(path);
      expect(readFileSync(join(path, 'src/math.js'), 'utf8')).toBe(BASE_TEXT);
      expect(readdirSync(join(path, 'src'))).toEqual(['math.js']);
      expect(statSync(join(path, 'src/math.js')).mode & 0o111).toBe(0);
      await removeTaskWorktree(again.right);
    });
  }
});

describe('a verify worktree prepared while the worker ran', () => {
  /** A fixed patch, and a verify worktree of `taskId` at `ref` with a failing test planted in it. */
  async function patchAndPrepared(f: Fixture, taskId: string, ref?: string) {
    const repo = await repoOf(f);
    const worktree = await createTaskWorktree({ repo, taskId, home: f.home });
    if (worktree._tag === 'Left') throw new Error(worktree.left.message);
    writeFileSync(join(worktree.right.path, 'src/math.js'), 'export const add = (a, b) => a + b;\n');
    const patch = await extractPatch(worktree.right);
    if (patch._tag === 'Left' || patch.right === null) throw new Error('no patch');
    await removeTaskWorktree(worktree.right);
    const prepared = await createTaskWorktree({
      repo,
      taskId,
      purpose: 'verify',
      home: f.home,
      pool: true,
      ...(ref === undefined ? {} : { ref }),
    });
    if (prepared._tag === 'Left') throw new Error(prepared.left.message);
    // Untracked, so only a run in this very worktree can see it.
    writeFileSync(
      join(prepared.right.path, 'test/planted.test.js'),
      "import { test } from 'node:test';\ntest('planted', () => { throw new Error('ran in the prepared worktree'); });\n",
    );
    const request = {
      repo,
      taskId,
      patch: patch.right,
      argv: ['npm', 'test'] as const,
      nowMs: 1,
      home: f.home,
      pool: true,
      prepared: prepared.right,
    };
    return { request, prepared: prepared.right };
  }

  it('is the one verification runs in, and is released afterwards', async () => {
    const f = fixture();
    const { request, prepared } = await patchAndPrepared(f, 't_warm');
    const outcome = await verifyPatch(cap('verify'), { ...request, argv: ['npm', 'test'] });
    if (outcome._tag === 'Left') throw new Error(JSON.stringify(outcome.left));
    expect(outcome.right._tag).toBe('Failed');
    expect(outcome.right.run.stdoutText + outcome.right.run.stderrText).toContain('ran in the prepared worktree');
    expect(existsSync(prepared.ownerFile)).toBe(false);
  });

  it("is not used for a patch on another base (or another task's), and is released all the same", async () => {
    const f = fixture();
    writeFileSync(join(f.repoDir, 'README.md'), 'second commit\n');
    git(f.repoDir, 'add', '-A');
    git(f.repoDir, 'commit', '-qm', 'second');
    const { request, prepared } = await patchAndPrepared(f, 't_cold', 'HEAD~1');
    const outcome = await verifyPatch(cap('verify'), { ...request, argv: ['npm', 'test'] });
    if (outcome._tag === 'Left') throw new Error(JSON.stringify(outcome.left));
    expect(outcome.right._tag).toBe('Verified');
    expect(existsSync(prepared.ownerFile)).toBe(false);
    const other = await patchAndPrepared(f, 't_cold2');
    const forOther = await verifyPatch(cap('verify'), {
      ...other.request,
      taskId: 't_someone_else',
      argv: ['npm', 'test'],
    });
    if (forOther._tag === 'Left') throw new Error(JSON.stringify(forOther.left));
    expect(forOther.right._tag).toBe('Verified');
    expect(existsSync(other.prepared.ownerFile)).toBe(false);
  });
});

describe("the user's own worktrees", () => {
  /** A worktree of the user's that is missing for now (on a drive that is not mounted, say). */
  function userWorktreeAway(f: Fixture): { away: string; registration: string } {
    const path = join(f.home, '..', `${basename(f.repoDir)}-user-wt`);
    git(f.repoDir, 'worktree', 'add', '-q', '--detach', path, 'HEAD');
    const away = `${path}-unmounted`;
    renameSync(path, away);
    const registration = join(f.repoDir, '.git', 'worktrees', basename(path));
    return { away, registration };
  }

  it('CONTROL: git worktree prune drops the registration of one that is missing for now', () => {
    const f = fixture();
    const { away, registration } = userWorktreeAway(f);
    git(f.repoDir, 'worktree', 'prune');
    expect(existsSync(registration)).toBe(false);
    rmSync(away, { recursive: true, force: true });
  });

  it('keep their registrations through pool slots made, fresh worktrees removed and gc', async () => {
    const f = fixture();
    const repo = await repoOf(f);
    const { away, registration } = userWorktreeAway(f);
    for (const purpose of ['task', 'verify'] as const) {
      const slot = await createTaskWorktree({ repo, taskId: 't_users', purpose, home: f.home, pool: true });
      if (slot._tag === 'Left') throw new Error(slot.left.message);
      await removeTaskWorktree(slot.right);
    }
    const fresh = await createTaskWorktree({ repo, taskId: 't_users_fresh', home: f.home });
    if (fresh._tag === 'Left') throw new Error(fresh.left.message);
    const freshRegistration = readFileSync(join(fresh.right.path, '.git'), 'utf8')
      .replace(/^gitdir: /, '')
      .trim();
    await removeTaskWorktree(fresh.right);
    // Ours goes with its worktree; the user's stays.
    expect(existsSync(freshRegistration)).toBe(false);
    // Also one whose `.git` pointer a run rewrote (git refuses to remove it then: the registration is ours to drop).
    const vanished = await createTaskWorktree({ repo, taskId: 't_users_gone', home: f.home });
    if (vanished._tag === 'Left') throw new Error(vanished.left.message);
    const vanishedRegistration = readFileSync(join(vanished.right.path, '.git'), 'utf8')
      .replace(/^gitdir: /, '')
      .trim();
    writeFileSync(join(vanished.right.path, '.git'), 'gitdir: /tmp/elsewhere\n');
    await removeTaskWorktree(vanished.right);
    expect(existsSync(vanishedRegistration)).toBe(false);
    const leftover = await createTaskWorktree({ repo, taskId: 't_users_gc', home: f.home });
    if (leftover._tag === 'Left') throw new Error(leftover.left.message);
    const leftoverRegistration = readFileSync(join(leftover.right.path, '.git'), 'utf8')
      .replace(/^gitdir: /, '')
      .trim();
    // A crashed run: its owner file names a dead process, so gc removes it and forgets its registration.
    writeFileSync(
      leftover.right.ownerFile,
      JSON.stringify({ pid: 2 ** 22 + 7, path: leftover.right.path, commonDir: repo.commonDir, taskId: 't_users_gc' }),
    );
    await gcWorktrees({ home: f.home });
    expect(existsSync(leftoverRegistration)).toBe(false);
    expect(existsSync(registration)).toBe(true);
    rmSync(away, { recursive: true, force: true });
  });
});
