/**
 * Brings a reused pool checkout back to what a fresh `git worktree add`
 * would have made, in what `git reset --hard` + `git clean -ffdx` leave alone
 * because git does not track it:
 * - permission bits other than the owner's executable bit (a worker's
 *   `chmod g+s dir`, `chmod 4777 file`, a directory made world-writable):
 *   directories get `0777 & ~umask`, files `0666` or `0777` (by their
 *   executable bit) `& ~umask`, as git's checkout creates them;
 * - hard links between tracked files (same content, so git sees nothing):
 *   left alone, the next run's write to one path would change another.
 *   Each file with more than one link is copied to a fresh inode.
 * Anything that is not a directory, a regular file or a symlink cannot be
 * left by a reset and a clean: the answer is false, and the caller throws the
 * slot away. Symlinks are never followed (lstat), so nothing outside the
 * checkout is touched. Extended attributes are not reset (no portable way
 * from Node without a native module); see docs/environments.md.
 */
import { chmodSync, constants, copyFileSync, lstatSync, readdirSync, renameSync, type Stats } from 'node:fs';
import { join } from 'node:path';

const PERMISSION_BITS = 0o7777;
const OWNER_EXECUTE = 0o100;

interface Modes {
  readonly directory: number;
  readonly plainFile: number;
  readonly executableFile: number;
}

const modesFor = (umask: number): Modes => ({
  directory: 0o777 & ~umask,
  plainFile: 0o666 & ~umask,
  executableFile: 0o777 & ~umask,
});

/** A file with other links gets its own inode (copy beside it, then rename over it). */
function unlinkShared(path: string, mode: number): void {
  const fresh = `${path}.crustcore-unlink`;
  copyFileSync(path, fresh, constants.COPYFILE_EXCL);
  chmodSync(fresh, mode);
  renameSync(fresh, path);
}

/** Normalizes one entry; pushes a directory to `pending`. False for a type no checkout holds. */
function normalizeEntry(path: string, stats: Stats, modes: Modes, pending: string[]): boolean {
  const mode = stats.mode & PERMISSION_BITS;
  if (stats.isSymbolicLink()) return true;
  if (stats.isDirectory()) {
    if (mode !== modes.directory) chmodSync(path, modes.directory);
    pending.push(path);
    return true;
  }
  if (!stats.isFile()) return false;
  const wanted = (mode & OWNER_EXECUTE) !== 0 ? modes.executableFile : modes.plainFile;
  if (stats.nlink > 1) unlinkShared(path, wanted);
  else if (mode !== wanted) chmodSync(path, wanted);
  return true;
}

/**
 * Normalizes every entry under `root` (its `.git` pointer file included) and
 * `root` itself. True when the checkout now looks freshly made; false when
 * it holds something it cannot (the caller must check out a fresh one).
 */
export function normalizeCheckout(root: string, umask: number = process.umask()): boolean {
  const modes = modesFor(umask);
  const pending: string[] = [];
  try {
    const top = lstatSync(root);
    if (!top.isDirectory() || !normalizeEntry(root, top, modes, pending)) return false;
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (!normalizeEntry(path, lstatSync(path), modes, pending)) return false;
      }
    }
  } catch {
    return false;
  }
  return true;
}
