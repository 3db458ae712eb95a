/**
 * The tree reader remembers what git said about full object ids (content
 * addressed, so the answer cannot change). What must hold: a full id is asked
 * of git once; a ref (HEAD), whose object can change, is asked every time; a
 * failure is never remembered (an object that appears later is then read).
 * git is taken away between the calls to prove which ones reach it.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitTree } from '../src/environment/tree-reader.js';
import {
  createTaskWorktree,
  extractPatch,
  gitTreeReader,
  integrityRisks,
  removeTaskWorktree,
  verifyPatch,
} from '../src/index.js';
import { UNREAD_TREE } from '../src/integrity.js';
import { cap, type Fixture, git, makeRepo, NODE_PROJECT, repoOf } from './git-fixture.js';

let fixture: Fixture | null = null;
afterEach(() => fixture?.cleanup());

const locationOf = (repoDir: string) => ({ gitDir: join(repoDir, '.git'), workTree: repoDir, cwd: repoDir });

describe('gitTreeReader remembers answers about full object ids', () => {
  it('asks git once for a full id, every time for a ref; CONTROL: without git nothing answers', async () => {
    fixture = makeRepo({ 'a.txt': 'alpha\n', 'gitdir.txt': 'gitdir: ../x\n' });
    const { repoDir } = fixture;
    const tree = git(repoDir, 'rev-parse', 'HEAD^{tree}').trim();
    const blob = git(repoDir, 'rev-parse', 'HEAD:a.txt').trim();
    const reader = gitTreeReader(locationOf(repoDir));
    const listed = await reader.listTree(tree);
    expect(listed?.map((f) => f.path)).toEqual(['a.txt', 'gitdir.txt']);
    expect(await reader.readBlob(blob)).toBe('alpha\n');
    expect(await reader.grepTree(tree, '^gitdir:', ['a.txt', 'gitdir.txt'])).toEqual(['gitdir.txt']);
    expect(await reader.listTree('HEAD')).not.toBeNull();

    renameSync(join(repoDir, '.git'), join(repoDir, 'moved.git'));
    // CONTROL: git really is gone for this location — a ref and an unseen id get no answer.
    expect(await reader.listTree('HEAD')).toBeNull();
    expect(await reader.readBlob('0'.repeat(40))).toBeNull();
    // What git said about the full ids is still known (a fresh reader shares it).
    expect(await gitTreeReader(locationOf(repoDir)).listTree(tree)).toEqual(listed);
    expect(await reader.readBlob(blob)).toBe('alpha\n');
    expect(await reader.grepTree(tree, '^gitdir:', ['a.txt', 'gitdir.txt'])).toEqual(['gitdir.txt']);
    // Another question about the same tree is a new question.
    expect(await reader.grepTree(tree, '^alpha', ['a.txt'])).toBeNull();
  });

  it("one repository's answers never answer for another's; CONTROL: the same store's reader is answered from memory", async () => {
    fixture = makeRepo({ 'a.txt': 'alpha\n' });
    const other = makeRepo({ 'b.txt': 'beta\n' });
    try {
      const tree = git(fixture.repoDir, 'rev-parse', 'HEAD^{tree}').trim();
      expect((await gitTreeReader(locationOf(fixture.repoDir)).listTree(tree))?.map((f) => f.path)).toEqual(['a.txt']);
      // The other repository does not hold that tree: it must ask its own git, which says no.
      expect(await gitTreeReader(locationOf(other.repoDir)).listTree(tree)).toBeNull();
      renameSync(join(fixture.repoDir, '.git'), join(fixture.repoDir, 'moved.git'));
      expect((await gitTreeReader(locationOf(fixture.repoDir)).listTree(tree))?.map((f) => f.path)).toEqual(['a.txt']);
    } finally {
      other.cleanup();
    }
  });

  it('does not remember a failure: an object written later is read', async () => {
    fixture = makeRepo({ 'a.txt': 'alpha\n' });
    const { repoDir } = fixture;
    const reader = gitTreeReader(locationOf(repoDir));
    writeFileSync(join(repoDir, 'later.txt'), 'written later\n');
    const later = git(repoDir, 'hash-object', 'later.txt').trim();
    expect(later).toMatch(/^[0-9a-f]{40}$/);
    expect(await reader.readBlob(later)).toBeNull();
    git(repoDir, 'hash-object', '-w', 'later.txt');
    expect(await reader.readBlob(later)).toBe('written later\n');
  });
});

describe('commitTree reads each manifest once', () => {
  it('a second read of the same file is answered without git; CONTROL: a new reader then gets nothing', async () => {
    fixture = makeRepo({ 'package.json': '{ "name": "p" }\n' });
    const { repoDir } = fixture;
    const commit = git(repoDir, 'rev-parse', 'HEAD').trim();
    const repo = await repoOf(fixture);
    const tree = commitTree(repo, commit);
    expect(await tree.readText('package.json')).toBe('{ "name": "p" }\n');
    renameSync(join(repoDir, '.git'), join(repoDir, '.git-away'));
    try {
      expect(await tree.readText('package.json')).toBe('{ "name": "p" }\n');
      expect(await commitTree(repo, commit).readText('package.json')).toBeNull();
    } finally {
      renameSync(join(repoDir, '.git-away'), join(repoDir, '.git'));
    }
  });
});

describe('integrity checks fail safe when the patched tree cannot be read', () => {
  it('a tree git does not have needs a person; CONTROL: the same patch on a tree git has adds no such risk', async () => {
    fixture = makeRepo({ 'a.txt': 'alpha\n' });
    const { repoDir } = fixture;
    writeFileSync(join(repoDir, 'a.txt'), 'beta\n');
    git(repoDir, 'add', 'a.txt');
    const patched = git(repoDir, 'write-tree').trim();
    const base = git(repoDir, 'rev-parse', 'HEAD').trim();
    const baseBlob = git(repoDir, 'rev-parse', 'HEAD:a.txt').trim();
    const newBlob = git(repoDir, 'rev-parse', ':a.txt').trim();
    const files = [{ status: 'M' as const, path: 'a.txt', oldPath: null, newMode: '100644', baseBlob, newBlob }];
    const unreadable = 'd'.repeat(40);
    const risksOn = async (treeId: string) =>
      (
        await integrityRisks({
          reader: gitTreeReader(locationOf(repoDir)),
          baseCommit: base,
          treeId,
          files,
          argv: null,
        })
      )
        .filter((r) => r.detail.includes('patched tree could not be read'))
        .map((r) => r.kind);
    expect(await risksOn(unreadable)).toEqual(['verify-command-changed']);
    expect(await risksOn(patched)).toEqual([]);
  });
});

describe('verification reads integrity beside the apply, and again if the tree was not there yet', () => {
  it('a patch extracted by another task (its objects in another store): verification gives the same risks every time, none for an unread tree', async () => {
    fixture = makeRepo(NODE_PROJECT);
    const repo = await repoOf(fixture);
    const created = await createTaskWorktree({ repo, taskId: 't_extract', home: fixture.home });
    if (created._tag === 'Left') throw new Error(created.left.message);
    writeFileSync(join(created.right.path, 'src', 'math.js'), 'export const add = (a, b) => a + b;\n');
    const extracted = await extractPatch(created.right, { home: fixture.home });
    if (extracted._tag === 'Left' || extracted.right === null) throw new Error('no patch');
    await removeTaskWorktree(created.right);
    for (const taskId of ['t_verify_a', 't_verify_b']) {
      const outcome = await verifyPatch(cap('verify'), {
        repo,
        taskId,
        patch: extracted.right,
        argv: ['node', '--test'],
        nowMs: 1,
        home: fixture.home,
        save: false,
      });
      if (outcome._tag === 'Left' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
      expect(outcome.right.verified.risks.filter((r) => r.detail === UNREAD_TREE)).toEqual([]);
    }
    // CONTROL: read before the tree exists in that task's store, the check does say it could not read it.
    const early = await integrityRisks({
      reader: gitTreeReader(locationOf(fixture.repoDir)),
      baseCommit: extracted.right.baseCommit,
      treeId: extracted.right.treeId,
      files: extracted.right.files,
      argv: null,
    });
    expect(early.filter((r) => r.detail === UNREAD_TREE).map((r) => r.kind)).toEqual(['verify-command-changed']);
  });
});
