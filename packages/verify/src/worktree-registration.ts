/**
 * git registers a linked worktree as `<common dir>/worktrees/<id>/`, whose
 * `gitdir` file names `<worktree>/.git`. `git worktree prune` drops every
 * registration whose worktree is missing: the user's own too (a worktree on
 * a drive that is not mounted, one they moved and will `git worktree repair`),
 * and run beside a task it deleted the registration of that task's own
 * worktree mid-run (seen in the daemon: `git add` in the worker's worktree
 * then failed with "not a git repository"). CrustCore never prunes the
 * user's repository; it forgets only registrations that point at its own
 * paths, read here.
 */
import { readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** `dir` as given and with its parent's symlinks resolved (git records real paths). */
export function pathSpellings(dir: string): readonly string[] {
  try {
    return [dir, join(realpathSync(dirname(dir)), basename(dir))];
  } catch {
    // The parent is gone too: only the spelling as given can match.
    return [dir];
  }
}

/** `<dir>/.git` in each of `dir`'s spellings: what a registration's `gitdir` file names. */
export const gitFileSpellings = (dir: string): readonly string[] =>
  pathSpellings(dir).map((spelling) => join(spelling, '.git'));

/**
 * Removes each registration in `commonDir` whose `gitdir` file names a path
 * `owns` accepts; returns how many went. Registrations it cannot read are
 * left alone (they are not known to be ours).
 */
export function forgetRegistrations(commonDir: string, owns: (worktreeGitFile: string) => boolean): number {
  const root = join(commonDir, 'worktrees');
  let ids: string[];
  try {
    ids = readdirSync(root);
  } catch {
    return 0;
  }
  let forgotten = 0;
  for (const id of ids) {
    let target: string;
    try {
      target = readFileSync(join(root, id, 'gitdir'), 'utf8').trim();
    } catch {
      continue;
    }
    if (!owns(target)) continue;
    rmSync(join(root, id), { recursive: true, force: true, maxRetries: 3 });
    forgotten += 1;
  }
  return forgotten;
}
