/**
 * Integrating a `VerifiedPatch` into the user's repository, two ways:
 *
 * - `applyVerifiedPatch`: writes the user's working tree through the apply
 *   journal. Old and new contents come from git objects (the base commit and
 *   the verified tree, both in the shared object store), checked out through
 *   a throwaway index into a scratch directory — the user's index is not used.
 * - `commitVerifiedPatch`: touches no working tree at all; creates a commit of
 *   the verified tree on a new branch `crustcore/<taskId>` (commit-tree +
 *   update-ref, hooks neutralized). Fails if the branch exists.
 *
 * Only a `VerifiedPatch` is accepted: approval is the caller's business and
 * happens before these are called.
 */

import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { type GitFailure, type GitLocation, gitRawText, gitText, runGitAt } from './git.js';
import { crustcoreHome, journalDir, scratchDir } from './home.js';
import {
  type ApplyError,
  type ApplyReceipt,
  applyChanges,
  type FileChange,
  type StepHook,
} from './journal/apply-journal.js';
import { fileModeOf, parseRawDiff } from './patch.js';
import { VerifiedPatch } from './verified-patch.js';
import { type Repository, repositoryLocation, repositoryWithTaskObjects } from './worktree.js';

export type IntegrateError =
  | ApplyError
  | GitFailure
  | { readonly _tag: 'NotVerified'; readonly message: string }
  | { readonly _tag: 'UnsupportedChange'; readonly path: string; readonly message: string }
  | { readonly _tag: 'BranchExists'; readonly branch: string; readonly message: string };

export interface ApplyVerifiedOptions {
  readonly repo: Repository;
  readonly home?: string;
  /** Journal directory; default `$CRUSTCORE_HOME/journal`. */
  readonly journalRoot?: string;
  readonly nowMs?: number;
  readonly onStep?: StepHook;
}

interface TreeFile {
  readonly bytes: Uint8Array;
  readonly mode: 'regular' | 'executable' | 'symlink';
}

/** Checks out `paths` of `treeish` into a scratch dir through a throwaway index; returns their contents. */
async function materialize(
  repo: GitLocation,
  treeish: string,
  paths: readonly string[],
  modes: ReadonlyMap<string, string>,
  scratch: string,
): Promise<Result<GitFailure | IntegrateError, Map<string, TreeFile>>> {
  const files = new Map<string, TreeFile>();
  if (paths.length === 0) return ok(files);
  const out = mkdtempSync(join(scratch, 'tree-'));
  const location: GitLocation = { ...repo, workTree: out, cwd: out };
  // A throwaway index: the user's own index is never read or written.
  const env = { GIT_INDEX_FILE: `${out}.index` };
  const read = await runGitAt(location, ['read-tree', treeish], { env });
  if (read._tag === 'Left') return read;
  const checkout = await runGitAt(location, ['checkout-index', '-f', '-z', '--stdin'], {
    env,
    stdin: `${paths.join('\0')}\0`,
  });
  if (checkout._tag === 'Left') return checkout;
  for (const path of paths) {
    const mode = fileModeOf(modes.get(path) ?? '');
    if (mode === null)
      return err({ _tag: 'UnsupportedChange', path, message: `unsupported git mode ${modes.get(path)}` });
    const full = join(out, path);
    const bytes = lstatSync(full).isSymbolicLink() ? readlinkSync(full, { encoding: 'buffer' }) : readFileSync(full);
    files.set(path, { bytes: new Uint8Array(bytes), mode });
  }
  return ok(files);
}

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The batch of file changes that turns the base tree into the verified tree. */
export async function planVerifiedChanges(
  verified: VerifiedPatch,
  repo: Repository,
  home: string,
): Promise<Result<IntegrateError, FileChange[]>> {
  // The verified tree's objects are in the task's store under $CRUSTCORE_HOME: read them from there.
  const source = repositoryWithTaskObjects(repo, home, verified.taskId);
  const listing = await gitRawText(source, [
    'diff-tree',
    '-r',
    '-z',
    '--raw',
    '--no-abbrev',
    '--no-renames',
    '--full-index',
    '--no-ext-diff',
    '--no-textconv',
    verified.baseCommit,
    verified.treeId,
    '--',
  ]);
  if (listing._tag === 'Left') return listing;
  const entries = parseRawDiff(listing.right);
  const oldModes = new Map<string, string>();
  const newModes = new Map<string, string>();
  for (const entry of entries) {
    if (entry.oldMode !== '000000') oldModes.set(entry.path, entry.oldMode);
    if (entry.newMode !== '000000') newModes.set(entry.path, entry.newMode);
  }
  mkdirSync(scratchDir(home), { recursive: true, mode: 0o700 });
  const scratch = mkdtempSync(join(scratchDir(home), 'apply-'));
  try {
    // Two throwaway indexes and two scratch trees: the base's and the verified tree's checkouts share nothing, so
    // they run side by side (each is two git process starts on the way to the user's tree).
    const [before, after] = await Promise.all([
      materialize(source, verified.baseCommit, [...oldModes.keys()], oldModes, scratch),
      materialize(source, verified.treeId, [...newModes.keys()], newModes, scratch),
    ]);
    if (before._tag === 'Left') return before;
    if (after._tag === 'Left') return after;
    const changes: FileChange[] = entries.map((entry) => {
      const old = before.right.get(entry.path);
      const next = after.right.get(entry.path);
      return {
        path: entry.path,
        before: old === undefined ? null : { sha256: sha256Hex(old.bytes), mode: old.mode },
        after: next === undefined ? null : { bytes: next.bytes, mode: next.mode },
      };
    });
    return ok(changes);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Applies a verified patch to the user's working tree through the crash-safe
 * journal. Drift in any target (content, presence or executable bit differs
 * from the base) aborts with zero writes.
 */
export async function applyVerifiedPatch(
  verified: VerifiedPatch,
  options: ApplyVerifiedOptions,
): Promise<Result<IntegrateError, ApplyReceipt>> {
  if (!VerifiedPatch.is(verified)) return err({ _tag: 'NotVerified', message: 'only a VerifiedPatch can be applied' });
  const home = options.home ?? crustcoreHome();
  const planned = await planVerifiedChanges(verified, options.repo, home);
  if (planned._tag === 'Left') return planned;
  return applyChanges(planned.right, {
    root: options.repo.root,
    journalRoot: options.journalRoot ?? journalDir(home),
    label: verified.taskId,
    ...(options.nowMs === undefined ? {} : { nowMs: options.nowMs }),
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
  });
}

export interface CommitOptions {
  readonly repo: Repository;
  /** Commit message; default names the task and the verify evidence. */
  readonly message?: string;
  /** Caller's clock for author/committer dates. */
  readonly nowMs: number;
  readonly authorName?: string;
  readonly authorEmail?: string;
  /** $CRUSTCORE_HOME (where the task's objects are stored); default `crustcoreHome()`. */
  readonly home?: string;
}

export interface CommitReceipt {
  readonly branch: string;
  readonly commit: string;
  readonly treeId: string;
}

/**
 * `--commit` mode: the verified tree becomes a commit on `crustcore/<taskId>`,
 * parent = base. No working tree, index or HEAD is touched.
 */
export async function commitVerifiedPatch(
  verified: VerifiedPatch,
  options: CommitOptions,
): Promise<Result<IntegrateError, CommitReceipt>> {
  if (!VerifiedPatch.is(verified))
    return err({ _tag: 'NotVerified', message: 'only a VerifiedPatch can be committed' });
  const location = repositoryLocation(options.repo);
  const imported = await importTaskObjects(verified, options.repo, options.home ?? crustcoreHome());
  if (imported._tag === 'Left') return imported;
  const branch = `crustcore/${verified.taskId}`;
  const ref = `refs/heads/${branch}`;
  const exists = await runGitAt(location, ['show-ref', '--verify', '--quiet', ref]);
  if (exists._tag === 'Right') return err({ _tag: 'BranchExists', branch, message: `branch ${branch} already exists` });
  const seconds = Math.floor(options.nowMs / 1000);
  const name = options.authorName ?? 'CrustCore';
  const email = options.authorEmail ?? 'crustcore@localhost';
  const identity = {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_AUTHOR_DATE: `@${seconds} +0000`,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    GIT_COMMITTER_DATE: `@${seconds} +0000`,
  };
  const evidence = verified.evidence();
  const message =
    options.message ??
    `crustcore: verified patch for ${verified.taskId}\n\nVerify: ${evidence.argv.join(' ')} (exit 0, profile ${evidence.profile})\nPatch-Sha256: ${evidence.patchSha256}\n`;
  const commit = await gitText(location, ['commit-tree', verified.treeId, '-p', verified.baseCommit, '-F', '-'], {
    env: identity,
    stdin: message,
  });
  if (commit._tag === 'Left') return commit;
  const zero = '0'.repeat(commit.right.length);
  const updated = await runGitAt(location, [
    'update-ref',
    '-m',
    `crustcore: ${verified.taskId}`,
    ref,
    commit.right,
    zero,
  ]);
  if (updated._tag === 'Left') return err({ _tag: 'BranchExists', branch, message: updated.left.message });
  return ok({ branch, commit: commit.right, treeId: verified.treeId });
}

/**
 * A commit in the user's repository must own its objects: the new objects of
 * the verified tree (not those of the base) are packed from the task's store
 * into the user's object directory. Only approved patches get here.
 */
async function importTaskObjects(
  verified: VerifiedPatch,
  repo: Repository,
  home: string,
): Promise<Result<GitFailure, null>> {
  const source = repositoryWithTaskObjects(repo, home, verified.taskId);
  if (source.objects === undefined) return ok(null);
  const listed = await gitText(source, ['rev-list', '--objects', verified.treeId, '--not', verified.baseCommit]);
  if (listed._tag === 'Left') return listed;
  const ids = listed.right
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((id) => id !== '');
  if (ids.length === 0) return ok(null);
  const packed = await runGitAt(source, ['pack-objects', '-q', join(repo.commonDir, 'objects', 'pack', 'pack')], {
    stdin: `${ids.join('\n')}\n`,
  });
  return packed._tag === 'Left' ? packed : ok(null);
}
