/**
 * Git for the verify layer: always through the sandbox package's trusted
 * host runner, with confine's neutralized environment and config overrides,
 * and with the git directory passed explicitly. A task worktree's `.git` file
 * is writable by the worker, so git is never allowed to discover the
 * repository from it: `--git-dir` and `--work-tree` are pinned to what was
 * recorded when the worktree was created.
 */
import { filterDriverNames, filterOverrideEnv, GIT_DIFF_SAFETY_ARGS, gitBaseArgs, gitEnv } from '@crustcore/confine';
import { err, ok, type Result } from '@crustcore/kernel';
import { type ProcessResult, runTrustedHostCommand } from '@crustcore/sandbox';
import { listingIncludesFiles, lookupFilterNames, rememberFilterNames } from './git-config-cache.js';

export { GIT_DIFF_SAFETY_ARGS };

export interface GitFailure {
  readonly _tag: 'GitFailure';
  readonly command: string;
  readonly exitCode: number | null;
  /** First 2,000 characters of stderr. */
  readonly stderr: string;
  readonly message: string;
}

/** Where a git command runs: the repository's git directory, and the work tree if any. */
export interface GitLocation {
  readonly gitDir: string;
  readonly workTree: string | null;
  /** Working directory of the process (the work tree, or the repository root). */
  readonly cwd: string;
  /**
   * Object directories other than the repository's own: `write` receives new
   * objects (a task's store under $CRUSTCORE_HOME, so a rejected patch leaves
   * nothing in the user's .git), `read` are extra alternates.
   */
  readonly objects?: { readonly write: string | null; readonly read: readonly string[] };
}

function objectEnv(location: GitLocation): Record<string, string> {
  if (location.objects === undefined) return {};
  const env: Record<string, string> = {};
  if (location.objects.write !== null) env.GIT_OBJECT_DIRECTORY = location.objects.write;
  if (location.objects.read.length > 0) env.GIT_ALTERNATE_OBJECT_DIRECTORIES = location.objects.read.join(':');
  return env;
}

export interface GitCallOptions {
  readonly stdin?: string | Uint8Array;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
  /** Extra environment (GIT_INDEX_FILE, author identity). Never from process.env. */
  readonly env?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export const GIT_TIMEOUT_MS = 120_000;
const GIT_OUTPUT_BYTES = 16 * 1024 * 1024;
const CONFIG_OUTPUT_BYTES = 1024 * 1024;
const STDERR_CHARS = 2000;

function failure(command: string, result: ProcessResult | null, message: string): GitFailure {
  const stderr = result === null ? '' : result.stderr.text.slice(0, STDERR_CHARS);
  return { _tag: 'GitFailure', command, exitCode: result?.exitCode ?? null, stderr, message };
}

function locationArgs(location: GitLocation): string[] {
  const args = [`--git-dir=${location.gitDir}`];
  if (location.workTree !== null) args.push(`--work-tree=${location.workTree}`);
  return args;
}

async function spawn(
  location: GitLocation,
  env: Readonly<Record<string, string>>,
  args: readonly string[],
  options: GitCallOptions,
  maxOutputBytes: number,
): Promise<ProcessResult> {
  return runTrustedHostCommand({
    argv: ['git', ...gitBaseArgs(), ...locationArgs(location), ...args],
    cwd: location.cwd,
    env,
    timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS,
    maxOutputBytes,
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}

/**
 * The environment for git at `location`: confine's safe base plus overrides
 * for every filter driver the repository's config names (listing config runs
 * nothing). A config edit between calls is seen: the listing is cached only
 * while the config files are unchanged (git-config-cache.ts).
 */
async function environmentFor(
  location: GitLocation,
  options: GitCallOptions,
): Promise<Result<GitFailure, Record<string, string>>> {
  const base = gitEnv(location.workTree === null ? {} : { root: location.workTree });
  const names = await filterNamesAt(location, base, options);
  if (names._tag === 'Left') return names;
  return ok({ ...base, ...filterOverrideEnv(names.right), ...objectEnv(location), ...(options.env ?? {}) });
}

interface Listing {
  readonly names: readonly string[];
  /** Whether another caller may take this answer: it listed the config and nothing it includes. */
  readonly shareable: boolean;
}

/**
 * Listings running now, by git dir and config fingerprint: calls that start side by side (a
 * run warms its slot while it detects the environment) share one `git config --list`
 * instead of each missing the cache. Only as sound as the cache itself: no fingerprint (a
 * config file changed within the racy window) and no sharing; an answer that read included
 * files (which no fingerprint covers) or failed is not taken, the joiner lists for itself.
 */
const listingsInFlight = new Map<string, Promise<Result<GitFailure, Listing>>>();
let listingsStarted = 0;

/** How many `git config --list` this process has started (the cache and the sharing are measured by it). */
export function configListingsStarted(): number {
  return listingsStarted;
}

/** The filter drivers the repository's config names: cached while its config files are unchanged. */
async function filterNamesAt(
  location: GitLocation,
  base: Readonly<Record<string, string>>,
  options: GitCallOptions,
): Promise<Result<GitFailure, readonly string[]>> {
  const { names: cached, fingerprint } = lookupFilterNames(location.gitDir);
  if (cached !== null) return ok(cached);
  // The fingerprint names the config source (git-config-cache.ts): worktrees reading one config share a listing.
  const key = fingerprint;
  const running = key === null ? undefined : listingsInFlight.get(key);
  if (running !== undefined) {
    const shared = await running;
    if (shared._tag === 'Right' && shared.right.shareable) return ok(shared.right.names);
  }
  const listing = listFilterNames(location, base, options, fingerprint);
  if (key !== null && running === undefined) {
    listingsInFlight.set(key, listing);
    void listing.finally(() => listingsInFlight.delete(key));
  }
  const listed = await listing;
  return listed._tag === 'Left' ? listed : ok(listed.right.names);
}

async function listFilterNames(
  location: GitLocation,
  base: Readonly<Record<string, string>>,
  options: GitCallOptions,
  fingerprint: string | null,
): Promise<Result<GitFailure, Listing>> {
  listingsStarted += 1;
  const listed = await spawn(location, base, ['config', '--list', '-z'], options, CONFIG_OUTPUT_BYTES);
  if (listed.startError !== null)
    return err(failure('config', listed, `git did not start: ${listed.startError.message}`));
  if (listed.stdout.truncated) return err(failure('config', listed, 'repository config is too large'));
  // A listing that did not finish (a timeout, a stop, a config git cannot read) names no drivers
  // anyone can trust: the command must not run without their overrides. (It failed open before:
  // no names, and the command ran with whatever filters the config defines.)
  if (listed.exitCode !== 0)
    return err(
      failure('config', listed, `could not list the repository config (exit ${listed.exitCode ?? 'by signal'})`),
    );
  const listing = listed.stdout.text;
  const names = filterDriverNames(listing);
  if (names.length > 256) return err(failure('config', listed, 'too many filter drivers'));
  rememberFilterNames(location.gitDir, fingerprint, listing, names);
  return ok({ names, shareable: !listingIncludesFiles(listing) });
}

/** Runs git; a non-zero exit, a timeout or a start failure is a `GitFailure` value. */
export async function runGitAt(
  location: GitLocation,
  args: readonly string[],
  options: GitCallOptions = {},
): Promise<Result<GitFailure, ProcessResult>> {
  const env = await environmentFor(location, options);
  if (env._tag === 'Left') return env;
  const result = await spawn(location, env.right, args, options, options.maxOutputBytes ?? GIT_OUTPUT_BYTES);
  const command = args[0] ?? '';
  if (result.startError !== null)
    return err(failure(command, result, `git did not start: ${result.startError.message}`));
  if (result.timedOut || result.cancelled)
    return err(failure(command, result, `git ${command} ${result.timedOut ? 'timed out' : 'was cancelled'}`));
  if (result.exitCode !== 0)
    return err(failure(command, result, `git ${command} exited with ${result.exitCode ?? result.signal}`));
  if (result.stdout.truncated)
    return err(failure(command, result, `git ${command} printed more than the output budget`));
  return ok(result);
}

/** `runGitAt` returning trimmed stdout. */
export async function gitText(
  location: GitLocation,
  args: readonly string[],
  options: GitCallOptions = {},
): Promise<Result<GitFailure, string>> {
  const result = await runGitAt(location, args, options);
  return result._tag === 'Left' ? result : ok(result.right.stdout.text.trim());
}

/** `runGitAt` returning stdout exactly (for -z listings, where trimming could eat a path's spaces). */
export async function gitRawText(
  location: GitLocation,
  args: readonly string[],
  options: GitCallOptions = {},
): Promise<Result<GitFailure, string>> {
  const result = await runGitAt(location, args, options);
  return result._tag === 'Left' ? result : ok(result.right.stdout.text);
}

/** Git discovery in a directory the user named (their own repository, trusted to find itself). */
export async function discoverRepository(
  dir: string,
): Promise<Result<GitFailure, { readonly root: string; readonly gitDir: string; readonly commonDir: string }>> {
  // No ceiling: the user may name a subdirectory of their repository.
  const env = gitEnv();
  const result = await runTrustedHostCommand({
    argv: [
      'git',
      ...gitBaseArgs(),
      'rev-parse',
      '--path-format=absolute',
      '--show-toplevel',
      '--absolute-git-dir',
      '--git-common-dir',
    ],
    cwd: dir,
    env,
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutputBytes: 64 * 1024,
  });
  if (result.startError !== null || result.exitCode !== 0) {
    return err(failure('rev-parse', result, `${dir} is not inside a git work tree`));
  }
  const [root, gitDir, commonDir] = result.stdout.text.trim().split('\n');
  if (root === undefined || gitDir === undefined || commonDir === undefined) {
    return err(failure('rev-parse', result, 'unexpected rev-parse output'));
  }
  return ok({ root, gitDir, commonDir });
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
export const isObjectId = (text: string): boolean => OBJECT_ID.test(text);
