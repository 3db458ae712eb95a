/**
 * Exact find-and-replace constrained to a line range.
 *
 * The caller names the text to replace and the lines where it expects it.
 * One exact occurrence starting inside the range is replaced. When the file
 * moved since the caller looked, an occurrence starting within
 * `MAX_DRIFT_LINES` lines of the range is accepted and the drift reported.
 * Two or more candidates are an `AmbiguousEdit`; none is an `EditMismatch`
 * whose diagnosis names the closest line and shows a short diff-like hint,
 * so the model can correct itself without re-reading the whole file.
 */
import { err, type Hash32, ok, type Result } from '@crustcore/kernel';
import { writeAtomically } from './atomic-write.js';
import type { FsWriteCap } from './capabilities.js';
import type { ConfinedWritePath } from './confined-path.js';
import type { PathError } from './errors.js';
import { type BinaryFile, decodeText, type FileTooLarge, lineStarts, readFileAt, sha256Of } from './read-file.js';
import { checkWriteAccess } from './tool-access.js';

/** How far (in lines) text may have moved and still be found. */
export const MAX_DRIFT_LINES = 10;
/** Bound on exact occurrences collected (a 1-character `oldText` in a large file). */
const MAX_OCCURRENCES = 10_000;
/** Bound on lines compared when looking for the closest candidate. */
const MAX_DIAGNOSIS_LINES = 20_000;
const MAX_HINT_LINES = 6;
const MAX_HINT_LINE_CHARS = 160;
const MAX_EDIT_TEXT_BYTES = 1024 * 1024;

export interface EditRequest {
  /** Exact text to replace (non-empty). */
  readonly oldText: string;
  readonly newText: string;
  /** 1-based line where `oldText` is expected to start. */
  readonly startLine: number;
  /** Last line where it may start (inclusive); default `startLine`. */
  readonly endLine?: number;
}

export interface EditLocation {
  /** UTF-16 offset of the occurrence. */
  readonly offset: number;
  /** 1-based line where it starts. */
  readonly line: number;
  /** Lines between the range and where it was found (negative: above); 0 inside the range. */
  readonly driftLines: number;
}

export interface EditDiagnosis {
  /** Line most similar to the first non-blank line of `oldText`, or null for an empty file. */
  readonly closestLine: number | null;
  readonly closestText: string | null;
  /** Dice similarity of that line, 0..1. */
  readonly similarity: number;
  /** Lines where the exact text does occur, outside the allowed window (first few). */
  readonly foundAtLines: readonly number[];
  /** A short `-expected` / `+actual` comparison at the closest candidate. */
  readonly hint: string;
}

export type EditLocateError =
  | { readonly _tag: 'InvalidEdit'; readonly message: string }
  | { readonly _tag: 'AmbiguousEdit'; readonly message: string; readonly lines: readonly number[] }
  | { readonly _tag: 'EditMismatch'; readonly message: string; readonly diagnosis: EditDiagnosis };

export type EditError = PathError | FileTooLarge | BinaryFile | (EditLocateError & { readonly path: string });

export interface EditOutcome {
  readonly path: string;
  /** Line where the replaced text started. */
  readonly line: number;
  readonly driftLines: number;
  readonly sha256: Hash32;
}

function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= offset) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}

function bigrams(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (let index = 0; index + 1 < text.length; index += 1) {
    const pair = text.slice(index, index + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  return counts;
}

/** Sørensen–Dice similarity over character bigrams of trimmed lines. */
export function lineSimilarity(left: string, right: string): number {
  const a = left.trim();
  const b = right.trim();
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const leftPairs = bigrams(a);
  let shared = 0;
  for (const [pair, count] of bigrams(b)) shared += Math.min(count, leftPairs.get(pair) ?? 0);
  return (2 * shared) / (a.length - 1 + (b.length - 1));
}

const clip = (line: string): string =>
  line.length > MAX_HINT_LINE_CHARS ? `${line.slice(0, MAX_HINT_LINE_CHARS)}…` : line;

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function diagnose(text: string, request: EditRequest, occurrenceLines: readonly number[]): EditDiagnosis {
  const fileLines = splitLines(text).slice(0, MAX_DIAGNOSIS_LINES);
  const wanted = splitLines(request.oldText);
  const anchorIndex = Math.max(
    0,
    wanted.findIndex((line) => line.trim() !== ''),
  );
  const anchor = wanted[anchorIndex] ?? '';
  let best = -1;
  let bestScore = -1;
  for (let index = 0; index < fileLines.length; index += 1) {
    const score = lineSimilarity(anchor, fileLines[index] as string);
    const closer =
      score === bestScore && Math.abs(index + 1 - request.startLine) < Math.abs(best + 1 - request.startLine);
    if (score > bestScore || closer) {
      best = index;
      bestScore = score;
    }
  }
  if (best < 0) {
    return {
      closestLine: null,
      closestText: null,
      similarity: 0,
      foundAtLines: occurrenceLines.slice(0, 5),
      hint: 'the file is empty',
    };
  }
  const blockStart = Math.max(0, best - anchorIndex);
  const hint = [`@@ closest candidate at line ${blockStart + 1} @@`];
  for (let index = 0; index < Math.min(wanted.length, MAX_HINT_LINES); index += 1) {
    const expected = wanted[index] as string;
    const actual = fileLines[blockStart + index];
    if (actual === expected) hint.push(`  ${clip(expected)}`);
    else {
      hint.push(`- ${clip(expected)}`);
      hint.push(actual === undefined ? '+ (end of file)' : `+ ${clip(actual)}`);
    }
  }
  if (wanted.length > MAX_HINT_LINES) hint.push(`  … ${wanted.length - MAX_HINT_LINES} more expected lines`);
  return {
    closestLine: best + 1,
    closestText: clip(fileLines[best] as string),
    similarity: Math.round(bestScore * 1000) / 1000,
    foundAtLines: occurrenceLines.slice(0, 5),
    hint: hint.join('\n'),
  };
}

/** Finds where `request.oldText` should be replaced in `text` (pure; no I/O). */
export function locateEdit(text: string, request: EditRequest): Result<EditLocateError, EditLocation> {
  const { oldText, startLine } = request;
  const endLine = request.endLine ?? startLine;
  if (typeof oldText !== 'string' || oldText.length === 0) {
    return err({ _tag: 'InvalidEdit', message: 'oldText must not be empty' });
  }
  if (!Number.isSafeInteger(startLine) || !Number.isSafeInteger(endLine) || startLine < 1 || endLine < startLine) {
    return err({
      _tag: 'InvalidEdit',
      message: 'startLine/endLine must be 1-based integers with endLine >= startLine',
    });
  }
  if (oldText === request.newText) return err({ _tag: 'InvalidEdit', message: 'oldText and newText are identical' });
  const starts = lineStarts(text);
  const occurrences: { offset: number; line: number }[] = [];
  for (let offset = text.indexOf(oldText); offset !== -1; offset = text.indexOf(oldText, offset + 1)) {
    occurrences.push({ offset, line: lineOf(starts, offset) });
    if (occurrences.length >= MAX_OCCURRENCES) break;
  }
  const inRange = occurrences.filter(({ line }) => line >= startLine && line <= endLine);
  if (inRange.length === 1) {
    const only = inRange[0] as { offset: number; line: number };
    return ok({ offset: only.offset, line: only.line, driftLines: 0 });
  }
  if (inRange.length > 1) {
    return err({
      _tag: 'AmbiguousEdit',
      message: `oldText occurs ${inRange.length} times in lines ${startLine}-${endLine}; include more context`,
      lines: inRange.map(({ line }) => line),
    });
  }
  const nearby = occurrences.filter(
    ({ line }) => line >= startLine - MAX_DRIFT_LINES && line <= endLine + MAX_DRIFT_LINES,
  );
  if (nearby.length === 1) {
    const only = nearby[0] as { offset: number; line: number };
    return ok({
      offset: only.offset,
      line: only.line,
      driftLines: only.line < startLine ? only.line - startLine : only.line - endLine,
    });
  }
  if (nearby.length > 1) {
    return err({
      _tag: 'AmbiguousEdit',
      message: `oldText is not in lines ${startLine}-${endLine} and occurs ${nearby.length} times within ${MAX_DRIFT_LINES} lines of them`,
      lines: nearby.map(({ line }) => line),
    });
  }
  const diagnosis = diagnose(
    text,
    request,
    occurrences.map(({ line }) => line),
  );
  const elsewhere =
    occurrences.length > 0
      ? `; it occurs at line ${occurrences[0]?.line}, more than ${MAX_DRIFT_LINES} lines away`
      : `; closest candidate is line ${diagnosis.closestLine ?? '-'}`;
  return err({
    _tag: 'EditMismatch',
    message: `oldText not found at lines ${startLine}-${endLine} (±${MAX_DRIFT_LINES})${elsewhere}`,
    diagnosis,
  });
}

/** Replaces one exact occurrence of `oldText` near the given lines; keeps the file's permission bits. */
export function editText(
  cap: FsWriteCap,
  path: ConfinedWritePath,
  request: EditRequest,
  options: { readonly maxFileBytes?: number } = {},
): Result<EditError, EditOutcome> {
  const access = checkWriteAccess(cap, path);
  if (access !== null) return err(access);
  if (
    typeof request.newText !== 'string' ||
    typeof request.oldText !== 'string' ||
    request.oldText.length + request.newText.length > MAX_EDIT_TEXT_BYTES
  ) {
    return err({
      _tag: 'InvalidEdit',
      path: path.relative,
      message: `oldText and newText must be strings under ${MAX_EDIT_TEXT_BYTES} characters in total`,
    });
  }
  const file = readFileAt(path.root, path.relative, options.maxFileBytes);
  if (file._tag === 'Left') return file;
  const text = decodeText(file.right.bytes);
  if (text === null)
    return err({ _tag: 'BinaryFile', path: path.relative, message: 'file is binary (NUL byte or invalid UTF-8)' });
  const located = locateEdit(text, request);
  if (located._tag === 'Left') return err({ ...located.left, path: path.relative });
  const { offset, line, driftLines } = located.right;
  const updated = text.slice(0, offset) + request.newText + text.slice(offset + request.oldText.length);
  const bytes = Buffer.from(updated, 'utf8');
  const written = writeAtomically(path.root, path.relative, bytes, path.relative, {
    createParents: false,
    mode: null,
    durable: true,
  });
  if (written._tag === 'Left') return written;
  return ok({ path: path.relative, line, driftLines, sha256: sha256Of(bytes) });
}
