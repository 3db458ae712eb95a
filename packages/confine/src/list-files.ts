/**
 * Bounded directory listing and glob walking. Directories are opened one
 * no-follow step at a time through descriptors, so a symlink is reported as a
 * symlink and never entered; `.git` and `node_modules` are skipped by name
 * unless the caller asks otherwise.
 */
import { type Dirent, lstatSync, opendirSync } from 'node:fs';
import { err, ok, type Result } from '@crustcore/kernel';
import type { FsReadCap } from './capabilities.js';
import type { ConfinedReadPath } from './confined-path.js';
import { closeQuietly, descriptorPath, openDirectoryAt, openDirectoryForRead } from './descriptor-walk.js';
import type { PathError } from './errors.js';
import { type EntryKind, entryKind } from './file-kind.js';
import { compileGlob, type InvalidGlob, staticPrefix } from './glob-pattern.js';
import { MAX_PATH_DEPTH } from './path-resolver.js';
import { clampBound } from './read-file.js';
import { checkReadAccess, requireReadCap } from './tool-access.js';

/** Names skipped by listings, globs and searches unless the caller passes its own list. */
export const DEFAULT_SKIPPED_NAMES: readonly string[] = Object.freeze(['.git', 'node_modules']);
export const DEFAULT_MAX_ENTRIES = 1000;
export const DEFAULT_MAX_VISITED_ENTRIES = 100_000;
const MAX_ENTRIES_CEILING = 1_000_000;

export interface DirEntry {
  readonly name: string;
  readonly kind: EntryKind;
  readonly sizeBytes: number;
  readonly executable: boolean;
}

export interface DirListing {
  readonly path: string;
  /** Sorted by name (UTF-16 code unit order). */
  readonly entries: readonly DirEntry[];
  /** True when `maxEntries` stopped the listing (the kept subset is then arbitrary). */
  readonly truncated: boolean;
}

export interface ListDirOptions {
  /** Default 1000. */
  readonly maxEntries?: number;
  /** Entry names left out; default `.git`, `node_modules`. */
  readonly skipNames?: readonly string[];
}

const byName = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0);

/** Reads up to `limit` entry names of an open directory descriptor. */
function readEntries(dirFd: number, limit: number): { entries: Dirent[]; complete: boolean } {
  const dir = opendirSync(descriptorPath(dirFd));
  const entries: Dirent[] = [];
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      if (entries.length >= limit) return { entries, complete: false };
      entries.push(entry);
    }
    return { entries, complete: true };
  } finally {
    dir.closeSync();
  }
}

/** Lists one directory. */
export function listDir(
  cap: FsReadCap,
  path: ConfinedReadPath,
  options: ListDirOptions = {},
): Result<PathError, DirListing> {
  const access = checkReadAccess(cap, path);
  if (access !== null) return err(access);
  const maxEntries = clampBound(options.maxEntries, DEFAULT_MAX_ENTRIES, MAX_ENTRIES_CEILING);
  const skip = new Set(options.skipNames ?? DEFAULT_SKIPPED_NAMES);
  const opened = openDirectoryForRead(path.root, path.relative, path.relative);
  if (opened._tag === 'Left') return opened;
  const dirFd = opened.right;
  try {
    const entries: DirEntry[] = [];
    let truncated = false;
    const dir = opendirSync(descriptorPath(dirFd));
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (skip.has(entry.name)) continue;
        if (entries.length >= maxEntries) {
          truncated = true;
          break;
        }
        const stats = lstatSync(descriptorPath(dirFd, entry.name), { throwIfNoEntry: false });
        if (stats === undefined) continue; // Removed while listing.
        entries.push({
          name: entry.name,
          kind: entryKind(stats),
          sizeBytes: stats.size,
          executable: stats.isFile() && (stats.mode & 0o111) !== 0,
        });
      }
    } finally {
      dir.closeSync();
    }
    entries.sort((left, right) => byName(left.name, right.name));
    return ok({ path: path.relative, entries, truncated });
  } finally {
    closeQuietly(dirFd);
  }
}

export interface GlobOptions {
  /** Default 1000 matches. */
  readonly maxResults?: number;
  /** Bound on directory entries looked at (default 100,000). */
  readonly maxVisitedEntries?: number;
  /** Names never entered or matched; default `.git`, `node_modules`. */
  readonly skipNames?: readonly string[];
}

export interface GlobMatch {
  /** Root-relative path. */
  readonly path: string;
  readonly kind: EntryKind;
}

export interface GlobResult {
  /** In walk order: depth first, names sorted in each directory. */
  readonly matches: readonly GlobMatch[];
  readonly truncated: boolean;
  readonly visitedEntries: number;
}

function direntKind(entry: Dirent): EntryKind {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFIFO()) return 'fifo';
  if (entry.isSocket()) return 'socket';
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'device';
  return 'other';
}

/** A bounded, sorted, depth-first walk under a verified directory descriptor. */
export interface WalkVisitor {
  /** Called for every non-skipped entry; return false to stop the whole walk. */
  readonly visit: (relative: string, kind: EntryKind, dirFd: number, name: string) => boolean;
}

export interface WalkLimits {
  readonly maxVisitedEntries: number;
  readonly skipNames: ReadonlySet<string>;
}

export interface WalkOutcome {
  readonly visitedEntries: number;
  /** False when the visit bound (or the visitor) stopped the walk early. */
  readonly complete: boolean;
}

/** Walks from `dirFd` (whose root-relative path is `prefix`); does not close `dirFd`. */
export function walkTree(dirFd: number, prefix: string, limits: WalkLimits, visitor: WalkVisitor): WalkOutcome {
  let visited = 0;
  let stopped = false;
  const recurse = (fd: number, relative: string, depth: number): void => {
    const budget = limits.maxVisitedEntries - visited;
    if (budget <= 0) {
      stopped = true;
      return;
    }
    const { entries, complete } = readEntries(fd, budget);
    if (!complete) stopped = true;
    entries.sort((left, right) => byName(left.name, right.name));
    for (const entry of entries) {
      if (visited >= limits.maxVisitedEntries) {
        stopped = true;
        return;
      }
      visited += 1;
      if (limits.skipNames.has(entry.name)) continue;
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      const kind = direntKind(entry);
      if (!visitor.visit(child, kind, fd, entry.name)) {
        stopped = true;
        return;
      }
      if (kind === 'directory' && depth < MAX_PATH_DEPTH) {
        const opened = openDirectoryAt(fd, entry.name, child);
        if (opened._tag === 'Left') continue; // Swapped or removed while walking: not followed.
        try {
          recurse(opened.right, child, depth + 1);
        } finally {
          closeQuietly(opened.right);
        }
        if (stopped) return;
      }
    }
  };
  recurse(dirFd, prefix, prefix === '' ? 0 : prefix.split('/').length);
  return { visitedEntries: visited, complete: !stopped };
}

/** Opens the directory `components` under the root without following symlinks; null when absent. */
function openPrefix(cap: FsReadCap, components: readonly string[]): number | null {
  const rootDir = openDirectoryForRead(cap.root, '', '');
  if (rootDir._tag === 'Left') return null;
  let fd = rootDir.right;
  for (const name of components) {
    const next = openDirectoryAt(fd, name, name);
    closeQuietly(fd);
    if (next._tag === 'Left') return null;
    fd = next.right;
  }
  return fd;
}

/** Finds root-relative paths matching `pattern` under `cap.root`. */
export function glob(
  cap: FsReadCap,
  pattern: string,
  options: GlobOptions = {},
): Result<InvalidGlob | PathError, GlobResult> {
  requireReadCap(cap);
  const matcher = compileGlob(pattern);
  if (matcher._tag === 'Left') return matcher;
  const maxResults = clampBound(options.maxResults, DEFAULT_MAX_ENTRIES, MAX_ENTRIES_CEILING);
  const limits: WalkLimits = {
    maxVisitedEntries: clampBound(options.maxVisitedEntries, DEFAULT_MAX_VISITED_ENTRIES, MAX_ENTRIES_CEILING),
    skipNames: new Set(options.skipNames ?? DEFAULT_SKIPPED_NAMES),
  };
  const prefix = staticPrefix(pattern);
  const startFd = openPrefix(cap, prefix);
  if (startFd === null) return ok({ matches: [], truncated: false, visitedEntries: 0 });
  const matches: GlobMatch[] = [];
  let full = false;
  try {
    const outcome = walkTree(startFd, prefix.join('/'), limits, {
      visit: (relative, kind) => {
        if (!matcher.right.test(relative)) return true;
        if (matches.length >= maxResults) {
          full = true;
          return false;
        }
        matches.push({ path: relative, kind });
        return true;
      },
    });
    return ok({ matches, truncated: full || !outcome.complete, visitedEntries: outcome.visitedEntries });
  } finally {
    closeQuietly(startFd);
  }
}
