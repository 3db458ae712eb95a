/**
 * Race-free traversal. Node has no `openat`, but on Linux a path of the form
 * `/proc/self/fd/<dirfd>/<name>` is resolved by the kernel relative to the
 * directory the descriptor holds, exactly like `openat(dirfd, name)`. Walking
 * one component at a time with O_NOFOLLOW|O_DIRECTORY therefore never follows
 * a symlink, even one swapped in after the path resolver looked; and reading
 * `/proc/self/fd/<fd>` afterwards says where the opened object really is.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  type Stats,
} from 'node:fs';
import { err, ok, type Result } from '@crustcore/kernel';
import { errnoCode, type PathError, pathError, pathErrorFromErrno } from './errors.js';
import { specialFileKind } from './file-kind.js';
import type { WorktreeRoot } from './worktree-root.js';

const PROC_FD = '/proc/self/fd';
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// NONBLOCK: opening a FIFO for reading must never wait for a writer; NOCTTY: never adopt a terminal.
const READ_FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

let procChecked: boolean | null = null;

/** Descriptor-relative operations need /proc; checked once per process. */
export function requireProc(input: string): PathError | null {
  if (procChecked === null) procChecked = existsSync(`${PROC_FD}/`);
  return procChecked ? null : pathError('FsFailure', input, '/proc/self/fd is not available', 'ENOPROC');
}

/** `/proc/self/fd/<fd>` or `/proc/self/fd/<fd>/<name>`: openat-style addressing. */
export function descriptorPath(fd: number, name?: string): string {
  return name === undefined ? `${PROC_FD}/${fd}` : `${PROC_FD}/${fd}/${name}`;
}

export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closing an fd we opened can only fail on EIO/EBADF; nothing useful to do with either.
  }
}

/** Where the kernel says `fd` really is; `(deleted)` suffixes and all. */
export function descriptorLocation(fd: number): string | null {
  try {
    return readlinkSync(descriptorPath(fd));
  } catch {
    return null;
  }
}

/** Refuses unless `fd` is exactly at `root/relative` right now. */
export function verifyDescriptorAt(fd: number, root: WorktreeRoot, relative: string, input: string): PathError | null {
  const location = descriptorLocation(fd);
  const expected = root.join(relative);
  if (location === expected) return null;
  const outside = location === null || root.relativeOf(location) === null;
  return pathError(
    'RaceDetected',
    input,
    outside ? 'the opened object is not inside the root' : 'the opened object moved inside the root',
  );
}

/** Opens the root directory and checks it is still the directory the root was opened on. */
export function openRootDirectory(root: WorktreeRoot, input: string): Result<PathError, number> {
  const procProblem = requireProc(input);
  if (procProblem !== null) return err(procProblem);
  let fd: number;
  try {
    fd = openSync(root.path, DIRECTORY_FLAGS);
  } catch (error) {
    return err(pathError('RootChanged', input, `cannot open the root: ${errnoCode(error)}`, errnoCode(error)));
  }
  const stats = fstatSync(fd);
  if (!root.matches(stats.dev, stats.ino)) {
    closeQuietly(fd);
    return err(pathError('RootChanged', input, 'the root directory was replaced'));
  }
  return ok(fd);
}

/** Explains why `name` in `dirFd` could not be opened as a directory. */
function directoryOpenError(error: unknown, dirFd: number, name: string, input: string): PathError {
  const code = errnoCode(error);
  if (code === 'ENOTDIR' || code === 'ELOOP') {
    const stats = lstatSync(descriptorPath(dirFd, name), { throwIfNoEntry: false });
    if (stats?.isSymbolicLink() === true) {
      return pathError('RaceDetected', input, `'${name}' is now a symlink; not following it`, code);
    }
    return pathError('NotADirectory', input, `'${name}' is not a directory`, code);
  }
  return pathErrorFromErrno(error, input, `opening directory '${name}'`);
}

/** Opens `name` inside `dirFd` as a directory without following a symlink. */
export function openDirectoryAt(dirFd: number, name: string, input: string): Result<PathError, number> {
  try {
    return ok(openSync(descriptorPath(dirFd, name), DIRECTORY_FLAGS));
  } catch (error) {
    return err(directoryOpenError(error, dirFd, name, input));
  }
}

/**
 * Opens the directory `components` under the root, one no-follow step at a
 * time, optionally creating missing directories (mode 0755). Returns the
 * final directory's descriptor; the caller closes it.
 */
export function walkDirectories(
  root: WorktreeRoot,
  components: readonly string[],
  input: string,
  create: boolean,
): Result<PathError, number> {
  const rootFd = openRootDirectory(root, input);
  if (rootFd._tag === 'Left') return rootFd;
  let fd = rootFd.right;
  for (const name of components) {
    let next = openDirectoryAt(fd, name, input);
    if (next._tag === 'Left' && next.left._tag === 'NotFound' && create) {
      try {
        mkdirSync(descriptorPath(fd, name), 0o755);
      } catch (error) {
        // EEXIST: someone made it first; the no-follow open below decides if it is usable.
        if (errnoCode(error) !== 'EEXIST') {
          closeQuietly(fd);
          return err(pathErrorFromErrno(error, input, `creating directory '${name}'`));
        }
      }
      next = openDirectoryAt(fd, name, input);
    }
    closeQuietly(fd);
    if (next._tag === 'Left') return next;
    fd = next.right;
  }
  return ok(fd);
}

/** Splits a canonical relative path into its directory components and final name. */
export function splitParent(relative: string): { readonly directories: string[]; readonly name: string } {
  const components = relative.split('/');
  const name = components.pop() as string;
  return { directories: components, name };
}

export interface OpenedFile {
  readonly fd: number;
  readonly stats: Stats;
}

/**
 * Opens the regular file `root/relative` for reading: no-follow walk, lstat
 * the entry (never open a FIFO, socket or device), open O_NOFOLLOW|O_NONBLOCK,
 * check it is the same inode, and verify its real location.
 */
export function openFileForRead(root: WorktreeRoot, relative: string, input: string): Result<PathError, OpenedFile> {
  if (relative === '') return err(pathError('IsDirectory', input, 'the root is a directory'));
  const { directories, name } = splitParent(relative);
  const dir = walkDirectories(root, directories, input, false);
  if (dir._tag === 'Left') return dir;
  const dirFd = dir.right;
  try {
    const entry = lstatSync(descriptorPath(dirFd, name), { throwIfNoEntry: false });
    if (entry === undefined) return err(pathError('NotFound', input, 'no such file'));
    if (entry.isSymbolicLink()) return err(pathError('RaceDetected', input, 'the file is now a symlink'));
    if (entry.isDirectory()) return err(pathError('IsDirectory', input, 'is a directory'));
    const special = specialFileKind(entry);
    if (special !== null) return err(pathError('SpecialFileRejected', input, `refusing to read a ${special}`));
    let fd: number;
    try {
      fd = openSync(descriptorPath(dirFd, name), READ_FILE_FLAGS);
    } catch (error) {
      return err(pathErrorFromErrno(error, input, 'opening'));
    }
    const stats = fstatSync(fd);
    const problem = !stats.isFile()
      ? pathError('RaceDetected', input, 'the file changed type while opening')
      : stats.ino !== entry.ino || stats.dev !== entry.dev
        ? pathError('RaceDetected', input, 'the file was replaced while opening')
        : verifyDescriptorAt(fd, root, relative, input);
    if (problem !== null) {
      closeQuietly(fd);
      return err(problem);
    }
    return ok({ fd, stats });
  } finally {
    closeQuietly(dirFd);
  }
}

/** Opens the directory `root/relative` for listing, verified in place. */
export function openDirectoryForRead(root: WorktreeRoot, relative: string, input: string): Result<PathError, number> {
  const dir = walkDirectories(root, relative === '' ? [] : relative.split('/'), input, false);
  if (dir._tag === 'Left') return dir;
  const problem = verifyDescriptorAt(dir.right, root, relative, input);
  if (problem !== null) {
    closeQuietly(dir.right);
    return err(problem);
  }
  return dir;
}
