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
import { runTrustedHostCommand } from '@crustcore/sandbox';

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

/** Walks the whole tree in this process: the fallback when `find` cannot run. */
function normalizeByWalk(root: string, modes: Modes): boolean {
  const pending: string[] = [];
  const top = lstatSync(root);
  if (!top.isDirectory() || !normalizeEntry(root, top, modes, pending)) return false;
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (!normalizeEntry(path, lstatSync(path), modes, pending)) return false;
    }
  }
  return true;
}

const octal = (mode: number): string => mode.toString(8).padStart(4, '0');

/**
 * `find` arguments that print (NUL-terminated) exactly the entries `normalizeEntry` would change
 * or refuse: a directory not at its mode, a file with other links or at neither file mode, and
 * anything that is none of directory, file, symlink. `-perm MODE` compares all twelve bits.
 */
function findArgv(root: string, modes: Modes): [string, ...string[]] {
  const [d, f, x] = [octal(modes.directory), octal(modes.plainFile), octal(modes.executableFile)];
  const badDirectory = ['(', '-type', 'd', '!', '-perm', d, ')'];
  const badFile = ['(', '-type', 'f', '(', '-links', '+1', '-o', '(', '!', '-perm', f, '!', '-perm', x, ')', ')', ')'];
  const foreign = ['(', '!', '-type', 'd', '!', '-type', 'f', '!', '-type', 'l', ')'];
  return ['find', root, '(', ...badDirectory, '-o', ...badFile, '-o', ...foreign, ')', '-print0'];
}

/** At most this much of `find`'s listing; a run that left more than that gets a fresh checkout. */
const FIND_OUTPUT_BYTES = 1 << 20;
const FIND_TIMEOUT_MS = 120_000;

/**
 * Lets `find` (C, off the main thread) stat the tree and normalizes only what it lists. Null when
 * find cannot start; false when it fails or lists too much (an unreadable directory, a flood).
 */
async function normalizeByFind(root: string, modes: Modes): Promise<boolean | null> {
  const listed = await runTrustedHostCommand({
    argv: findArgv(root, modes),
    cwd: root,
    env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
    timeoutMs: FIND_TIMEOUT_MS,
    maxOutputBytes: FIND_OUTPUT_BYTES,
  });
  if (listed.startError !== null) return listed.startError.reason === 'NotFound' ? null : false;
  if (listed.exitCode !== 0 || listed.stdout.truncated || listed.timedOut) return false;
  const ignored: string[] = [];
  for (const path of listed.stdout.text.split('\0')) {
    // A name that is not UTF-8 comes back mangled, and its lstat fails: false, as it should be.
    if (path !== '' && !normalizeEntry(path, lstatSync(path), modes, ignored)) return false;
  }
  return true;
}

/**
 * Normalizes every entry under `root` (its `.git` pointer file included) and
 * `root` itself. True when the checkout now looks freshly made; false when
 * it holds something it cannot (the caller must check out a fresh one).
 * `find` does the stat pass when it can (about 3x faster than a walk from
 * Node on 20k files, and the event loop stays free); `scan: 'walk'` forces the in-process walk.
 */
export async function normalizeCheckout(
  root: string,
  options: { readonly umask?: number; readonly scan?: 'find' | 'walk' } = {},
): Promise<boolean> {
  const modes = modesFor(options.umask ?? process.umask());
  try {
    if (!lstatSync(root).isDirectory()) return false;
    const found = options.scan === 'walk' ? null : await normalizeByFind(root, modes);
    return found ?? normalizeByWalk(root, modes);
  } catch {
    return false;
  }
}
