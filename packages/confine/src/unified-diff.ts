/**
 * A parser for unified diffs, plain (`--- a/x` / `+++ b/x`) and git-style
 * (`diff --git` with mode, new/deleted, rename and copy headers). It only
 * parses; `apply-diff.ts` decides whether the patch fits the files.
 * Hunk line counts are checked exactly: a hunk that is short or long is a
 * parse error naming the line, not something to guess around.
 */
import { err, ok, type Result } from '@crustcore/kernel';

export interface DiffLine {
  readonly op: ' ' | '-' | '+';
  readonly text: string;
}

export interface Hunk {
  /** The `@@ … @@` line as written. */
  readonly header: string;
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newStart: number;
  readonly newCount: number;
  readonly lines: readonly DiffLine[];
  /** A `\ No newline at end of file` marker follows the old side's last line. */
  readonly oldEndsWithoutNewline: boolean;
  readonly newEndsWithoutNewline: boolean;
}

export type FileChangeKind = 'modify' | 'create' | 'delete' | 'rename' | 'copy';

export interface FilePatch {
  readonly kind: FileChangeKind;
  /** Source path with the `a/` prefix removed; null for a created file. */
  readonly oldPath: string | null;
  /** Destination path with the `b/` prefix removed; null for a deleted file. */
  readonly newPath: string | null;
  /** Git file modes (e.g. 0o100755), null when the diff does not say. */
  readonly oldMode: number | null;
  readonly newMode: number | null;
  readonly hunks: readonly Hunk[];
  /** A binary change (`GIT binary patch` or `Binary files … differ`). */
  readonly binary: boolean;
}

export interface DiffParseError {
  readonly _tag: 'DiffParseError';
  /** 1-based line of the diff where parsing failed. */
  readonly line: number;
  readonly message: string;
}

export const MAX_DIFF_BYTES = 16 * 1024 * 1024;
export const MAX_DIFF_FILES = 1000;
export const MAX_DIFF_HUNKS = 20_000;

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const DEV_NULL = '/dev/null';

const ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** Decodes git's C-style quoted path (`"a/t\303\244b"`); returns the text and the rest of the input. */
export function unquotePath(input: string): { readonly path: string; readonly rest: string } | null {
  if (!input.startsWith('"')) return null;
  const bytes: number[] = [];
  for (let index = 1; index < input.length; index += 1) {
    const char = input[index] as string;
    if (char === '"') return { path: Buffer.from(bytes).toString('utf8'), rest: input.slice(index + 1) };
    if (char !== '\\') {
      for (const byte of Buffer.from(char, 'utf8')) bytes.push(byte);
      continue;
    }
    index += 1;
    const escaped = input[index];
    if (escaped === undefined) return null;
    if (/[0-7]/.test(escaped)) {
      const octal = input.slice(index, index + 3);
      if (!/^[0-7]{3}$/.test(octal)) return null;
      bytes.push(Number.parseInt(octal, 8) & 0xff);
      index += 2;
    } else {
      const code = ESCAPES[escaped];
      if (code === undefined) return null;
      bytes.push(code);
    }
  }
  return null;
}

/** Path from a `---`/`+++` line body: quoted, or up to a tab (timestamps follow tabs). */
function headerPath(body: string): string | null {
  const quoted = unquotePath(body);
  if (quoted !== null) return quoted.path;
  if (body.startsWith('"')) return null;
  const tab = body.indexOf('\t');
  return (tab >= 0 ? body.slice(0, tab) : body).replace(/\r$/, '');
}

function stripPrefix(path: string | null, prefix: 'a/' | 'b/'): string | null {
  if (path === null || path === DEV_NULL) return null;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** The two paths of `diff --git a/X b/Y`, best effort (headers like `rename from` take precedence). */
function gitHeaderPaths(rest: string): { oldPath: string | null; newPath: string | null } {
  const firstQuoted = unquotePath(rest);
  if (firstQuoted !== null) {
    const second = rest.slice(rest.length - firstQuoted.rest.length).trimStart();
    const secondPath = unquotePath(second)?.path ?? second;
    return { oldPath: stripPrefix(firstQuoted.path, 'a/'), newPath: stripPrefix(secondPath, 'b/') };
  }
  // Same path on both sides (the common case): `a/X b/X` splits in the middle.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half)) {
    const left = rest.slice(0, half);
    const right = rest.slice(half + 1);
    if (left.startsWith('a/') && right.startsWith('b/') && left.slice(2) === right.slice(2)) {
      return { oldPath: left.slice(2), newPath: right.slice(2) };
    }
  }
  const split = rest.indexOf(' b/');
  if (rest.startsWith('a/') && split > 0) return { oldPath: rest.slice(2, split), newPath: rest.slice(split + 3) };
  return { oldPath: null, newPath: null };
}

interface PatchDraft {
  git: boolean;
  kind: FileChangeKind | null;
  oldPath: string | null;
  newPath: string | null;
  headerOldPath: string | null;
  headerNewPath: string | null;
  sawFileHeaders: boolean;
  oldIsDevNull: boolean;
  newIsDevNull: boolean;
  oldMode: number | null;
  newMode: number | null;
  hunks: Hunk[];
  binary: boolean;
  startLine: number;
}

function newDraft(git: boolean, startLine: number): PatchDraft {
  return {
    git,
    kind: null,
    oldPath: null,
    newPath: null,
    headerOldPath: null,
    headerNewPath: null,
    sawFileHeaders: false,
    oldIsDevNull: false,
    newIsDevNull: false,
    oldMode: null,
    newMode: null,
    hunks: [],
    binary: false,
    startLine,
  };
}

function parseMode(text: string): number | null {
  return /^[0-7]{6}$/.test(text.trim()) ? Number.parseInt(text.trim(), 8) : null;
}

function finishDraft(draft: PatchDraft): Result<DiffParseError, FilePatch> {
  const oldPath = draft.oldIsDevNull ? null : (draft.oldPath ?? draft.headerOldPath);
  const newPath = draft.newIsDevNull ? null : (draft.newPath ?? draft.headerNewPath);
  let kind: FileChangeKind = draft.kind ?? 'modify';
  if (draft.kind === null) {
    if (draft.oldIsDevNull) kind = 'create';
    else if (draft.newIsDevNull) kind = 'delete';
  }
  const fail = (message: string): Result<DiffParseError, FilePatch> =>
    err({ _tag: 'DiffParseError', line: draft.startLine, message });
  if (kind === 'create' && newPath === null) return fail('a created file needs a path');
  if (kind === 'delete' && oldPath === null) return fail('a deleted file needs a path');
  if ((kind === 'modify' || kind === 'rename' || kind === 'copy') && (oldPath === null || newPath === null)) {
    return fail('file paths are missing');
  }
  if (kind === 'create' && draft.hunks.some((hunk) => hunk.oldCount !== 0)) {
    return fail('a created file cannot have old lines');
  }
  if (kind === 'delete' && draft.hunks.some((hunk) => hunk.newCount !== 0)) {
    return fail('a deleted file cannot have new lines');
  }
  if (!draft.git && !draft.sawFileHeaders) return fail('missing --- / +++ headers');
  return ok({
    kind,
    oldPath: kind === 'create' ? null : oldPath,
    newPath: kind === 'delete' ? null : newPath,
    oldMode: draft.oldMode,
    newMode: draft.newMode,
    hunks: draft.hunks,
    binary: draft.binary,
  });
}

/** Reads one hunk starting at `lines[start]` (the `@@` line); returns it and the next index. */
function parseHunk(lines: readonly string[], start: number): Result<DiffParseError, { hunk: Hunk; next: number }> {
  const header = lines[start] as string;
  const match = HUNK_HEADER.exec(header);
  if (match === null) return err({ _tag: 'DiffParseError', line: start + 1, message: 'malformed hunk header' });
  const oldStart = Number(match[1]);
  const oldCount = match[2] === undefined ? 1 : Number(match[2]);
  const newStart = Number(match[3]);
  const newCount = match[4] === undefined ? 1 : Number(match[4]);
  const body: DiffLine[] = [];
  let oldSeen = 0;
  let newSeen = 0;
  let oldEndsWithoutNewline = false;
  let newEndsWithoutNewline = false;
  let index = start + 1;
  const marker = (): boolean => (lines[index] ?? '').startsWith('\\');
  while (oldSeen < oldCount || newSeen < newCount) {
    const line = lines[index];
    if (line === undefined) {
      return err({ _tag: 'DiffParseError', line: start + 1, message: `hunk ${header} ends early (diff truncated?)` });
    }
    if (line.startsWith('\\')) {
      const previous = body[body.length - 1];
      if (previous === undefined) return err({ _tag: 'DiffParseError', line: index + 1, message: 'stray "\\" line' });
      if (previous.op !== '+') oldEndsWithoutNewline = true;
      if (previous.op !== '-') newEndsWithoutNewline = true;
      index += 1;
      continue;
    }
    // An empty line is a blank context line whose leading space was stripped by an editor.
    const op = line === '' ? ' ' : line[0];
    if (op !== ' ' && op !== '-' && op !== '+') {
      return err({ _tag: 'DiffParseError', line: index + 1, message: `unexpected line in hunk ${header}` });
    }
    if (op !== '+') oldSeen += 1;
    if (op !== '-') newSeen += 1;
    if (oldSeen > oldCount || newSeen > newCount) {
      return err({
        _tag: 'DiffParseError',
        line: index + 1,
        message: `hunk ${header} has more lines than its header says`,
      });
    }
    body.push({ op, text: line.slice(1) });
    index += 1;
  }
  if (marker()) {
    const previous = body[body.length - 1];
    if (previous !== undefined && previous.op !== '+') oldEndsWithoutNewline = true;
    if (previous !== undefined && previous.op !== '-') newEndsWithoutNewline = true;
    index += 1;
  }
  return ok({
    hunk: { header, oldStart, oldCount, newStart, newCount, lines: body, oldEndsWithoutNewline, newEndsWithoutNewline },
    next: index,
  });
}

type HeaderAction = (draft: PatchDraft, value: string) => void;

const quotedOrRaw = (raw: string): string => unquotePath(raw)?.path ?? raw;

/** Git extended header lines, by prefix, and what each does to the draft. */
const EXTENDED_HEADERS: ReadonlyArray<readonly [string, HeaderAction]> = [
  [
    'old mode ',
    (draft, value) => {
      draft.oldMode = parseMode(value);
    },
  ],
  [
    'new mode ',
    (draft, value) => {
      draft.newMode = parseMode(value);
    },
  ],
  [
    'deleted file mode ',
    (draft, value) => {
      draft.kind = 'delete';
      draft.oldMode = parseMode(value);
    },
  ],
  [
    'new file mode ',
    (draft, value) => {
      draft.kind = 'create';
      draft.newMode = parseMode(value);
    },
  ],
  [
    'rename from ',
    (draft, value) => {
      draft.kind = 'rename';
      draft.oldPath = quotedOrRaw(value);
    },
  ],
  [
    'rename to ',
    (draft, value) => {
      draft.newPath = quotedOrRaw(value);
    },
  ],
  [
    'copy from ',
    (draft, value) => {
      draft.kind = 'copy';
      draft.oldPath = quotedOrRaw(value);
    },
  ],
  [
    'copy to ',
    (draft, value) => {
      draft.newPath = quotedOrRaw(value);
    },
  ],
  [
    'GIT binary patch',
    (draft) => {
      draft.binary = true;
    },
  ],
];

/** Applies one git extended header line to the draft (unknown lines are ignored). */
function gitExtendedHeader(draft: PatchDraft, line: string): void {
  for (const [prefix, action] of EXTENDED_HEADERS) {
    if (line.startsWith(prefix)) {
      action(draft, line.slice(prefix.length));
      return;
    }
  }
  if (line.startsWith('Binary files ') && line.endsWith(' differ')) draft.binary = true;
}

/** Parses a unified diff into per-file patches (bounded in size, files and hunks). */
export function parseUnifiedDiff(text: string): Result<DiffParseError, FilePatch[]> {
  if (typeof text !== 'string') return err({ _tag: 'DiffParseError', line: 0, message: 'diff must be a string' });
  if (text.length > MAX_DIFF_BYTES) {
    return err({ _tag: 'DiffParseError', line: 0, message: `diff larger than ${MAX_DIFF_BYTES} bytes` });
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const patches: FilePatch[] = [];
  let draft: PatchDraft | null = null;
  let hunkCount = 0;
  const finish = (): DiffParseError | null => {
    if (draft === null) return null;
    const finished = finishDraft(draft);
    draft = null;
    if (finished._tag === 'Left') return finished.left;
    patches.push(finished.right);
    return patches.length > MAX_DIFF_FILES
      ? { _tag: 'DiffParseError', line: 0, message: `more than ${MAX_DIFF_FILES} files` }
      : null;
  };
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] as string;
    if (line.startsWith('diff --git ')) {
      const problem = finish();
      if (problem !== null) return err(problem);
      const fresh = newDraft(true, index + 1);
      const paths = gitHeaderPaths(line.slice('diff --git '.length).replace(/\r$/, ''));
      fresh.headerOldPath = paths.oldPath;
      fresh.headerNewPath = paths.newPath;
      draft = fresh;
      index += 1;
      continue;
    }
    const current = draft as PatchDraft | null;
    if (line.startsWith('--- ') && (lines[index + 1] ?? '').startsWith('+++ ')) {
      let target = current;
      if (target === null || target.sawFileHeaders || target.hunks.length > 0) {
        const problem = finish();
        if (problem !== null) return err(problem);
        target = newDraft(false, index + 1);
        draft = target;
      }
      const oldRaw = headerPath(line.slice(4));
      const newRaw = headerPath((lines[index + 1] as string).slice(4));
      if (oldRaw === null || newRaw === null) {
        return err({ _tag: 'DiffParseError', line: index + 1, message: 'malformed quoted path' });
      }
      target.sawFileHeaders = true;
      target.oldIsDevNull = oldRaw === DEV_NULL;
      target.newIsDevNull = newRaw === DEV_NULL;
      // Plain diffs only carry a/ b/ prefixes when both sides have them; git diffs always do.
      const prefixed =
        target.git ||
        ((oldRaw.startsWith('a/') || target.oldIsDevNull) && (newRaw.startsWith('b/') || target.newIsDevNull));
      if (target.oldPath === null)
        target.oldPath = prefixed ? stripPrefix(oldRaw, 'a/') : oldRaw === DEV_NULL ? null : oldRaw;
      if (target.newPath === null)
        target.newPath = prefixed ? stripPrefix(newRaw, 'b/') : newRaw === DEV_NULL ? null : newRaw;
      index += 2;
      continue;
    }
    if (line.startsWith('@@')) {
      if (current === null)
        return err({ _tag: 'DiffParseError', line: index + 1, message: 'hunk before any file header' });
      const parsed = parseHunk(lines, index);
      if (parsed._tag === 'Left') return parsed;
      current.hunks.push(parsed.right.hunk);
      hunkCount += 1;
      if (hunkCount > MAX_DIFF_HUNKS) {
        return err({ _tag: 'DiffParseError', line: index + 1, message: `more than ${MAX_DIFF_HUNKS} hunks` });
      }
      index = parsed.right.next;
      continue;
    }
    if (current?.git && current.hunks.length === 0 && !current.sawFileHeaders) {
      gitExtendedHeader(current, line.replace(/\r$/, ''));
    }
    // Anything else (commit message, `index` lines, trailing signature) is not part of a file change.
    index += 1;
  }
  const problem = finish();
  if (problem !== null) return err(problem);
  if (patches.length === 0) return err({ _tag: 'DiffParseError', line: 0, message: 'no file changes found' });
  return ok(patches);
}
