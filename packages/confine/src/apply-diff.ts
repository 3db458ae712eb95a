/**
 * Applying a unified diff, all or nothing.
 *
 * Plan first: every path goes through the write resolver, every file is read,
 * every hunk is matched (exact context, no fuzz; a hunk may sit at a
 * different line than its header says, nearest position wins, in order), and
 * the resulting contents are held in memory. Only when every hunk of every
 * file fits does anything touch the disk; each file is then replaced with the
 * verified atomic write, and if one of those fails, the ones already done are
 * restored from the copies taken during planning.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import { DEFAULT_FILE_MODE, EXECUTABLE_FILE_MODE, removeAtomically, writeAtomically } from './atomic-write.js';
import type { FsWriteCap } from './capabilities.js';
import type { PathError } from './errors.js';
import { resolveReadPath, resolveWritePath } from './path-resolver.js';
import { decodeText, type FileTooLarge, readFileAt } from './read-file.js';
import { requireWriteCap } from './tool-access.js';
import {
  type DiffParseError,
  type FileChangeKind,
  type FilePatch,
  type Hunk,
  parseUnifiedDiff,
} from './unified-diff.js';
import type { WorktreeRoot } from './worktree-root.js';

const GIT_MODE_REGULAR = 0o100644;
const GIT_MODE_EXECUTABLE = 0o100755;

export interface HunkMismatch {
  readonly _tag: 'HunkMismatch';
  readonly path: string;
  /** 1-based index of the failing hunk within its file. */
  readonly hunkIndex: number;
  readonly header: string;
  readonly message: string;
}

export interface PatchConflict {
  readonly _tag: 'PatchConflict';
  readonly path: string;
  readonly message: string;
}

export interface UnsupportedPatch {
  readonly _tag: 'UnsupportedPatch';
  readonly path: string;
  readonly message: string;
}

export interface DiffWriteFailed {
  readonly _tag: 'DiffWriteFailed';
  readonly path: string;
  readonly message: string;
  readonly cause: PathError;
  /** True when every file already written was restored. */
  readonly rolledBack: boolean;
}

export type ApplyDiffError =
  | DiffParseError
  | PathError
  | FileTooLarge
  | HunkMismatch
  | PatchConflict
  | UnsupportedPatch
  | DiffWriteFailed;

export interface AppliedFile {
  readonly kind: FileChangeKind;
  /** Destination (or, for deletes, the removed file), root-relative. */
  readonly path: string;
  readonly oldPath: string | null;
  /** Per hunk: lines between the header's position and where it matched. */
  readonly hunkOffsets: readonly number[];
  /** Permission bits written, or null for deletes. */
  readonly mode: number | null;
}

export interface DiffApplied {
  readonly files: readonly AppliedFile[];
}

/** A hunk-level failure from the pure applier. */
export interface HunkFailure {
  readonly hunkIndex: number;
  readonly header: string;
  readonly message: string;
}

interface SplitText {
  readonly lines: string[];
  readonly endsWithNewline: boolean;
}

function splitText(text: string): SplitText {
  if (text === '') return { lines: [], endsWithNewline: true };
  const lines = text.split('\n');
  const endsWithNewline = lines[lines.length - 1] === '';
  if (endsWithNewline) lines.pop();
  return { lines, endsWithNewline };
}

function matchesAt(lines: readonly string[], position: number, expected: readonly string[]): boolean {
  if (position < 0 || position + expected.length > lines.length) return false;
  for (let index = 0; index < expected.length; index += 1) {
    if (lines[position + index] !== expected[index]) return false;
  }
  return true;
}

const clip = (line: string | undefined): string =>
  line === undefined ? '(end of file)' : line.length > 120 ? `${line.slice(0, 120)}…` : line;

/** Explains the first difference between the hunk's old side and the file at `position`. */
function firstDifference(lines: readonly string[], position: number, expected: readonly string[]): string {
  for (let index = 0; index < expected.length; index += 1) {
    const actual = lines[position + index];
    if (actual !== expected[index]) {
      return `at line ${position + index + 1} expected ${JSON.stringify(clip(expected[index]))}, found ${JSON.stringify(clip(actual))}`;
    }
  }
  return 'the end-of-file newline differs';
}

/**
 * Applies hunks to a text (pure). Exact context; each hunk matches at the
 * position nearest to where its header (shifted by the previous hunk's
 * offset) puts it, never before the previous hunk's end.
 */
export function applyHunks(
  original: string,
  hunks: readonly Hunk[],
): Result<HunkFailure, { readonly text: string; readonly offsets: readonly number[] }> {
  const { lines, endsWithNewline } = splitText(original);
  const output: string[] = [];
  const offsets: number[] = [];
  let cursor = 0;
  let lastOffset = 0;
  let finalNewline = endsWithNewline;
  for (let hunkIndex = 0; hunkIndex < hunks.length; hunkIndex += 1) {
    const hunk = hunks[hunkIndex] as Hunk;
    const oldLines = hunk.lines.filter((line) => line.op !== '+').map((line) => line.text);
    const newLines = hunk.lines.filter((line) => line.op !== '-').map((line) => line.text);
    const base = (hunk.oldCount === 0 ? hunk.oldStart : hunk.oldStart - 1) + lastOffset;
    const fits = (position: number): boolean => {
      if (position < cursor || !matchesAt(lines, position, oldLines)) return false;
      const atEnd = position + oldLines.length === lines.length;
      // The "\ No newline" marker must agree with the file, or the hunk is about a different end.
      if (hunk.oldEndsWithoutNewline) return atEnd && !endsWithNewline && lines.length > 0;
      return !(atEnd && oldLines.length > 0 && !endsWithNewline);
    };
    let found = -1;
    const span = Math.max(lines.length + 1, 1);
    for (let distance = 0; distance <= span && found < 0; distance += 1) {
      if (fits(base - distance)) found = base - distance;
      else if (distance > 0 && fits(base + distance)) found = base + distance;
    }
    if (found < 0) {
      const where = Math.min(Math.max(base, cursor), lines.length);
      return err({
        hunkIndex: hunkIndex + 1,
        header: hunk.header,
        message: `context does not match anywhere after line ${cursor}; ${firstDifference(lines, where, oldLines)}`,
      });
    }
    for (let index = cursor; index < found; index += 1) output.push(lines[index] as string);
    for (const line of newLines) output.push(line);
    cursor = found + oldLines.length;
    lastOffset = found - (hunk.oldCount === 0 ? hunk.oldStart : hunk.oldStart - 1);
    offsets.push(lastOffset);
    if (cursor === lines.length) finalNewline = !hunk.newEndsWithoutNewline;
  }
  for (let index = cursor; index < lines.length; index += 1) output.push(lines[index] as string);
  const text = output.length === 0 ? '' : output.join('\n') + (finalNewline ? '\n' : '');
  return ok({ text, offsets });
}

/** One planned disk change, with what is needed to undo it. */
interface PlannedWrite {
  readonly op: 'write';
  readonly relative: string;
  readonly bytes: Uint8Array;
  readonly mode: number;
  /** Contents and bits before, or null when the file did not exist. */
  readonly before: { readonly bytes: Uint8Array; readonly mode: number } | null;
}

interface PlannedRemove {
  readonly op: 'remove';
  readonly relative: string;
  readonly before: { readonly bytes: Uint8Array; readonly mode: number };
}

type PlannedChange = PlannedWrite | PlannedRemove;

function modeFromGit(gitMode: number | null, path: string): Result<UnsupportedPatch, number | null> {
  if (gitMode === null) return ok(null);
  if (gitMode === GIT_MODE_EXECUTABLE) return ok(EXECUTABLE_FILE_MODE);
  if (gitMode === GIT_MODE_REGULAR) return ok(DEFAULT_FILE_MODE);
  return err({
    _tag: 'UnsupportedPatch',
    path,
    message: `file mode ${gitMode.toString(8)} (symlink or submodule) cannot be applied by tools`,
  });
}

interface Existing {
  readonly bytes: Uint8Array;
  readonly mode: number;
}

function readExisting(root: WorktreeRoot, relative: string): Result<PathError | FileTooLarge, Existing | null> {
  const read = readFileAt(root, relative, undefined);
  if (read._tag === 'Right') return ok({ bytes: read.right.bytes, mode: read.right.mode });
  return read.left._tag === 'NotFound' ? ok(null) : read;
}

interface FilePlan {
  readonly changes: PlannedChange[];
  readonly applied: AppliedFile;
}

function patchedContent(
  patch: FilePatch,
  source: Existing,
  path: string,
): Result<HunkMismatch | UnsupportedPatch, { bytes: Uint8Array; offsets: readonly number[] }> {
  if (patch.hunks.length === 0) return ok({ bytes: source.bytes, offsets: [] });
  const text = decodeText(source.bytes);
  if (text === null) return err({ _tag: 'UnsupportedPatch', path, message: 'binary files cannot be patched by hunks' });
  const applied = applyHunks(text, patch.hunks);
  if (applied._tag === 'Left') {
    return err({
      _tag: 'HunkMismatch',
      path,
      hunkIndex: applied.left.hunkIndex,
      header: applied.left.header,
      message: `hunk ${applied.left.hunkIndex} (${applied.left.header}) of ${path} does not apply: ${applied.left.message}`,
    });
  }
  return ok({ bytes: Buffer.from(applied.right.text, 'utf8'), offsets: applied.right.offsets });
}

function planFile(cap: FsWriteCap, patch: FilePatch): Result<ApplyDiffError, FilePlan> {
  const label = patch.newPath ?? patch.oldPath ?? '';
  if (patch.binary) return err({ _tag: 'UnsupportedPatch', path: label, message: 'binary patches are not supported' });
  const newMode = modeFromGit(patch.newMode, label);
  if (newMode._tag === 'Left') return newMode;
  const oldMode = modeFromGit(patch.oldMode, label);
  if (oldMode._tag === 'Left') return oldMode;
  const root = cap.root;

  if (patch.kind === 'delete') {
    const target = resolveWritePath(cap, patch.oldPath as string);
    if (target._tag === 'Left') return target;
    const existing = readExisting(root, target.right.relative);
    if (existing._tag === 'Left') return existing;
    if (existing.right === null)
      return err({ _tag: 'PatchConflict', path: label, message: 'the file to delete does not exist' });
    const remaining = patchedContent(patch, existing.right, label);
    if (remaining._tag === 'Left') return remaining;
    if (remaining.right.bytes.length > 0) {
      return err({ _tag: 'PatchConflict', path: label, message: 'the delete patch does not remove the whole file' });
    }
    return ok({
      changes: [{ op: 'remove', relative: target.right.relative, before: existing.right }],
      applied: {
        kind: 'delete',
        path: target.right.relative,
        oldPath: null,
        hunkOffsets: remaining.right.offsets,
        mode: null,
      },
    });
  }

  const destination = resolveWritePath(cap, patch.newPath as string);
  if (destination._tag === 'Left') return destination;
  const destinationExisting = readExisting(root, destination.right.relative);
  if (destinationExisting._tag === 'Left') return destinationExisting;

  let source: Existing;
  let sourceRelative: string | null = null;
  if (patch.kind === 'create') {
    if (destinationExisting.right !== null) {
      return err({ _tag: 'PatchConflict', path: label, message: 'the file to create already exists' });
    }
    source = { bytes: new Uint8Array(0), mode: DEFAULT_FILE_MODE };
  } else if (patch.kind === 'modify') {
    if (destinationExisting.right === null) {
      return err({ _tag: 'PatchConflict', path: label, message: 'the file to modify does not exist' });
    }
    source = destinationExisting.right;
  } else {
    // rename or copy: read the source; the destination must be new.
    const sourcePath =
      patch.kind === 'rename'
        ? resolveWritePath(cap, patch.oldPath as string)
        : resolveReadPath(cap.readCap, patch.oldPath as string);
    if (sourcePath._tag === 'Left') return sourcePath;
    sourceRelative = sourcePath.right.relative;
    if (sourceRelative === destination.right.relative) {
      return err({ _tag: 'PatchConflict', path: label, message: 'source and destination are the same file' });
    }
    if (destinationExisting.right !== null) {
      return err({ _tag: 'PatchConflict', path: label, message: `the ${patch.kind} destination already exists` });
    }
    const existing = readExisting(root, sourceRelative);
    if (existing._tag === 'Left') return existing;
    if (existing.right === null)
      return err({ _tag: 'PatchConflict', path: label, message: `the ${patch.kind} source does not exist` });
    source = existing.right;
  }

  const content = patchedContent(patch, source, label);
  if (content._tag === 'Left') return content;
  const mode = newMode.right ?? source.mode;
  const changes: PlannedChange[] = [
    {
      op: 'write',
      relative: destination.right.relative,
      bytes: content.right.bytes,
      mode,
      before: destinationExisting.right,
    },
  ];
  if (patch.kind === 'rename' && sourceRelative !== null)
    changes.push({ op: 'remove', relative: sourceRelative, before: source });
  return ok({
    changes,
    applied: {
      kind: patch.kind,
      path: destination.right.relative,
      oldPath: sourceRelative,
      hunkOffsets: content.right.offsets,
      mode,
    },
  });
}

function perform(root: WorktreeRoot, change: PlannedChange): Result<PathError, void> {
  if (change.op === 'remove') return removeAtomically(root, change.relative, change.relative);
  const written = writeAtomically(root, change.relative, change.bytes, change.relative, {
    createParents: true,
    mode: change.mode,
    durable: true,
  });
  return written._tag === 'Left' ? written : ok(undefined);
}

function undo(root: WorktreeRoot, change: PlannedChange): boolean {
  const before = change.before;
  const result =
    before === null
      ? removeAtomically(root, change.relative, change.relative)
      : writeAtomically(root, change.relative, before.bytes, change.relative, {
          createParents: true,
          mode: before.mode,
          durable: true,
        });
  return result._tag === 'Right';
}

/** Parses and applies `diffText` under `cap`'s root, all or nothing. */
export function applyUnifiedDiff(cap: FsWriteCap, diffText: string): Result<ApplyDiffError, DiffApplied> {
  requireWriteCap(cap);
  const parsed = parseUnifiedDiff(diffText);
  if (parsed._tag === 'Left') return parsed;
  const changes: PlannedChange[] = [];
  const files: AppliedFile[] = [];
  const touched = new Set<string>();
  for (const patch of parsed.right) {
    const plan = planFile(cap, patch);
    if (plan._tag === 'Left') return plan;
    for (const change of plan.right.changes) {
      if (touched.has(change.relative)) {
        return err({
          _tag: 'PatchConflict',
          path: change.relative,
          message: 'the diff changes this file more than once',
        });
      }
      touched.add(change.relative);
      changes.push(change);
    }
    files.push(plan.right.applied);
  }
  const done: PlannedChange[] = [];
  for (const change of changes) {
    const result = perform(cap.root, change);
    if (result._tag === 'Left') {
      let rolledBack = true;
      for (const finished of done.reverse()) rolledBack = undo(cap.root, finished) && rolledBack;
      return err({
        _tag: 'DiffWriteFailed',
        path: change.relative,
        message: `writing ${change.relative} failed (${result.left._tag}); ${rolledBack ? 'earlier changes were undone' : 'some earlier changes could not be undone'}`,
        cause: result.left,
        rolledBack,
      });
    }
    done.push(change);
  }
  return ok({ files });
}
