/**
 * The path resolver: the one place that turns a caller's string into a
 * `ConfinedReadPath` or `ConfinedWritePath`.
 *
 * Steps: reject NUL and oversize input; reject absolute paths (reads may name
 * a configured read-only root); normalize `.`/`..` lexically and reject any
 * climb above the root; resolve the real path of the deepest existing
 * ancestor (so a symlink at ANY component is followed by the kernel, not by
 * string logic); reject a result outside the root; for writes also refuse
 * `.git`, directories, special files and multiply-linked files.
 *
 * The answer is a snapshot. Tools re-check against the live file system with
 * no-follow opens and descriptor verification (see `descriptor-walk.ts`).
 */
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { err, ok, type Result } from '@crustcore/kernel';
import type { FsReadCap, FsWriteCap } from './capabilities.js';
import { ConfinedReadPath, ConfinedWritePath, resolverMintKey } from './confined-path.js';
import { type PathError, pathError, pathErrorFromErrno } from './errors.js';
import { specialFileKind } from './file-kind.js';
import { requireReadCap, requireWriteCap } from './tool-access.js';
import type { WorktreeRoot } from './worktree-root.js';

/** Whole-path bound in UTF-8 bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;
/** Per-component bound in UTF-8 bytes (Linux NAME_MAX). */
export const MAX_COMPONENT_BYTES = 255;
/** Bound on the number of components after normalization. */
export const MAX_PATH_DEPTH = 256;

/** Git's metadata directory (or, in linked worktrees, file). Compared case-insensitively. */
const GIT_METADATA_NAME = '.git';

/** True when any component is `.git` in any letter case (case-folding file systems see them as one). */
export function isProtectedComponents(components: readonly string[]): boolean {
  for (const component of components) {
    if (component.length === 4 && component.toLowerCase() === GIT_METADATA_NAME) return true;
  }
  return false;
}

function checkInput(input: string): PathError | null {
  if (typeof input !== 'string') return pathError('PathEmpty', '', 'path must be a string');
  if (input.includes('\u0000')) return pathError('PathNulByte', input, 'path contains a NUL byte');
  // Cheap character bound first; the byte bound only matters near the limit.
  if (
    input.length > MAX_PATH_BYTES ||
    (input.length * 3 > MAX_PATH_BYTES && Buffer.byteLength(input) > MAX_PATH_BYTES)
  ) {
    return pathError('PathTooLong', input, `path longer than ${MAX_PATH_BYTES} bytes`);
  }
  return null;
}

/**
 * Splits and normalizes a path lexically: drops empty and `.` components,
 * applies `..`, and refuses to climb above the start. `input` may be
 * absolute; the leading `/` is ignored here (callers decide what it means).
 */
export function normalizeComponents(input: string): Result<PathError, string[]> {
  const problem = checkInput(input);
  if (problem !== null) return err(problem);
  const out: string[] = [];
  for (const component of input.split('/')) {
    if (component === '' || component === '.') continue;
    if (component === '..') {
      if (out.length === 0) return err(pathError('PathEscape', input, '`..` leaves the root'));
      out.pop();
      continue;
    }
    if (component.length * 3 > MAX_COMPONENT_BYTES && Buffer.byteLength(component) > MAX_COMPONENT_BYTES) {
      return err(pathError('PathTooLong', input, `a component is longer than ${MAX_COMPONENT_BYTES} bytes`));
    }
    out.push(component);
  }
  if (out.length > MAX_PATH_DEPTH) return err(pathError('PathTooLong', input, `deeper than ${MAX_PATH_DEPTH}`));
  return ok(out);
}

interface Canonical {
  /** Canonical relative path ('' = the root). */
  readonly relative: string;
  /** lstat of the canonical path, or null when it does not exist (writes only). */
  readonly stats: Stats | null;
}

function realpathOrError(path: string, input: string): Result<PathError, string> {
  try {
    return ok(realpathSync.native(path));
  } catch (error) {
    return err(pathErrorFromErrno(error, input, 'resolving'));
  }
}

/**
 * Finds where `components` really lead under `root`. When the full path does
 * not exist and `allowMissing`, resolves the deepest existing ancestor and
 * appends the missing tail (whose first component must not be a dangling symlink).
 */
function canonicalize(
  root: WorktreeRoot,
  components: readonly string[],
  input: string,
  allowMissing: boolean,
): Result<PathError, Canonical> {
  const full = realpathOrError(root.join(components.join('/')), input);
  let real: string;
  let exists = true;
  if (full._tag === 'Right') {
    real = full.right;
  } else if (full.left._tag !== 'NotFound' || !allowMissing) {
    return full;
  } else {
    exists = false;
    let depth = components.length - 1;
    let ancestor: string | null = null;
    for (; depth >= 0; depth -= 1) {
      const attempt = realpathOrError(root.join(components.slice(0, depth).join('/')), input);
      if (attempt._tag === 'Right') {
        ancestor = attempt.right;
        break;
      }
      if (attempt.left._tag !== 'NotFound') return attempt;
    }
    if (ancestor === null) return err(pathError('RootChanged', input, 'the root no longer exists'));
    const firstMissing = components[depth] as string;
    const joined = ancestor === '/' ? `/${firstMissing}` : `${ancestor}/${firstMissing}`;
    const leftover = lstatSync(joined, { throwIfNoEntry: false });
    if (leftover?.isSymbolicLink() === true) {
      return err(pathError('DanglingSymlink', input, `'${firstMissing}' is a symlink to a missing target`));
    }
    if (leftover !== undefined) return err(pathError('RaceDetected', input, 'path appeared while resolving'));
    real = `${joined}${depth + 1 < components.length ? `/${components.slice(depth + 1).join('/')}` : ''}`;
  }
  const relative = root.relativeOf(real);
  if (relative === null) return err(pathError('SymlinkEscape', input, 'a symlink leads outside the root'));
  if (!exists) return ok({ relative, stats: null });
  try {
    return ok({ relative, stats: lstatSync(real) });
  } catch (error) {
    return err(pathErrorFromErrno(error, input, 'inspecting'));
  }
}

interface Canonicalizable {
  readonly root: WorktreeRoot;
  readonly components: readonly string[];
}

/** Chooses the root an input names: the worktree for relative input, a read-only root for absolute. */
function rootFor(cap: FsReadCap, input: string, components: readonly string[]): Result<PathError, Canonicalizable> {
  if (!input.startsWith('/')) return ok({ root: cap.root, components });
  const absolute = `/${components.join('/')}`;
  for (const candidate of cap.readOnlyRoots) {
    const relative = candidate.relativeOf(absolute);
    if (relative !== null) return ok({ root: candidate, components: relative === '' ? [] : relative.split('/') });
  }
  return err(pathError('PathAbsolute', input, 'absolute paths are refused (no read-only root covers it)'));
}

/**
 * Resolves `input` for reading. Relative paths resolve under `cap.root`;
 * absolute paths only under one of `cap.readOnlyRoots`. The target must exist
 * and must not be a FIFO, socket or device.
 */
export function resolveReadPath(cap: FsReadCap, input: string): Result<PathError, ConfinedReadPath> {
  requireReadCap(cap);
  const normalized = normalizeComponents(input);
  if (normalized._tag === 'Left') return normalized;
  const target = rootFor(cap, input, normalized.right);
  if (target._tag === 'Left') return target;
  const { root, components } = target.right;
  const canonical = canonicalize(root, components, input, false);
  if (canonical._tag === 'Left') return canonical;
  const stats = canonical.right.stats;
  const special = stats === null ? null : specialFileKind(stats);
  if (special !== null) return err(pathError('SpecialFileRejected', input, `refusing to read a ${special}`));
  return ok(new ConfinedReadPath(resolverMintKey(), root, canonical.right.relative));
}

/**
 * Resolves `input` for writing under `cap.root`. Refuses absolute paths,
 * escapes, `.git` (before and after symlink resolution), directories, special
 * files and files with more than one hard link. The target may not exist yet.
 */
export function resolveWritePath(cap: FsWriteCap, input: string): Result<PathError, ConfinedWritePath> {
  requireWriteCap(cap);
  if (typeof input === 'string' && input.startsWith('/')) {
    return err(pathError('PathAbsolute', input, 'writes take paths relative to the worktree root'));
  }
  const normalized = normalizeComponents(input);
  if (normalized._tag === 'Left') return normalized;
  const components = normalized.right;
  if (components.length === 0) return err(pathError('PathEmpty', input, 'the root itself is not a file'));
  if (isProtectedComponents(components)) {
    return err(pathError('ProtectedPath', input, 'git metadata is read-only for tools'));
  }
  const canonical = canonicalize(cap.root, components, input, true);
  if (canonical._tag === 'Left') return canonical;
  const { relative, stats } = canonical.right;
  if (relative === '') return err(pathError('IsDirectory', input, 'the root itself is not a file'));
  if (isProtectedComponents(relative.split('/'))) {
    return err(pathError('ProtectedPath', input, 'a symlink leads into git metadata'));
  }
  if (stats !== null) {
    const refusal = refuseWriteTarget(stats, input);
    if (refusal !== null) return err(refusal);
  }
  return ok(new ConfinedWritePath(resolverMintKey(), cap.root, relative));
}

/** Why an existing entry may not be replaced by a tool write, or null when it may. */
export function refuseWriteTarget(stats: Stats, input: string): PathError | null {
  if (stats.isDirectory()) return pathError('IsDirectory', input, 'is a directory');
  if (stats.isSymbolicLink()) return pathError('RaceDetected', input, 'a symlink appeared at the target');
  const special = specialFileKind(stats);
  if (special !== null) return pathError('SpecialFileRejected', input, `refusing to write a ${special}`);
  if (stats.nlink > 1) {
    return pathError('HardLinkRejected', input, `the file has ${stats.nlink} hard links; writing would alias them`);
  }
  return null;
}
