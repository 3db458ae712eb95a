/**
 * Atomic, verified file replacement inside a root.
 *
 * 1. Walk to the parent with no-follow opens (creating directories if asked)
 *    and verify the parent descriptor's real location is exactly where the
 *    confined path says.
 * 2. Refuse a target that is a directory, symlink, special file or has other
 *    hard links.
 * 3. Create a temp file O_CREAT|O_EXCL|O_NOFOLLOW in that parent (through the
 *    descriptor, so a swapped path component cannot redirect it), write,
 *    fchmod, fsync, and verify the temp descriptor's real location.
 * 4. Rename temp → name within the same verified directory descriptor
 *    (renameat semantics), fsync the directory, then re-verify both the
 *    parent and the file. On any mismatch, unlink what this call made.
 */
import { randomBytes } from 'node:crypto';
import {
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { err, ok, type Result } from '@crustcore/kernel';
import { closeQuietly, descriptorPath, splitParent, verifyDescriptorAt, walkDirectories } from './descriptor-walk.js';
import { errnoCode, type PathError, pathError, pathErrorFromErrno } from './errors.js';
import { refuseWriteTarget } from './path-resolver.js';
import type { WorktreeRoot } from './worktree-root.js';

const TEMP_FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const TEMP_NAME_ATTEMPTS = 4;
/** Mode for new files when none is asked for; the process umask does not apply (we fchmod). */
export const DEFAULT_FILE_MODE = 0o644;
export const EXECUTABLE_FILE_MODE = 0o755;

export interface AtomicWriteOptions {
  /** Create missing parent directories (each through a no-follow, verified walk). */
  readonly createParents: boolean;
  /**
   * Permission bits for the file. `null` keeps an existing file's bits (so an
   * executable stays executable) and uses 0644 for a new file.
   */
  readonly mode: number | null;
  /**
   * fsync the file and its directory (default in every tool). Only scratch
   * data may skip it; every confinement check runs either way.
   */
  readonly durable: boolean;
}

export interface AtomicWriteOutcome {
  /** True when no file existed at the path before. */
  readonly created: boolean;
  /** Permission bits the file ended up with. */
  readonly mode: number;
}

function tempName(name: string): string {
  // Short prefix of the real name helps a human reading a crash leftover; the random part avoids collisions.
  return `.${name.slice(0, 48)}.${randomBytes(6).toString('hex')}.crustcore-tmp`;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

function unlinkIfSame(dirFd: number, name: string, inode: number, device: number): void {
  const stats = lstatSync(descriptorPath(dirFd, name), { throwIfNoEntry: false });
  if (stats !== undefined && stats.ino === inode && stats.dev === device) {
    try {
      unlinkSync(descriptorPath(dirFd, name));
    } catch {
      // It is gone already, or the directory vanished: either way nothing of ours remains at this name.
    }
  }
}

/**
 * Replaces (or creates) `root/relative` with `bytes`, atomically. `input` is
 * the caller's path string, echoed in errors.
 */
export function writeAtomically(
  root: WorktreeRoot,
  relative: string,
  bytes: Uint8Array,
  input: string,
  options: AtomicWriteOptions,
): Result<PathError, AtomicWriteOutcome> {
  const { directories, name } = splitParent(relative);
  const parentRelative = directories.join('/');
  const parent = walkDirectories(root, directories, input, options.createParents);
  if (parent._tag === 'Left') return parent;
  const dirFd = parent.right;
  try {
    const parentProblem = verifyDescriptorAt(dirFd, root, parentRelative, input);
    if (parentProblem !== null) return err(parentProblem);
    const existing = lstatSync(descriptorPath(dirFd, name), { throwIfNoEntry: false });
    if (existing !== undefined) {
      const refusal = refuseWriteTarget(existing, input);
      if (refusal !== null) return err(refusal);
    }
    const mode = options.mode ?? (existing === undefined ? DEFAULT_FILE_MODE : existing.mode & 0o777);
    return writeInVerifiedDirectory(root, relative, dirFd, name, bytes, input, {
      mode,
      created: existing === undefined,
      durable: options.durable,
    });
  } finally {
    closeQuietly(dirFd);
  }
}

function createTempFile(dirFd: number, name: string, input: string): Result<PathError, [number, string]> {
  for (let attempt = 0; attempt < TEMP_NAME_ATTEMPTS; attempt += 1) {
    const candidate = tempName(name);
    try {
      return ok([openSync(descriptorPath(dirFd, candidate), TEMP_FILE_FLAGS, 0o600), candidate]);
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') return err(pathErrorFromErrno(error, input, 'creating a temp file'));
    }
  }
  return err(pathError('FsFailure', input, 'could not pick a free temp file name', 'EEXIST'));
}

function writeInVerifiedDirectory(
  root: WorktreeRoot,
  relative: string,
  dirFd: number,
  name: string,
  bytes: Uint8Array,
  input: string,
  plan: { readonly mode: number; readonly created: boolean; readonly durable: boolean },
): Result<PathError, AtomicWriteOutcome> {
  const { mode, created, durable } = plan;
  const temp = createTempFile(dirFd, name, input);
  if (temp._tag === 'Left') return temp;
  const [fd, tempFileName] = temp.right;
  const { ino, dev } = fstatSync(fd);
  let renamed = false;
  try {
    writeAll(fd, bytes);
    fchmodSync(fd, mode);
    if (durable) fsyncSync(fd);
    const parentRelative = splitParent(relative).directories.join('/');
    const tempRelative = parentRelative === '' ? tempFileName : `${parentRelative}/${tempFileName}`;
    const tempProblem = verifyDescriptorAt(fd, root, tempRelative, input);
    if (tempProblem !== null) return err(tempProblem);
    renameSync(descriptorPath(dirFd, tempFileName), descriptorPath(dirFd, name));
    renamed = true;
    if (durable) fsyncSync(dirFd);
    const afterProblem =
      verifyDescriptorAt(dirFd, root, parentRelative, input) ?? verifyDescriptorAt(fd, root, relative, input);
    if (afterProblem !== null) {
      unlinkIfSame(dirFd, name, ino, dev);
      return err(afterProblem);
    }
    return ok({ created, mode });
  } catch (error) {
    if (renamed) unlinkIfSame(dirFd, name, ino, dev);
    return err(pathErrorFromErrno(error, input, 'writing'));
  } finally {
    if (!renamed) unlinkIfSame(dirFd, tempFileName, ino, dev);
    closeQuietly(fd);
  }
}

/**
 * Removes the regular file `root/relative` through a verified parent
 * descriptor. Symlinks, directories and special files are refused.
 */
export function removeAtomically(root: WorktreeRoot, relative: string, input: string): Result<PathError, void> {
  const { directories, name } = splitParent(relative);
  const parent = walkDirectories(root, directories, input, false);
  if (parent._tag === 'Left') return parent;
  const dirFd = parent.right;
  try {
    const parentProblem = verifyDescriptorAt(dirFd, root, directories.join('/'), input);
    if (parentProblem !== null) return err(parentProblem);
    const existing = lstatSync(descriptorPath(dirFd, name), { throwIfNoEntry: false });
    if (existing === undefined) return err(pathError('NotFound', input, 'no such file'));
    if (!existing.isFile()) {
      const refusal = refuseWriteTarget(existing, input);
      return err(refusal ?? pathError('SpecialFileRejected', input, 'not a regular file'));
    }
    unlinkSync(descriptorPath(dirFd, name));
    fsyncSync(dirFd);
    return ok(undefined);
  } catch (error) {
    return err(pathErrorFromErrno(error, input, 'removing'));
  } finally {
    closeQuietly(dirFd);
  }
}
