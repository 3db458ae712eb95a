/**
 * The few durable-write primitives the apply journal is built from. Each
 * write goes to a fresh sibling created with O_EXCL (never a file someone
 * else prepared), is fsynced, then renamed over the target; the directory is
 * fsynced when the rename itself must survive a power cut.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  openSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';

const EXCL_WRITE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** fsyncs a directory so renames and creations inside it are durable. */
export function fsyncDirectory(path: string): void {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Removes a file if present; a missing file is not an error. */
export function unlinkIfPresent(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Removes an empty directory if present; missing or non-empty is not an error. */
export function rmdirIfEmpty(path: string): void {
  try {
    rmdirSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
  }
}

/**
 * Creates `path` with O_EXCL, writes all of `bytes`, sets the mode (umask
 * does not apply to fchmod) and fsyncs. Throws EEXIST when `path` exists.
 * `onHalfWritten` runs once after the first half of the bytes, for fault injection.
 */
export function writeNewFileSynced(path: string, bytes: Uint8Array, mode: number, onHalfWritten?: () => void): void {
  const fd = openSync(path, EXCL_WRITE, mode);
  try {
    fchmodSync(fd, mode);
    const half = bytes.length >> 1;
    writeAll(fd, bytes.subarray(0, half));
    onHalfWritten?.();
    writeAll(fd, bytes.subarray(half));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/** Creates a symlink at `path` (fails if it exists). Symlink contents are immutable once made. */
export function createSymlink(path: string, target: string): void {
  symlinkSync(target, path);
}

/** temp + fsync + rename + directory fsync, for small control files (the journal itself). */
export function writeFileAtomic(path: string, bytes: Uint8Array, directory: string): void {
  const temp = `${path}.tmp`;
  unlinkIfPresent(temp);
  writeNewFileSynced(temp, bytes, 0o600);
  renameSync(temp, path);
  fsyncDirectory(directory);
}
