/**
 * Names for what a directory entry is, from an lstat. Special files (FIFOs,
 * sockets, devices) are never opened by tools: reading a FIFO blocks, and
 * devices reach hardware.
 */
import type { Stats } from 'node:fs';

export type EntryKind = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device' | 'other';

/** What kind of entry an lstat describes. */
export function entryKind(stats: Stats): EntryKind {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'other';
}

/** A readable name for a special file, or null for regular files, directories and symlinks. */
export function specialFileKind(stats: Stats): string | null {
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  return null;
}
