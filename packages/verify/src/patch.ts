/**
 * The patch is what git sees changed in the worktree — never what the worker
 * says. `git add -A` stages everything in the worktree's own index, then
 * `git diff --cached --binary <base>` gives the exact bytes, and the raw and
 * numstat listings give per-file status, modes and the binary flag. Changes
 * outside the allowed roots, into `.git`, or to gitlinks are rejected; every
 * changed file is classified and risky ones become risks.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { classifyPath, type FileClass } from './file-class.js';
import { GIT_DIFF_SAFETY_ARGS, type GitFailure, gitRawText, gitText, runGitAt } from './git.js';
import { crustcoreHome, scratchDir } from './home.js';
import { integrityRisks } from './integrity.js';
import type { FileMode } from './journal/record.js';
import { patchViewRisks, viewPatch } from './patch-view/patch-view.js';
import { hasGitDirComponent } from './path-fold.js';
import { mergeRisks, RISK_SEVERITY, type Risk } from './risk.js';
import { resolveInTree } from './symlink-chain.js';
import { gitTreeReader } from './tree-reader.js';
import { type TaskWorktree, worktreeLocation } from './worktree.js';

export type ChangeStatus = 'A' | 'M' | 'D' | 'R' | 'T';

export interface ChangedFile {
  readonly status: ChangeStatus;
  /** New path (for D: the deleted path). */
  readonly path: string;
  /** Old path for renames, else null. */
  readonly oldPath: string | null;
  /** Git modes as octal strings ('100644', '100755', '120000'), null when absent. */
  readonly oldMode: string | null;
  readonly newMode: string | null;
  /** Preimage: blob id at the base commit (null for added files). */
  readonly baseBlob: string | null;
  readonly newBlob: string | null;
  readonly binary: boolean;
  readonly fileClass: FileClass;
  /** True when the executable bit differs between old and new. */
  readonly executableChanged: boolean;
}

/** A patch no one has verified yet. Carries its bytes and hash; grants nothing. */
export interface UnverifiedPatch {
  readonly _tag: 'UnverifiedPatch';
  readonly baseCommit: string;
  /** Tree of the worktree index after `git add -A` (what the patch must reproduce). */
  readonly treeId: string;
  readonly bytes: Uint8Array;
  readonly sha256: string;
  readonly files: readonly ChangedFile[];
  readonly risks: readonly Risk[];
}

export type PatchRejectionReason =
  | 'outside-allowed-roots'
  | 'forbidden-path'
  | 'git-directory'
  | 'gitlink'
  | 'too-large'
  | 'too-many-files'
  | 'unreadable-path';

export interface PatchRejection {
  readonly _tag: 'PatchRejected';
  readonly problems: readonly { readonly reason: PatchRejectionReason; readonly path: string }[];
}

export type ExtractError = PatchRejection | GitFailure;

export interface ExtractOptions {
  /** Path prefixes (relative to the worktree) the patch may touch; [] or ['.'] = everywhere. */
  readonly allowedRoots?: readonly string[];
  /** Path prefixes it must not touch. */
  readonly forbiddenPaths?: readonly string[];
  readonly maxPatchBytes?: number;
  readonly maxFiles?: number;
  readonly home?: string;
}

export const DEFAULT_MAX_PATCH_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_PATCH_FILES = 5000;

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Mode string → journal file mode. */
export function fileModeOf(gitMode: string): FileMode | null {
  if (gitMode === '100755') return 'executable';
  if (gitMode === '100644') return 'regular';
  if (gitMode === '120000') return 'symlink';
  return null;
}

function underPrefix(path: string, prefix: string): boolean {
  const clean = prefix.replace(/^\.\/?/, '').replace(/\/+$/, '');
  return clean === '' || path === clean || path.startsWith(`${clean}/`);
}

interface RawEntry {
  readonly status: ChangeStatus;
  readonly oldMode: string;
  readonly newMode: string;
  readonly oldBlob: string;
  readonly newBlob: string;
  readonly path: string;
  readonly oldPath: string | null;
}

/** Parses `git diff --raw -z` output: ":old new oldsha newsha STATUS\0path\0[path2\0]". */
export function parseRawDiff(text: string): RawEntry[] {
  const parts = text.split('\0');
  const entries: RawEntry[] = [];
  let i = 0;
  while (i < parts.length) {
    const header = parts[i] as string;
    if (!header.startsWith(':')) {
      i += 1;
      continue;
    }
    const [oldMode, newMode, oldBlob, newBlob, statusField] = header.slice(1).split(' ');
    const letter = (statusField ?? '').charAt(0);
    if (letter === 'R' || letter === 'C') {
      const oldPath = parts[i + 1] ?? '';
      const path = parts[i + 2] ?? '';
      entries.push({
        status: 'R',
        oldMode: oldMode ?? '',
        newMode: newMode ?? '',
        oldBlob: oldBlob ?? '',
        newBlob: newBlob ?? '',
        path,
        oldPath,
      });
      i += 3;
    } else {
      const path = parts[i + 1] ?? '';
      const status = (['A', 'M', 'D', 'T'].includes(letter) ? letter : 'M') as ChangeStatus;
      entries.push({
        status,
        oldMode: oldMode ?? '',
        newMode: newMode ?? '',
        oldBlob: oldBlob ?? '',
        newBlob: newBlob ?? '',
        path,
        oldPath: null,
      });
      i += 2;
    }
  }
  return entries;
}

/** Parses `git diff --numstat -z`: binary files show "-\t-\t". Returns the binary paths. */
export function parseBinaryPaths(text: string): Set<string> {
  const binary = new Set<string>();
  const parts = text.split('\0');
  let i = 0;
  while (i < parts.length) {
    const field = parts[i] as string;
    const match = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(field);
    if (match === null) {
      i += 1;
      continue;
    }
    const isBinary = match[1] === '-' && match[2] === '-';
    if (match[3] === '') {
      // Rename: the two paths follow as separate fields.
      if (isBinary) binary.add(parts[i + 2] ?? '');
      i += 3;
    } else {
      if (isBinary) binary.add(match[3] as string);
      i += 1;
    }
  }
  return binary;
}

const ZERO_MODE = '000000';
const isZeroId = (id: string): boolean => /^0+$/.test(id);

function checkPath(path: string, options: ExtractOptions): PatchRejectionReason | null {
  if (path === '' || path.includes('\uFFFD') || normalize(path) !== path || path.startsWith('../'))
    return 'unreadable-path';
  // Folded: `.GIT`, `.git.`, `.g\u200Bit` and `GIT~1` are `.git` on some host the tree may be checked out on.
  if (hasGitDirComponent(path)) return 'git-directory';
  const allowed = options.allowedRoots ?? [];
  if (allowed.length > 0 && !allowed.some((prefix) => underPrefix(path, prefix))) return 'outside-allowed-roots';
  if ((options.forbiddenPaths ?? []).some((prefix) => underPrefix(path, prefix))) return 'forbidden-path';
  return null;
}

/**
 * A symlink target that leaves the worktree, judged alone (no other links).
 * The patch's real check resolves whole chains in the resulting tree
 * (symlink-chain.ts via integrity.ts); this stays for callers with one link.
 */
export function symlinkEscapes(linkPath: string, target: string): boolean {
  return resolveInTree(linkPath, new Map([[linkPath, target]]))._tag !== 'Inside';
}

/** Name-only risks that need no tree: CI, secrets, lockfiles, config, modes, binaries. */
function risksFor(files: readonly ChangedFile[]): Risk[] {
  const risks: Risk[] = [];
  const pathsWhere = (predicate: (file: ChangedFile) => boolean): string[] =>
    files.filter(predicate).map((f) => f.path);
  const add = (kind: Risk['kind'], detail: string, paths: string[]): void => {
    if (paths.length > 0) risks.push({ kind, severity: RISK_SEVERITY[kind], detail, paths: paths.slice(0, 50) });
  };
  add(
    'ci-workflow-changed',
    'the patch changes CI configuration',
    pathsWhere((f) => f.fileClass === 'ci-workflow'),
  );
  add(
    'secret-like-file',
    'the patch touches files that usually hold secrets',
    pathsWhere((f) => f.fileClass === 'secret'),
  );
  add(
    'lockfile-changed',
    'the patch changes dependency lockfiles',
    pathsWhere((f) => f.fileClass === 'lockfile'),
  );
  add(
    'config-changed',
    'the patch changes build, test or tool configuration',
    pathsWhere((f) => f.fileClass === 'config'),
  );
  add(
    'executable-bit',
    'the patch changes the executable bit',
    pathsWhere((f) => f.executableChanged),
  );
  add(
    'binary-file',
    'the patch adds or changes binary files',
    pathsWhere((f) => f.binary && f.status !== 'D'),
  );
  return risks;
}

function scratch(home: string): string {
  const dir = scratchDir(home);
  return mkdtempSync(join(dir, 'patch-'));
}

function changedFilesOf(entries: ReturnType<typeof parseRawDiff>, binary: ReadonlySet<string>): ChangedFile[] {
  return entries.map((entry) => {
    const oldMode = entry.oldMode === ZERO_MODE ? null : entry.oldMode;
    const newMode = entry.newMode === ZERO_MODE ? null : entry.newMode;
    return {
      status: entry.status,
      path: entry.path,
      oldPath: entry.oldPath,
      oldMode,
      newMode,
      baseBlob: isZeroId(entry.oldBlob) ? null : entry.oldBlob,
      newBlob: isZeroId(entry.newBlob) ? null : entry.newBlob,
      binary: binary.has(entry.path),
      fileClass: classifyPath(entry.path),
      executableChanged: oldMode !== null && newMode !== null && (oldMode === '100755') !== (newMode === '100755'),
    };
  });
}

/** Why the changed paths cannot become a patch (too many, a forbidden path, a gitlink), or null. */
function rejectedPaths(
  entries: ReturnType<typeof parseRawDiff>,
  options: ExtractOptions,
): Extract<ExtractError, { _tag: 'PatchRejected' }> | null {
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_PATCH_FILES;
  if (entries.length > maxFiles) {
    return { _tag: 'PatchRejected', problems: [{ reason: 'too-many-files', path: `${entries.length} files` }] };
  }
  const problems: { reason: PatchRejectionReason; path: string }[] = [];
  for (const entry of entries) {
    for (const path of entry.oldPath === null ? [entry.path] : [entry.oldPath, entry.path]) {
      const reason = checkPath(path, options);
      if (reason !== null) problems.push({ reason, path });
    }
    if (entry.newMode === '160000' || entry.oldMode === '160000')
      problems.push({ reason: 'gitlink', path: entry.path });
  }
  return problems.length > 0 ? { _tag: 'PatchRejected', problems: problems.slice(0, 100) } : null;
}

/**
 * Stages everything in the worktree and returns the patch against its base,
 * or null when nothing changed.
 */
export async function extractPatch(
  worktree: TaskWorktree,
  options: ExtractOptions = {},
): Promise<Result<ExtractError, UnverifiedPatch | null>> {
  const location = worktreeLocation(worktree);
  const base = worktree.baseCommit;
  const added = await runGitAt(location, ['add', '-A', '--', '.']);
  if (added._tag === 'Left') return added;
  const diffOf = ['diff', '--cached', ...GIT_DIFF_SAFETY_ARGS, '-M', '--full-index'];
  const diffArgs = [...diffOf, '-z'];
  // The patch goes through a file: process output is captured as text, and patch bytes need not be UTF-8.
  const home = options.home ?? crustcoreHome();
  mkdirSync(scratchDir(home), { recursive: true, mode: 0o700 });
  const dir = scratch(home);
  try {
    const file = join(dir, 'patch.diff');
    // Four reads of the same staged index, side by side: each git call costs a process start, and
    // the checks below need all of them (add -A already read every file, so the diff costs no more).
    const [raw, numstat, diff, tree] = await Promise.all([
      // Full object ids (--full-index does not reach --raw): an abbreviation can become ambiguous.
      gitRawText(location, [...diffArgs, '--raw', '--no-abbrev', base, '--']),
      gitRawText(location, [...diffArgs, '--numstat', base, '--']),
      runGitAt(location, [...diffOf, '--binary', `--output=${file}`, base, '--']),
      gitText(location, ['write-tree']),
    ]);
    if (raw._tag === 'Left') return raw;
    const entries = parseRawDiff(raw.right);
    if (entries.length === 0) return ok(null);
    const rejected = rejectedPaths(entries, options);
    if (rejected !== null) return err(rejected);
    if (numstat._tag === 'Left') return numstat;
    if (diff._tag === 'Left') return diff;
    const binary = parseBinaryPaths(numstat.right);
    const bytes = new Uint8Array(readFileSync(file));
    if (bytes.length > (options.maxPatchBytes ?? DEFAULT_MAX_PATCH_BYTES)) {
      return err({ _tag: 'PatchRejected', problems: [{ reason: 'too-large', path: `${bytes.length} bytes` }] });
    }
    if (tree._tag === 'Left') return tree;
    const files = changedFilesOf(entries, binary);
    const integrity = await integrityRisks({
      reader: gitTreeReader(location),
      baseCommit: base,
      treeId: tree.right,
      files,
      argv: null,
    });
    return ok({
      _tag: 'UnverifiedPatch',
      baseCommit: base,
      treeId: tree.right,
      bytes,
      sha256: sha256Hex(bytes),
      files,
      risks: mergeRisks([...integrity, ...risksFor(files), ...patchViewRisks(viewPatch(bytes))]),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
