/**
 * Git for the worker, without the user's repository. A task worktree's
 * `.git` file points into the user's `.git`, which the sandbox does not
 * show, so `git status` failed inside. Showing that directory would hand
 * the worker the user's refs, config (hooks, fsmonitor, credentials in
 * remote URLs) and a way to write objects.
 *
 * Instead each worker run gets a private, read-only git directory:
 *   HEAD     the base commit (detached)
 *   config   written here: no hooks, no fsmonitor, nothing from the user's
 *   index    a copy of the worktree's index (stat data from the checkout)
 *   objects  empty, with `info/alternates` naming the user's object store,
 *            bound read-only: history is readable, nothing can be written
 * and the worktree's `.git` file points at it for the run, then back.
 * `git status`, `git diff` and `git log` work; `git commit`, new objects,
 * refs, hooks and config edits fail (read-only), and nothing in the user's
 * `.git/config` or `.git/hooks` is ever read inside.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtraBindRequest } from '@crustcore/sandbox';
import { scratchDir } from './home.js';
import type { TaskWorktree } from './worktree.js';

export interface GitView {
  /** Read-only binds: the private git directory and the user's object store. */
  readonly binds: readonly ExtraBindRequest[];
  /** Puts the worktree's `.git` file back and removes the private directory. Safe to call twice. */
  readonly dispose: () => void;
}

function configText(objectFormat: string): string {
  const lines = [
    '[core]',
    `\trepositoryformatversion = ${objectFormat === 'sha1' ? 0 : 1}`,
    '\tbare = false',
    '\tfsmonitor = false',
    '\thooksPath = /dev/null',
    '\tuntrackedCache = false',
    '\tsplitIndex = false',
  ];
  if (objectFormat !== 'sha1') lines.push('[extensions]', `\tobjectformat = ${objectFormat}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Builds the private git directory for one worker run in `worktree`.
 * Null when the repository cannot be read (the worker then runs without
 * git, as before) — never a reason to fail the task.
 */
export async function prepareGitView(worktree: TaskWorktree, home: string): Promise<GitView | null> {
  // An object id's length is its hash's: 40 hex digits for SHA-1, 64 for SHA-256 (no git call on the worker's start).
  const objectFormat = worktree.baseCommit.length === 64 ? 'sha256' : 'sha1';
  const dotGit = join(worktree.path, '.git');
  let original: string;
  try {
    original = readFileSync(dotGit, 'utf8');
  } catch {
    return null;
  }
  mkdirSync(scratchDir(home), { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(join(scratchDir(home), 'git-view-'));
  try {
    for (const sub of ['objects/info', 'refs/heads', 'refs/tags']) mkdirSync(join(dir, sub), { recursive: true });
    writeFileSync(join(dir, 'HEAD'), `${worktree.baseCommit}\n`);
    writeFileSync(join(dir, 'config'), configText(objectFormat));
    writeFileSync(join(dir, 'objects/info/alternates'), `${join(worktree.repo.commonDir, 'objects')}\n`);
    copyFileSync(join(worktree.gitDir, 'index'), join(dir, 'index'));
    writeFileSync(dotGit, `gitdir: ${dir}\n`);
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  let disposed = false;
  return {
    binds: [
      { source: dir, mode: 'read-only' },
      { source: join(worktree.repo.commonDir, 'objects'), mode: 'read-only' },
    ],
    dispose: () => {
      if (disposed) return;
      disposed = true;
      // Whatever the worker wrote there, the pointer goes back to the worktree's own git dir.
      rmSync(dotGit, { recursive: true, force: true });
      writeFileSync(dotGit, original);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
