/**
 * Running git for a worktree: the safe environment and base arguments, the
 * root pinned as the work tree (a repository's `core.worktree` cannot
 * redirect it), and the repository's own filter drivers overridden.
 *
 * Filter drivers (`filter.<name>.clean/smudge/process`) are chosen by
 * attributes inside the worktree and defined in the repository's config, so
 * their names are only known per repository. Before each command we list the
 * effective config (`git config --list -z`, which reads files and runs
 * nothing), and for every filter driver found set clean, smudge and process
 * to empty (git then skips the filter) and `required` to false. The overrides
 * travel in GIT_CONFIG_COUNT/KEY/VALUE variables, which take any key
 * verbatim; `-c` would split a driver name containing `=`.
 */

import { err, ok, type Result } from '@crustcore/kernel';
import { type ProcessResult, runTrustedHostCommand } from '@crustcore/sandbox';
import { gitBaseArgs, gitEnv } from './git-env.js';
import type { WorktreeRoot } from './worktree-root.js';

export type GitError =
  | { readonly _tag: 'GitNotStarted'; readonly message: string }
  | { readonly _tag: 'GitTimedOut'; readonly message: string }
  | { readonly _tag: 'GitFailed'; readonly exitCode: number | null; readonly stderr: string; readonly message: string }
  | { readonly _tag: 'GitUnsafeConfig'; readonly message: string }
  | { readonly _tag: 'GitOutputMalformed'; readonly message: string }
  | { readonly _tag: 'InvalidRevision'; readonly revision: string; readonly message: string };

export interface GitRunOptions {
  /** Default 30 s. */
  readonly timeoutMs?: number;
  /** Default 8 MiB per stream. */
  readonly maxOutputBytes?: number;
  readonly signal?: AbortSignal;
}

export const DEFAULT_GIT_TIMEOUT_MS = 30_000;
export const DEFAULT_GIT_OUTPUT_BYTES = 8 * 1024 * 1024;
const CONFIG_SCAN_OUTPUT_BYTES = 1024 * 1024;
/** More filter drivers than this is not a real repository; refuse rather than build a huge env. */
const MAX_FILTER_DRIVERS = 256;
const MAX_STDERR_CHARS = 2000;

const FILTER_KEY = /^filter\.(.+)\.(clean|smudge|process|required)$/i;

/** Filter driver names defined anywhere in the effective config (`config --list -z` output). */
export function filterDriverNames(listing: string): string[] {
  const names = new Set<string>();
  for (const entry of listing.split('\u0000')) {
    if (entry === '') continue;
    const newline = entry.indexOf('\n');
    const key = newline === -1 ? entry : entry.slice(0, newline);
    const match = FILTER_KEY.exec(key);
    if (match !== null) names.add(match[1] as string);
  }
  return [...names];
}

/** GIT_CONFIG_COUNT-style variables that disable each named filter driver. */
export function filterOverrideEnv(names: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  let index = 0;
  const set = (key: string, value: string): void => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
    index += 1;
  };
  for (const name of names) {
    set(`filter.${name}.clean`, '');
    set(`filter.${name}.smudge`, '');
    set(`filter.${name}.process`, '');
    set(`filter.${name}.required`, 'false');
  }
  env.GIT_CONFIG_COUNT = String(index);
  return env;
}

function clipStderr(result: ProcessResult): string {
  const text = result.stderr.text;
  return text.length > MAX_STDERR_CHARS ? `${text.slice(0, MAX_STDERR_CHARS)}…` : text;
}

async function spawnGit(
  root: WorktreeRoot,
  env: Readonly<Record<string, string>>,
  args: readonly string[],
  options: GitRunOptions,
  maxOutputBytes: number,
): Promise<Result<GitError, ProcessResult>> {
  const result = await runTrustedHostCommand({
    argv: ['git', ...gitBaseArgs(), `--work-tree=${root.path}`, ...args],
    cwd: root.path,
    env,
    timeoutMs: options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
    maxOutputBytes,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (result.startError !== null) return err({ _tag: 'GitNotStarted', message: result.startError.message });
  if (result.timedOut || result.cancelled) {
    return err({ _tag: 'GitTimedOut', message: result.timedOut ? 'git timed out' : 'git was cancelled' });
  }
  return ok(result);
}

/**
 * The full environment for git in `root`: safe base plus overrides for the
 * repository's filter drivers. Exported so other packages (the verify
 * worktree manager) run git exactly the same way.
 */
export async function gitEnvForRoot(
  root: WorktreeRoot,
  options: GitRunOptions = {},
): Promise<Result<GitError, Readonly<Record<string, string>>>> {
  const base = gitEnv({ root: root.path });
  const listed = await spawnGit(root, base, ['config', '--list', '-z'], options, CONFIG_SCAN_OUTPUT_BYTES);
  if (listed._tag === 'Left') return listed;
  // Exit 1 with no output: no config at all (not a repository is caught by the real command).
  if (listed.right.stdout.truncated) return err({ _tag: 'GitUnsafeConfig', message: 'repository config is too large' });
  const names = filterDriverNames(listed.right.exitCode === 0 ? listed.right.stdout.text : '');
  if (names.length > MAX_FILTER_DRIVERS) {
    return err({ _tag: 'GitUnsafeConfig', message: `more than ${MAX_FILTER_DRIVERS} filter drivers` });
  }
  return ok(Object.freeze({ ...base, ...filterOverrideEnv(names) }));
}

/**
 * Runs one fixed git subcommand in `root` with hooks, config-driven programs
 * and filter drivers neutralized. A non-zero exit is a `GitFailed` value.
 */
export async function runGit(
  root: WorktreeRoot,
  args: readonly string[],
  options: GitRunOptions = {},
): Promise<Result<GitError, ProcessResult>> {
  const env = await gitEnvForRoot(root, options);
  if (env._tag === 'Left') return env;
  const result = await spawnGit(root, env.right, args, options, options.maxOutputBytes ?? DEFAULT_GIT_OUTPUT_BYTES);
  if (result._tag === 'Left') return result;
  if (result.right.exitCode !== 0) {
    return err({
      _tag: 'GitFailed',
      exitCode: result.right.exitCode,
      stderr: clipStderr(result.right),
      message: `git ${args[0] ?? ''} exited with ${result.right.exitCode ?? result.right.signal}`,
    });
  }
  return result;
}

const REVISION = /^[A-Za-z0-9_][A-Za-z0-9._/@{}~^-]{0,255}$/;

/** Checks a revision name (no leading `-`, no `:`, no `..`, bounded); never passed as an option. */
export function checkRevision(revision: string): GitError | null {
  if (typeof revision !== 'string' || !REVISION.test(revision) || revision.includes('..') || revision.includes('@{-')) {
    return {
      _tag: 'InvalidRevision',
      revision: String(revision).slice(0, 100),
      message: 'not an allowed revision name',
    };
  }
  return null;
}
