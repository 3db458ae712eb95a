/**
 * Turns a caller's unified diff into staged files: for each file, the base
 * content at the task's base commit, the staged content (the hunks applied
 * exactly, no fuzz) and that file's own diff text for reviewers. Nothing is
 * written to disk; the state plane stores the result.
 *
 * Rules, so that the staged content is always "base + this file's diff":
 * - hunks apply to the base commit's file, not to an earlier staged version;
 *   staging a file again replaces its earlier staged edit;
 * - text files only (a base that is not valid UTF-8 is refused, checked by
 *   re-hashing the decoded text as a git blob);
 * - create, modify and delete only; renames, copies, binary patches, symlinks
 *   and submodules (a 120000/160000 mode on either side, or at the base) are
 *   refused with a hint, never staged as a regular file;
 * - paths that could name something else on another host (`.GIT`, `.git.`,
 *   zero-width characters, non-NFC, trailing dots/spaces, `GIT~1`) are refused;
 * - every check happens before anything is staged, so a bad file in a
 *   multi-file diff stages nothing.
 */
import { createHash } from 'node:crypto';
import { applyHunks, type FilePatch, type Hunk, parseUnifiedDiff } from '@crustcore/confine';
import { err, ok, type Result } from '@crustcore/kernel';
import { relativePathProblem } from '@crustcore/state';
import { ambiguousPathProblem, foldPath, type Repository, repositoryLocation, runGitAt } from '@crustcore/verify';
import { MCP_LIMITS } from './limits.js';

export interface PlannedFile {
  readonly path: string;
  readonly kind: 'create' | 'modify' | 'delete';
  /** Null for a created file. */
  readonly base: string | null;
  /** Null for a deleted file. */
  readonly staged: string | null;
  readonly diffText: string;
}

export interface StagingRefusal {
  readonly _tag: 'StagingRefused';
  readonly message: string;
}

const refuse = (message: string): Result<StagingRefusal, never> => err({ _tag: 'StagingRefused', message });

/** The file's own section of the diff, rendered from the parsed hunks. */
export function renderFilePatch(path: string, patch: FilePatch): string {
  const lines = [
    `diff --git a/${path} b/${path}`,
    patch.kind === 'create' ? '--- /dev/null' : `--- a/${path}`,
    patch.kind === 'delete' ? '+++ /dev/null' : `+++ b/${path}`,
  ];
  for (const hunk of patch.hunks) lines.push(...renderHunk(hunk));
  return `${lines.join('\n')}\n`;
}

function renderHunk(hunk: Hunk): string[] {
  const out = [hunk.header];
  const lastOld = findLastIndex(hunk.lines, (line) => line.op !== '+');
  const lastNew = findLastIndex(hunk.lines, (line) => line.op !== '-');
  hunk.lines.forEach((line, index) => {
    out.push(`${line.op}${line.text}`);
    const oldEnds = hunk.oldEndsWithoutNewline && index === lastOld;
    const newEnds = hunk.newEndsWithoutNewline && index === lastNew;
    if (oldEnds || newEnds) out.push('\\ No newline at end of file');
  });
  return out;
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let index = items.length - 1; index >= 0; index -= 1) if (predicate(items[index] as T)) return index;
  return -1;
}

interface TreeEntry {
  readonly mode: string;
  readonly type: string;
  readonly id: string;
}

/** `git ls-tree` of the given paths at `commit` (literal pathspecs: gitBaseArgs sets them). */
async function treeEntries(
  repo: Repository,
  commit: string,
  paths: readonly string[],
): Promise<Result<StagingRefusal, Map<string, TreeEntry>>> {
  const listed = await runGitAt(repositoryLocation(repo), ['ls-tree', '-z', '--full-tree', commit, '--', ...paths], {
    maxOutputBytes: 4 * 1024 * 1024,
  });
  if (listed._tag === 'Left') return refuse(`cannot read the base commit: ${listed.left.message}`);
  const entries = new Map<string, TreeEntry>();
  for (const record of listed.right.stdout.text.split('\0')) {
    const match = /^(\d{6}) (\w+) ([0-9a-f]{40,64})\t([\s\S]+)$/.exec(record);
    if (match === null) continue;
    entries.set(match[4] as string, { mode: match[1] as string, type: match[2] as string, id: match[3] as string });
  }
  return ok(entries);
}

/** Git's object id of `text` as a blob (SHA-1, or SHA-256 repositories). */
function blobId(text: string, length: number): string {
  const bytes = Buffer.from(text, 'utf8');
  return createHash(length === 64 ? 'sha256' : 'sha1')
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest('hex');
}

async function baseText(repo: Repository, path: string, entry: TreeEntry): Promise<Result<StagingRefusal, string>> {
  if (entry.type !== 'blob' || entry.mode === '120000' || entry.mode === '160000') {
    return refuse(`${path} is a symlink, submodule or directory at the base commit; only regular files can be staged`);
  }
  const read = await runGitAt(repositoryLocation(repo), ['cat-file', 'blob', entry.id], {
    maxOutputBytes: 32 * 1024 * 1024,
  });
  if (read._tag === 'Left') return refuse(`cannot read ${path} at the base commit: ${read.left.message}`);
  const text = read.right.stdout.text;
  // The runner decodes output as UTF-8; only if the text re-hashes to the blob id were the bytes text.
  if (blobId(text, entry.id.length) !== entry.id)
    return refuse(`${path} is not UTF-8 text at the base commit; binary files cannot be staged here`);
  return ok(text);
}

function checkPath(path: string): string | null {
  const problem = relativePathProblem(path) ?? ambiguousPathProblem(path);
  if (problem !== null) return `path ${JSON.stringify(path.slice(0, 200))}: ${problem}`;
  return null;
}

const REGULAR_MODES = new Set([0o100644, 0o100755]);

/** Symlinks (120000), submodules (160000) and any other non-regular mode, on either side of the change. */
function modeProblem(path: string, patch: FilePatch): string | null {
  for (const mode of [patch.oldMode, patch.newMode]) {
    if (mode === null || REGULAR_MODES.has(mode)) continue;
    const what = mode === 0o120000 ? 'a symlink' : mode === 0o160000 ? 'a submodule' : `mode ${mode.toString(8)}`;
    return `${path}: ${what} cannot be staged here (only regular text files); leave it out of the diff`;
  }
  return null;
}

export async function planStagedFiles(
  repo: Repository,
  baseCommit: string,
  diff: string,
): Promise<Result<StagingRefusal, readonly PlannedFile[]>> {
  const parsed = parseUnifiedDiff(diff);
  if (parsed._tag === 'Left')
    return refuse(`the diff does not parse (line ${parsed.left.line}): ${parsed.left.message}`);
  const patches = parsed.right;
  if (patches.length === 0) return refuse('the diff names no file');
  if (patches.length > MCP_LIMITS.maxDiffFiles)
    return refuse(`the diff names ${patches.length} files; the limit is ${MCP_LIMITS.maxDiffFiles}`);
  const seen = new Set<string>();
  const foldedSeen = new Set<string>();
  const work: { readonly path: string; readonly patch: FilePatch; readonly kind: PlannedFile['kind'] }[] = [];
  for (const patch of patches) {
    if (patch.binary) return refuse('binary patches cannot be staged here');
    if (patch.kind === 'rename' || patch.kind === 'copy') {
      return refuse(
        `${patch.kind}s are not supported: stage the old path as a deletion and the new path as a creation`,
      );
    }
    const path = patch.kind === 'delete' ? patch.oldPath : patch.newPath;
    if (path === null) return refuse('a file in the diff has no path');
    const problem = checkPath(path) ?? modeProblem(path, patch);
    if (problem !== null) return refuse(problem);
    // Folded, so `A.txt` and `a.txt` (one file on macOS and Windows) cannot both be staged.
    const folded = foldPath(path).join('/');
    if (seen.has(path) || foldedSeen.has(folded))
      return refuse(`${path} appears twice in the diff (names compared case- and form-insensitively)`);
    seen.add(path);
    foldedSeen.add(folded);
    if (patch.hunks.length === 0 && patch.kind !== 'delete') {
      return refuse(`${path}: mode-only changes are not supported (the staged content would equal the base)`);
    }
    work.push({ path, patch, kind: patch.kind });
  }
  const entries = await treeEntries(repo, baseCommit, [...seen]);
  if (entries._tag === 'Left') return entries;
  const planned: PlannedFile[] = [];
  for (const { path, patch, kind } of work) {
    const entry = entries.right.get(path);
    if (kind === 'create' && entry !== undefined)
      return refuse(`${path} already exists at the base commit; send a modification`);
    if (kind !== 'create' && entry === undefined) return refuse(`${path} does not exist at the base commit`);
    let base: string | null = null;
    if (entry !== undefined) {
      const read = await baseText(repo, path, entry);
      if (read._tag === 'Left') return read;
      base = read.right;
    }
    const applied = applyHunks(base ?? '', patch.hunks);
    if (applied._tag === 'Left') {
      return refuse(
        `${path}: hunk ${applied.left.hunkIndex} (${applied.left.header}) does not apply to the base commit: ${applied.left.message}`,
      );
    }
    if (kind === 'delete' && applied.right.text !== '') {
      return refuse(`${path}: a deletion must remove every line of the file`);
    }
    planned.push({
      path,
      kind,
      base,
      staged: kind === 'delete' ? null : applied.right.text,
      diffText: renderFilePatch(path, patch),
    });
  }
  return ok(planned);
}
