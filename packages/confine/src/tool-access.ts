/**
 * The check every tool makes first. A forged capability or path (a plain
 * object shaped like one) is a programming error and throws; a genuine path
 * minted for another root is an expected refusal (`RootMismatch`).
 */
import { FsReadCap, FsWriteCap } from './capabilities.js';
import { ConfinedReadPath, ConfinedWritePath } from './confined-path.js';
import { type PathError, pathError } from './errors.js';

export function checkReadAccess(cap: FsReadCap, path: ConfinedReadPath): PathError | null {
  if (!FsReadCap.is(cap)) throw new TypeError('expected an FsReadCap granted by FsReadCap.grant');
  if (!ConfinedReadPath.is(path)) throw new TypeError('expected a ConfinedReadPath from resolveReadPath');
  return cap.covers(path.root) ? null : pathError('RootMismatch', path.relative, 'the path belongs to another root');
}

export function checkWriteAccess(cap: FsWriteCap, path: ConfinedWritePath): PathError | null {
  if (!FsWriteCap.is(cap)) throw new TypeError('expected an FsWriteCap granted by FsWriteCap.grant');
  if (!ConfinedWritePath.is(path)) throw new TypeError('expected a ConfinedWritePath from resolveWritePath');
  return cap.root.equals(path.root)
    ? null
    : pathError('RootMismatch', path.relative, 'the path belongs to another root');
}

/** Throws unless `cap` is a granted read capability (for tools that take no confined path). */
export function requireReadCap(cap: FsReadCap): void {
  if (!FsReadCap.is(cap)) throw new TypeError('expected an FsReadCap granted by FsReadCap.grant');
}

/** Throws unless `cap` is a granted write capability (for tools that take no confined path). */
export function requireWriteCap(cap: FsWriteCap): void {
  if (!FsWriteCap.is(cap)) throw new TypeError('expected an FsWriteCap granted by FsWriteCap.grant');
}
