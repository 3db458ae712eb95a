/**
 * A snapshot of the task worktree per turn, so a session entry can name the
 * files as they were and rewinding restores them.
 *
 * The snapshot is a git commit built with a private index and a private
 * object directory under the session directory (`GIT_OBJECT_DIRECTORY`), with
 * the repository's own objects as an alternate: nothing is written into the
 * user's repository or the worktree's index. Git runs through verify's
 * neutralized runner (hooks, filters and config drivers off).
 *
 * Restoring compares the snapshot's tree with a fresh one of the worktree and
 * writes or deletes the differing files through confine (the only writer of
 * worktree files). Binary files and symlinks are reported, not restored.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { deleteFile, resolveWritePath, writeText } from '@crustcore/confine';
import { err, ok, type Result } from '@crustcore/kernel';
import { runGitAt, type TaskWorktree, worktreeLocation } from '@crustcore/verify';
import type { AgentWorkspace } from '../tools/workspace.js';

export interface SnapshotError {
  readonly _tag: 'SnapshotError';
  readonly message: string;
}

export interface Snapshot {
  readonly commit: string;
  readonly tree: string;
}

export interface RestoreReport {
  readonly written: readonly string[];
  readonly deleted: readonly string[];
  /** Paths left as they are (binary content, symlinks, refusals), with the reason. */
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
}

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const ZERO_ID = /^0+$/;
const MAX_RESTORED_FILES = 5_000;
const fail = (message: string): SnapshotError => ({ _tag: 'SnapshotError', message });

/** The parts of a task worktree a snapshot needs (a `TaskWorktree` has them all). */
export type SnapshotWorktree = Pick<TaskWorktree, 'path' | 'gitDir' | 'baseCommit'> & {
  readonly repo: Pick<TaskWorktree['repo'], 'commonDir'>;
};

export class WorktreeSnapshots {
  readonly #worktree: SnapshotWorktree;
  readonly #env: Readonly<Record<string, string>>;

  /** `directory` holds the private index and objects (under the session directory). */
  constructor(worktree: SnapshotWorktree, directory: string, indexName: string) {
    this.#worktree = worktree;
    const objects = join(directory, 'objects');
    mkdirSync(objects, { recursive: true, mode: 0o700 });
    this.#env = {
      GIT_INDEX_FILE: join(directory, `${indexName}.index`),
      GIT_OBJECT_DIRECTORY: objects,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: join(worktree.repo.commonDir, 'objects'),
      GIT_AUTHOR_NAME: 'CrustCore session',
      GIT_AUTHOR_EMAIL: 'session@crustcore.invalid',
      GIT_COMMITTER_NAME: 'CrustCore session',
      GIT_COMMITTER_EMAIL: 'session@crustcore.invalid',
      GIT_AUTHOR_DATE: '1970-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '1970-01-01T00:00:00Z',
    };
  }

  async #git(args: readonly string[], signal?: AbortSignal): Promise<Result<SnapshotError, string>> {
    const ran = await runGitAt(worktreeLocation(this.#worktree as TaskWorktree), args, {
      env: this.#env,
      ...(signal === undefined ? {} : { signal }),
    });
    if (ran._tag === 'Left') return err(fail(ran.left.message));
    return ok(ran.right.stdout.text);
  }

  /** Records the worktree as it is now. */
  async take(signal?: AbortSignal): Promise<Result<SnapshotError, Snapshot>> {
    const added = await this.#git(['add', '-A', '--', '.'], signal);
    if (added._tag === 'Left') return added;
    const tree = await this.#git(['write-tree'], signal);
    if (tree._tag === 'Left') return tree;
    const treeId = tree.right.trim();
    if (!OBJECT_ID.test(treeId)) return err(fail(`unexpected write-tree output ${treeId.slice(0, 80)}`));
    const commit = await this.#git(
      ['commit-tree', treeId, '-p', this.#worktree.baseCommit, '-m', 'crustcore session snapshot'],
      signal,
    );
    if (commit._tag === 'Left') return commit;
    const commitId = commit.right.trim();
    if (!OBJECT_ID.test(commitId)) return err(fail(`unexpected commit-tree output ${commitId.slice(0, 80)}`));
    return ok({ commit: commitId, tree: treeId });
  }

  /** Makes the worktree's files match snapshot `commit`, writing through confine. */
  async restore(
    workspace: AgentWorkspace,
    commit: string,
    signal?: AbortSignal,
  ): Promise<Result<SnapshotError, RestoreReport>> {
    if (!OBJECT_ID.test(commit)) return err(fail('not a commit id'));
    const now = await this.take(signal);
    if (now._tag === 'Left') return now;
    const listing = await this.#git(
      ['diff-tree', '-r', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', `${commit}^{tree}`, now.right.tree],
      signal,
    );
    if (listing._tag === 'Left') return listing;
    const fields = listing.right.split('\0');
    const written: string[] = [];
    const deleted: string[] = [];
    const skipped: { path: string; reason: string }[] = [];
    for (let index = 0; index + 1 < fields.length && written.length + deleted.length < MAX_RESTORED_FILES; index += 2) {
      const header = fields[index] as string;
      const path = fields[index + 1] as string;
      // ":<old mode> <new mode> <old id> <new id> <status>" — old is the snapshot, new is now.
      const [oldMode, , oldId] = header.replace(/^:/, '').split(' ');
      if (oldMode === undefined || oldId === undefined) continue;
      const gated = await workspace.gate.withToolWrite(
        async () => {
          const target = resolveWritePath(workspace.writeCap, path);
          if (target._tag === 'Left') return skipped.push({ path, reason: target.left._tag });
          if (ZERO_ID.test(oldId)) {
            const removed = deleteFile(workspace.writeCap, target.right);
            return removed._tag === 'Left' ? skipped.push({ path, reason: removed.left._tag }) : deleted.push(path);
          }
          if (oldMode === '120000' || oldMode === '160000')
            return skipped.push({ path, reason: 'symlink or submodule' });
          const blob = await runGitAt(worktreeLocation(this.#worktree as TaskWorktree), ['cat-file', 'blob', oldId], {
            env: this.#env,
          });
          if (blob._tag === 'Left') return skipped.push({ path, reason: blob.left.message });
          const text = blob.right.stdout.text;
          if (text.includes('\0') || text.includes('\uFFFD')) return skipped.push({ path, reason: 'binary content' });
          const put = writeText(
            workspace.writeCap,
            target.right,
            text,
            oldMode === '100755' ? { executable: true } : {},
          );
          return put._tag === 'Left' ? skipped.push({ path, reason: put.left._tag }) : written.push(path);
        },
        signal === undefined ? {} : { signal },
      );
      if (gated._tag === 'Left') return err(fail(gated.left.message));
    }
    return ok({ written, deleted, skipped });
  }
}
