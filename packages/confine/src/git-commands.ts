/**
 * The three git subcommands tools may run: status, diff and log. Each has a
 * fixed argument list; callers choose options from typed fields, never flags.
 * Paths are confined read paths of the same root, passed after `--` with
 * literal pathspecs; revisions are checked and passed after
 * `--end-of-options`.
 */
import { err, type Hash32, ok, type Result } from '@crustcore/kernel';
import type { FsReadCap } from './capabilities.js';
import { ConfinedReadPath } from './confined-path.js';
import { type PathError, pathError } from './errors.js';
import { GIT_DIFF_SAFETY_ARGS } from './git-env.js';
import { checkRevision, type GitError, type GitRunOptions, runGit } from './git-run.js';
import { requireReadCap } from './tool-access.js';

export type GitStatusKind = 'changed' | 'renamed' | 'unmerged' | 'untracked';

export interface GitStatusEntry {
  readonly kind: GitStatusKind;
  /** Root-relative path. */
  readonly path: string;
  /** For renames and copies: where it came from. */
  readonly originalPath: string | null;
  /** Porcelain v2 XY letters: index state and worktree state ('.' = unchanged, '?' for untracked). */
  readonly index: string;
  readonly worktree: string;
}

export interface GitBranch {
  /** Current commit, or null before the first commit. */
  readonly oid: string | null;
  /** Branch name, or null when HEAD is detached. */
  readonly head: string | null;
  readonly upstream: string | null;
  readonly ahead: number | null;
  readonly behind: number | null;
}

export interface GitStatus {
  readonly branch: GitBranch;
  readonly entries: readonly GitStatusEntry[];
  /** True when the output bound cut the listing short. */
  readonly truncated: boolean;
}

export interface GitCommit {
  readonly hash: string;
  readonly parents: readonly string[];
  readonly authorName: string;
  readonly authorEmail: string;
  /** Author date, strict ISO 8601. */
  readonly authorDate: string;
  readonly subject: string;
}

export interface GitDiff {
  /** The patch (with a drop marker in the middle when `truncated`; such a patch must not be applied). */
  readonly patch: string;
  readonly truncated: boolean;
  /** Size and hash of the full output, including any dropped middle. */
  readonly totalBytes: number;
  readonly sha256: Hash32;
}

function pathspecs(cap: FsReadCap, paths: readonly ConfinedReadPath[] | undefined): Result<PathError, string[]> {
  requireReadCap(cap);
  const specs: string[] = [];
  for (const path of paths ?? []) {
    if (!ConfinedReadPath.is(path)) throw new TypeError('expected a ConfinedReadPath from resolveReadPath');
    if (!cap.root.equals(path.root))
      return err(pathError('RootMismatch', path.relative, 'the path belongs to another root'));
    specs.push(path.relative === '' ? '.' : path.relative);
  }
  return ok(specs);
}

const isObjectId = (text: string): boolean => /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(text);

/** Splits `text` at the first `count` spaces; the rest (which may contain spaces) is the last field. */
function fields(text: string, count: number): string[] | null {
  const out: string[] = [];
  let start = 0;
  for (let index = 0; index < count; index += 1) {
    const space = text.indexOf(' ', start);
    if (space < 0) return null;
    out.push(text.slice(start, space));
    start = space + 1;
  }
  out.push(text.slice(start));
  return out;
}

/** Parses `git status --porcelain=v2 --branch -z` output. */
export function parseStatus(output: string, truncated: boolean): Result<GitError, GitStatus> {
  const records = output.split('\u0000');
  if (truncated) records.pop(); // The last record may be cut.
  const branch = {
    oid: null as string | null,
    head: null as string | null,
    upstream: null as string | null,
    ahead: null as number | null,
    behind: null as number | null,
  };
  const entries: GitStatusEntry[] = [];
  const malformed = (record: string): Result<GitError, GitStatus> =>
    err({ _tag: 'GitOutputMalformed', message: `unexpected status record ${JSON.stringify(record.slice(0, 80))}` });
  for (let index = 0; index < records.length; index += 1) {
    const record = records[index] as string;
    if (record === '') continue;
    if (record.startsWith('# ')) {
      const [key, ...rest] = record.slice(2).split(' ');
      const value = rest.join(' ');
      if (key === 'branch.oid') branch.oid = value === '(initial)' ? null : value;
      else if (key === 'branch.head') branch.head = value === '(detached)' ? null : value;
      else if (key === 'branch.upstream') branch.upstream = value;
      else if (key === 'branch.ab') {
        const ab = /^\+(\d+) -(\d+)$/.exec(value);
        branch.ahead = ab === null ? null : Number(ab[1]);
        branch.behind = ab === null ? null : Number(ab[2]);
      }
      continue;
    }
    const type = record[0];
    if (type === '1') {
      const parts = fields(record, 8);
      if (parts === null) return malformed(record);
      const xy = parts[1] as string;
      entries.push({
        kind: 'changed',
        path: parts[8] as string,
        originalPath: null,
        index: xy[0] ?? '.',
        worktree: xy[1] ?? '.',
      });
    } else if (type === '2') {
      const parts = fields(record, 9);
      const original = records[index + 1];
      if (parts === null || original === undefined) return malformed(record);
      index += 1;
      const xy = parts[1] as string;
      entries.push({
        kind: 'renamed',
        path: parts[9] as string,
        originalPath: original,
        index: xy[0] ?? '.',
        worktree: xy[1] ?? '.',
      });
    } else if (type === 'u') {
      const parts = fields(record, 10);
      if (parts === null) return malformed(record);
      const xy = parts[1] as string;
      entries.push({
        kind: 'unmerged',
        path: parts[10] as string,
        originalPath: null,
        index: xy[0] ?? '.',
        worktree: xy[1] ?? '.',
      });
    } else if (type === '?') {
      entries.push({ kind: 'untracked', path: record.slice(2), originalPath: null, index: '?', worktree: '?' });
    } else {
      return malformed(record);
    }
  }
  return ok({ branch, entries, truncated });
}

/** `git status`: branch and changed/untracked files (submodules ignored, index never written). */
export async function gitStatus(cap: FsReadCap, options: GitRunOptions = {}): Promise<Result<GitError, GitStatus>> {
  requireReadCap(cap);
  const result = await runGit(
    cap.root,
    ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all', '--ignore-submodules=all'],
    options,
  );
  if (result._tag === 'Left') return result;
  return parseStatus(result.right.stdout.text, result.right.stdout.truncated);
}

export interface GitDiffOptions extends GitRunOptions {
  /** Compare against this revision instead of the index. */
  readonly base?: string;
  /** Compare the index (staged changes) rather than the worktree. */
  readonly staged?: boolean;
  /** Binary-safe patch (`--binary --full-index`), for export and re-application. */
  readonly binary?: boolean;
  /** Limit to these paths. */
  readonly paths?: readonly ConfinedReadPath[];
}

/** `git diff` with textconv, external diff and color off, fixed a/ b/ prefixes. */
export async function gitDiff(
  cap: FsReadCap,
  options: GitDiffOptions = {},
): Promise<Result<GitError | PathError, GitDiff>> {
  const specs = pathspecs(cap, options.paths);
  if (specs._tag === 'Left') return specs;
  const args = [
    'diff',
    ...GIT_DIFF_SAFETY_ARGS,
    '-O/dev/null',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '--ignore-submodules=all',
  ];
  if (options.binary === true) args.push('--binary', '--full-index');
  if (options.staged === true) args.push('--cached');
  args.push('--end-of-options');
  if (options.base !== undefined) {
    const problem = checkRevision(options.base);
    if (problem !== null) return err(problem);
    args.push(options.base);
  }
  args.push('--', ...specs.right);
  const result = await runGit(cap.root, args, options);
  if (result._tag === 'Left') return result;
  const stdout = result.right.stdout;
  return ok({ patch: stdout.text, truncated: stdout.truncated, totalBytes: stdout.totalBytes, sha256: stdout.sha256 });
}

export interface GitLogOptions extends GitRunOptions {
  /** Default 50, at most 1000. */
  readonly maxCount?: number;
  /** Start here instead of HEAD. */
  readonly revision?: string;
  readonly paths?: readonly ConfinedReadPath[];
}

const LOG_FIELDS = 6;
const MAX_LOG_COUNT = 1000;

/** Parses `git log -z --format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s` output. */
export function parseLog(output: string): Result<GitError, GitCommit[]> {
  const tokens = output.split('\u0000');
  if (tokens[tokens.length - 1] === '') tokens.pop();
  if (tokens.length % LOG_FIELDS !== 0)
    return err({ _tag: 'GitOutputMalformed', message: 'log output has a partial record' });
  const commits: GitCommit[] = [];
  for (let index = 0; index < tokens.length; index += LOG_FIELDS) {
    const [hash, parents, authorName, authorEmail, authorDate, subject] = tokens.slice(index, index + LOG_FIELDS) as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const parentList = parents === '' ? [] : parents.split(' ');
    if (!isObjectId(hash) || !parentList.every(isObjectId)) {
      return err({ _tag: 'GitOutputMalformed', message: 'log record without a valid commit id' });
    }
    commits.push({ hash, parents: parentList, authorName, authorEmail, authorDate, subject });
  }
  return ok(commits);
}

/** `git log`: newest first, at most `maxCount` commits, no signatures, mailmap or notes. */
export async function gitLog(
  cap: FsReadCap,
  options: GitLogOptions = {},
): Promise<Result<GitError | PathError, GitCommit[]>> {
  const specs = pathspecs(cap, options.paths);
  if (specs._tag === 'Left') return specs;
  const maxCount = Math.max(1, Math.min(Math.floor(options.maxCount ?? 50), MAX_LOG_COUNT));
  const args = [
    'log',
    ...GIT_DIFF_SAFETY_ARGS,
    '--no-show-signature',
    '--no-mailmap',
    '--no-notes',
    '-z',
    `--max-count=${maxCount}`,
    '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s',
    '--end-of-options',
  ];
  if (options.revision !== undefined) {
    const problem = checkRevision(options.revision);
    if (problem !== null) return err(problem);
    args.push(options.revision);
  }
  args.push('--', ...specs.right);
  const result = await runGit(cap.root, args, options);
  if (result._tag === 'Left') {
    // A branch with no commits yet is an empty history, not a failure.
    if (result.left._tag === 'GitFailed' && /does not have any commits yet/.test(result.left.stderr)) return ok([]);
    return result;
  }
  if (result.right.stdout.truncated)
    return err({ _tag: 'GitOutputMalformed', message: 'log output exceeded the bound' });
  return parseLog(result.right.stdout.text);
}
