/**
 * Reading files through confined paths: bounded size, verified descriptor,
 * binary detection, and line ranges for text.
 */
import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';
import { err, type Hash32, ok, type Result } from '@crustcore/kernel';
import type { FsReadCap } from './capabilities.js';
import type { ConfinedReadPath } from './confined-path.js';
import { closeQuietly, openFileForRead } from './descriptor-walk.js';
import type { PathError } from './errors.js';
import { checkReadAccess } from './tool-access.js';
import type { WorktreeRoot } from './worktree-root.js';

/** Default bound on a file read whole. */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Hard ceiling on any bound a caller passes. */
export const MAX_FILE_BYTES_CEILING = 256 * 1024 * 1024;
/** Default bound on the text handed back by `readText`. */
export const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024;
/** Bytes inspected for NUL when deciding a file is binary (git uses the same figure). */
const BINARY_SNIFF_BYTES = 8000;

export interface FileTooLarge {
  readonly _tag: 'FileTooLarge';
  readonly path: string;
  readonly sizeBytes: number;
  readonly maxFileBytes: number;
  readonly message: string;
}

export interface BinaryFile {
  readonly _tag: 'BinaryFile';
  readonly path: string;
  readonly message: string;
}

export interface InvalidLineRange {
  readonly _tag: 'InvalidLineRange';
  readonly path: string;
  readonly message: string;
}

export interface FileBytes {
  readonly bytes: Buffer;
  /** Permission bits (e.g. 0o755). */
  readonly mode: number;
  readonly sha256: Hash32;
}

export function sha256Of(bytes: Uint8Array): Hash32 {
  return createHash('sha256').update(bytes).digest('hex') as Hash32;
}

export function clampBound(value: number | undefined, fallback: number, ceiling: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.max(0, Math.min(Math.floor(value), ceiling));
}

/** Reads a whole regular file, at most `maxFileBytes` (default 8 MiB). */
export function readBytes(
  cap: FsReadCap,
  path: ConfinedReadPath,
  options: { readonly maxFileBytes?: number } = {},
): Result<PathError | FileTooLarge, FileBytes> {
  const access = checkReadAccess(cap, path);
  if (access !== null) return err(access);
  return readFileAt(path.root, path.relative, options.maxFileBytes);
}

/** Reads `root/relative` through a verified descriptor; for tools that already checked access. */
export function readFileAt(
  root: WorktreeRoot,
  relative: string,
  maxFileBytesOption: number | undefined,
): Result<PathError | FileTooLarge, FileBytes> {
  const maxFileBytes = clampBound(maxFileBytesOption, DEFAULT_MAX_FILE_BYTES, MAX_FILE_BYTES_CEILING);
  const opened = openFileForRead(root, relative, relative);
  if (opened._tag === 'Left') return opened;
  const { fd, stats } = opened.right;
  try {
    if (stats.size > maxFileBytes) {
      return err({
        _tag: 'FileTooLarge',
        path: relative,
        sizeBytes: stats.size,
        maxFileBytes,
        message: `file is ${stats.size} bytes; the bound is ${maxFileBytes}`,
      });
    }
    // Read one byte past the stat size: a file that grew since fstat is still bounded, and noticed.
    const buffer = Buffer.allocUnsafe(Math.min(stats.size + 1, maxFileBytes + 1));
    let filled = 0;
    while (filled < buffer.length) {
      const got = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (got === 0) break;
      filled += got;
    }
    if (filled > maxFileBytes) {
      return err({
        _tag: 'FileTooLarge',
        path: relative,
        sizeBytes: filled,
        maxFileBytes,
        message: `file grew past the bound of ${maxFileBytes} bytes while reading`,
      });
    }
    const bytes = buffer.subarray(0, filled);
    return ok({ bytes, mode: stats.mode & 0o777, sha256: sha256Of(bytes) });
  } finally {
    closeQuietly(fd);
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes bytes as text, or null when they look binary (NUL early on, or invalid UTF-8). */
export function decodeText(bytes: Uint8Array): string | null {
  const sniff = bytes.subarray(0, BINARY_SNIFF_BYTES);
  if (sniff.includes(0)) return null;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Offsets where each line starts; a final newline does not start a new line. */
export function lineStarts(text: string): number[] {
  const starts: number[] = text.length === 0 ? [] : [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    if (index + 1 < text.length) starts.push(index + 1);
  }
  return starts;
}

export interface ReadTextOptions {
  /** First line to return (1-based, default 1). */
  readonly startLine?: number;
  /** Last line to return (inclusive, default the last line). */
  readonly endLine?: number;
  /** Refuse files larger than this (default 8 MiB). */
  readonly maxFileBytes?: number;
  /** Stop adding lines once the text would exceed this (default 256 KiB). */
  readonly maxOutputBytes?: number;
}

export interface TextRead {
  readonly path: string;
  /** The requested lines, each with its original line ending. */
  readonly text: string;
  readonly startLine: number;
  /** Last line included (less than asked when `truncated`). */
  readonly endLine: number;
  readonly totalLines: number;
  /** True when `maxOutputBytes` cut the range short. */
  readonly truncated: boolean;
  readonly sizeBytes: number;
  /** Hash of the whole file, for edit preconditions and receipts. */
  readonly sha256: Hash32;
  readonly executable: boolean;
}

export type ReadTextError = PathError | FileTooLarge | BinaryFile | InvalidLineRange;

/** Reads a line range of a UTF-8 text file. */
export function readText(
  cap: FsReadCap,
  path: ConfinedReadPath,
  options: ReadTextOptions = {},
): Result<ReadTextError, TextRead> {
  const file = readBytes(cap, path, options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes });
  if (file._tag === 'Left') return file;
  const { bytes, mode, sha256 } = file.right;
  const text = decodeText(bytes);
  if (text === null)
    return err({ _tag: 'BinaryFile', path: path.relative, message: 'file is binary (NUL byte or invalid UTF-8)' });
  const starts = lineStarts(text);
  const totalLines = starts.length;
  const startLine = options.startLine ?? 1;
  const endLine = Math.min(options.endLine ?? totalLines, totalLines);
  if (
    !Number.isSafeInteger(startLine) ||
    startLine < 1 ||
    (options.endLine !== undefined && !Number.isSafeInteger(options.endLine))
  ) {
    return err({ _tag: 'InvalidLineRange', path: path.relative, message: 'line numbers are 1-based integers' });
  }
  if (options.endLine !== undefined && options.endLine < startLine) {
    return err({ _tag: 'InvalidLineRange', path: path.relative, message: 'endLine is before startLine' });
  }
  if (totalLines > 0 && startLine > totalLines) {
    return err({ _tag: 'InvalidLineRange', path: path.relative, message: `the file has ${totalLines} lines` });
  }
  const maxOutputBytes = clampBound(options.maxOutputBytes, DEFAULT_MAX_OUTPUT_BYTES, MAX_FILE_BYTES_CEILING);
  let outputBytes = 0;
  let lastLine = startLine - 1;
  let truncated = false;
  for (let line = startLine; line <= endLine; line += 1) {
    const from = starts[line - 1] as number;
    const to = line < totalLines ? (starts[line] as number) : text.length;
    const lineBytes = Buffer.byteLength(text.slice(from, to));
    if (outputBytes + lineBytes > maxOutputBytes) {
      truncated = true;
      break;
    }
    outputBytes += lineBytes;
    lastLine = line;
  }
  const sliceStart = totalLines === 0 ? 0 : (starts[startLine - 1] as number);
  const sliceEnd = lastLine < totalLines ? (starts[lastLine] ?? text.length) : text.length;
  return ok({
    path: path.relative,
    text: lastLine < startLine ? '' : text.slice(sliceStart, sliceEnd),
    startLine,
    endLine: Math.max(lastLine, startLine - 1),
    totalLines,
    truncated,
    sizeBytes: bytes.length,
    sha256,
    executable: (mode & 0o111) !== 0,
  });
}
