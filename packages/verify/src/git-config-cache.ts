/**
 * Remembers which filter drivers a repository's config names, so a task's
 * hundred git calls do not each start a second git just to list the config
 * (that doubled every git call and was the largest part of a small task's
 * overhead).
 *
 * The listing runs with no system or global config (confine's git
 * environment), so it depends only on the repository's own config files:
 * `<common dir>/config`, `<git dir>/config.worktree` and the `commondir`
 * pointer. A cached answer is used only while each of those files has the
 * same inode, size, mtime and ctime as when it was listed.
 *
 * A linked worktree without a `config.worktree` of its own reads exactly its
 * common dir's config, so its answer is the repository's: a task's worktrees
 * (the worker's, the baseline's, the verify slot) share one listing instead of
 * each starting its own. Whether the file exists is asked at every lookup: once
 * it does, the worktree has an entry of its own. (A `config.worktree` made while
 * the shared listing ran can only add names to it, and an extra name is one
 * more filter overridden, never one missed.) Three rules keep all this sound:
 * - a listing with any `include.*` / `includeIf.*` key is never cached (an
 *   included file, or a branch an `onbranch:` condition names, could change
 *   without any of the watched files changing);
 * - a listing is not cached when a watched file changed less than
 *   `RACY_WINDOW_MS` before it (git's own "racy clean" rule for its index:
 *   file times are coarse, so an edit in the same tick could keep them);
 * - a file the worker could edit is not involved: the worker never gets
 *   write access to the git directory.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';

const RACY_WINDOW_MS = 2_000;
const MAX_ENTRIES = 64;
const INCLUDE_KEY = /^include(?:if\..*)?\.path$/i;

const cache = new Map<string, { readonly fingerprint: string; readonly names: readonly string[] }>();

function commonDirOf(gitDir: string): string {
  try {
    // As git reads it: only the line end is cut (a leading space is part of the path).
    const pointer = readFileSync(join(gitDir, 'commondir'), 'utf8').replace(/[\r\n]+$/, '');
    return isAbsolute(pointer) ? pointer : join(gitDir, pointer);
  } catch {
    return gitDir;
  }
}

interface ConfigSource {
  /** The cache entry: the common dir's config, or this git dir's own when it has a config.worktree. */
  readonly key: string;
  /** The watched files; `racy` ones are edited in place by git and obey the racy window. */
  readonly watched: readonly { readonly file: string; readonly racy: boolean }[];
}

/** Which config files a git dir reads, and so whose listing it may share. */
function configSourceOf(gitDir: string): ConfigSource {
  const commonDir = normalize(commonDirOf(gitDir));
  const common = { file: join(commonDir, 'config'), racy: true };
  if (!existsSync(join(gitDir, 'config.worktree'))) return { key: `common\u0000${commonDir}`, watched: [common] };
  return {
    key: `worktree\u0000${gitDir}`,
    watched: [
      // Written once when a linked worktree is made; a new pointer is a new file.
      { file: join(gitDir, 'commondir'), racy: false },
      common,
      { file: join(gitDir, 'config.worktree'), racy: true },
    ],
  };
}

/** Identity of the config files, or null when one changed too recently to be trusted. */
function fingerprintOf(gitDir: string, nowMs: number): string | null {
  const source = configSourceOf(gitDir);
  const parts: string[] = [source.key];
  for (const { file, racy } of source.watched) {
    try {
      const stat = statSync(file, { bigint: true });
      const changedMs = Number(stat.ctimeNs / 1_000_000n);
      if (racy && nowMs - changedMs < RACY_WINDOW_MS) return null;
      parts.push(`${file}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`);
    } catch {
      parts.push(`${file}:absent`);
    }
  }
  return parts.join('\u0000');
}

/** True when the `-z` listing includes other files (never cached). */
export function listingIncludesFiles(listing: string): boolean {
  return listing.split('\u0000').some((entry) => INCLUDE_KEY.test(entry.split('\n', 1)[0] ?? ''));
}

/** A fingerprint starts with the key of the entry it was taken for. */
const keyOf = (fingerprint: string): string => fingerprint.split('\u0000', 2).join('\u0000');

/**
 * The remembered filter driver names for `gitDir` when its config files are unchanged (else
 * null), and the fingerprint a fresh listing is remembered under (null: a file changed within
 * the racy window). One look at the files serves both, taken before any listing runs, so an
 * edit during the listing is seen as a change by the next call.
 */
export function lookupFilterNames(gitDir: string): {
  readonly names: readonly string[] | null;
  readonly fingerprint: string | null;
} {
  const fingerprint = fingerprintOf(gitDir, Date.now());
  if (fingerprint === null) return { names: null, fingerprint };
  const entry = cache.get(keyOf(fingerprint));
  return { names: entry?.fingerprint === fingerprint ? entry.names : null, fingerprint };
}

/** Remembers `names` for `gitDir` under the fingerprint `lookupFilterNames` gave before the listing ran. */
export function rememberFilterNames(
  gitDir: string,
  fingerprint: string | null,
  listing: string,
  names: readonly string[],
): void {
  // The key the fingerprint was taken for: a config.worktree made since then is another entry.
  const key = fingerprint === null ? configSourceOf(gitDir).key : keyOf(fingerprint);
  if (fingerprint === null || listingIncludesFiles(listing)) {
    cache.delete(key);
    return;
  }
  if (cache.size >= MAX_ENTRIES && !cache.has(key)) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(key, { fingerprint, names: Object.freeze([...names]) });
}
