/**
 * Writing and removing files through confined paths. Every write is the
 * verified atomic replacement of `atomic-write.ts`; an existing file keeps
 * its permission bits unless the caller says otherwise.
 */
import { err, type Hash32, ok, type Result } from '@crustcore/kernel';
import { DEFAULT_FILE_MODE, EXECUTABLE_FILE_MODE, removeAtomically, writeAtomically } from './atomic-write.js';
import type { FsWriteCap } from './capabilities.js';
import type { ConfinedWritePath } from './confined-path.js';
import type { PathError } from './errors.js';
import {
  clampBound,
  DEFAULT_MAX_FILE_BYTES,
  type FileTooLarge,
  MAX_FILE_BYTES_CEILING,
  sha256Of,
} from './read-file.js';
import { checkWriteAccess } from './tool-access.js';

export interface WriteOptions {
  /** Create missing parent directories (default true). */
  readonly createParents?: boolean;
  /**
   * true → 0755, false → 0644; absent → keep an existing file's bits, 0644 for a new file.
   */
  readonly executable?: boolean;
  /** Refuse content larger than this (default 8 MiB). */
  readonly maxBytes?: number;
  /**
   * fsync the file and its directory (default true). `false` is for scratch
   * output only; every confinement check runs either way.
   */
  readonly durable?: boolean;
}

export interface WriteOutcome {
  readonly path: string;
  readonly bytesWritten: number;
  readonly sha256: Hash32;
  /** True when the file did not exist before. */
  readonly created: boolean;
  /** Permission bits the file has now. */
  readonly mode: number;
}

export type WriteError = PathError | FileTooLarge;

function modeFor(executable: boolean | undefined): number | null {
  if (executable === undefined) return null;
  return executable ? EXECUTABLE_FILE_MODE : DEFAULT_FILE_MODE;
}

/** Atomically replaces (or creates) the file at `path` with `bytes`. */
export function writeBytes(
  cap: FsWriteCap,
  path: ConfinedWritePath,
  bytes: Uint8Array,
  options: WriteOptions = {},
): Result<WriteError, WriteOutcome> {
  const access = checkWriteAccess(cap, path);
  if (access !== null) return err(access);
  const maxBytes = clampBound(options.maxBytes, DEFAULT_MAX_FILE_BYTES, MAX_FILE_BYTES_CEILING);
  if (bytes.length > maxBytes) {
    return err({
      _tag: 'FileTooLarge',
      path: path.relative,
      sizeBytes: bytes.length,
      maxFileBytes: maxBytes,
      message: `content is ${bytes.length} bytes; the bound is ${maxBytes}`,
    });
  }
  const written = writeAtomically(path.root, path.relative, bytes, path.relative, {
    createParents: options.createParents ?? true,
    mode: modeFor(options.executable),
    durable: options.durable ?? true,
  });
  if (written._tag === 'Left') return written;
  return ok({
    path: path.relative,
    bytesWritten: bytes.length,
    sha256: sha256Of(bytes),
    created: written.right.created,
    mode: written.right.mode,
  });
}

/** Atomically replaces (or creates) the file at `path` with `text` as UTF-8. */
export function writeText(
  cap: FsWriteCap,
  path: ConfinedWritePath,
  text: string,
  options: WriteOptions = {},
): Result<WriteError, WriteOutcome> {
  return writeBytes(cap, path, Buffer.from(text, 'utf8'), options);
}

/** Removes the regular file at `path` (never a directory, symlink or special file). */
export function deleteFile(cap: FsWriteCap, path: ConfinedWritePath): Result<PathError, { readonly path: string }> {
  const access = checkWriteAccess(cap, path);
  if (access !== null) return err(access);
  const removed = removeAtomically(path.root, path.relative, path.relative);
  return removed._tag === 'Left' ? removed : ok({ path: path.relative });
}
