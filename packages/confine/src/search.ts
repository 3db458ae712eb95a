/**
 * Text search over a confined directory: ripgrep when it is installed (run
 * through the trusted host runner with `--no-config` and fixed flags, output
 * decoded from `--json` with io-ts), otherwise a pure-JS walk. Both engines
 * return the same shape, skip the same names, search hidden files, ignore
 * ignore-files, never follow symlinks, skip binary and oversize files, and
 * order results by path (depth first, names sorted).
 *
 * Known differences: regex dialects (Rust `regex` vs JS `RegExp`) differ on
 * advanced syntax; ripgrep may report matches that precede a NUL byte found
 * late in a large file, where the JS engine skips the whole file; the JS
 * engine runs the regex in-process (no linear-time guarantee), which is why
 * ripgrep is preferred.
 */
import { accessSync, constants } from 'node:fs';
import { err, ok, type Result } from '@crustcore/kernel';
import type { FsReadCap } from './capabilities.js';
import type { ConfinedReadPath } from './confined-path.js';
import { compileGlob } from './glob-pattern.js';
import { DEFAULT_SKIPPED_NAMES } from './list-files.js';
import { resolveReadPath } from './path-resolver.js';
import { clampBound } from './read-file.js';
import { searchWithJavaScript } from './search-javascript.js';
import { searchWithRipgrep } from './search-ripgrep.js';
import type { InvalidPattern, SearchError, SearchOptions, SearchPlan, SearchResult } from './search-types.js';
import { checkReadAccess, requireReadCap } from './tool-access.js';

export const DEFAULT_RIPGREP_PATH = '/usr/bin/rg';
const MAX_PATTERN_CHARS = 1000;
const DEFAULT_MAX_MATCHES = 200;
const DEFAULT_SEARCH_FILE_BYTES = 1024 * 1024;
const DEFAULT_MAX_LINE_CHARS = 400;
const DEFAULT_SEARCH_TIMEOUT_MS = 20_000;

/** The JS form of the pattern; also validates it for both engines. */
export function compileSearchPattern(
  pattern: string,
  fixedStrings: boolean,
  caseInsensitive: boolean,
): Result<InvalidPattern, RegExp> {
  if (typeof pattern !== 'string' || pattern.length === 0)
    return err({ _tag: 'InvalidPattern', message: 'empty pattern' });
  if (pattern.length > MAX_PATTERN_CHARS) {
    return err({ _tag: 'InvalidPattern', message: `pattern longer than ${MAX_PATTERN_CHARS} characters` });
  }
  if (/[\u0000\n]/.test(pattern)) return err({ _tag: 'InvalidPattern', message: 'pattern contains NUL or a newline' });
  const source = fixedStrings ? pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern;
  const flags = caseInsensitive ? 'i' : '';
  try {
    return ok(new RegExp(source, `${flags}u`));
  } catch {
    try {
      return ok(new RegExp(source, flags));
    } catch (error) {
      return err({ _tag: 'InvalidPattern', message: `invalid regular expression: ${(error as Error).message}` });
    }
  }
}

/** True when an executable ripgrep is at `path`. */
export function ripgrepAvailable(path: string = DEFAULT_RIPGREP_PATH): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Searches file contents under a confined directory (or one file). */
export async function search(cap: FsReadCap, options: SearchOptions): Promise<Result<SearchError, SearchResult>> {
  requireReadCap(cap);
  let start: ConfinedReadPath;
  if (options.path === undefined) {
    const rootPath = resolveReadPath(cap, '.');
    if (rootPath._tag === 'Left') return rootPath;
    start = rootPath.right;
  } else {
    start = options.path;
  }
  const access = checkReadAccess(cap, start);
  if (access !== null) return err(access);
  const fixedStrings = options.fixedStrings ?? false;
  const caseInsensitive = options.caseInsensitive ?? false;
  const regex = compileSearchPattern(options.pattern, fixedStrings, caseInsensitive);
  if (regex._tag === 'Left') return regex;
  let glob: RegExp | null = null;
  if (options.glob !== undefined) {
    const compiled = compileGlob(options.glob);
    if (compiled._tag === 'Left') return compiled;
    glob = compiled.right;
  }
  const plan: SearchPlan = {
    root: start.root,
    start: start.relative,
    pattern: options.pattern,
    fixedStrings,
    caseInsensitive,
    regex: regex.right,
    glob,
    skipNames: options.skipNames ?? DEFAULT_SKIPPED_NAMES,
    maxMatches: Math.max(1, clampBound(options.maxMatches, DEFAULT_MAX_MATCHES, 100_000)),
    maxFileBytes: clampBound(options.maxFileBytes, DEFAULT_SEARCH_FILE_BYTES, 256 * 1024 * 1024),
    maxLineChars: Math.max(1, clampBound(options.maxLineChars, DEFAULT_MAX_LINE_CHARS, 100_000)),
    timeoutMs: Math.max(1, clampBound(options.timeoutMs, DEFAULT_SEARCH_TIMEOUT_MS, 10 * 60_000)),
    signal: options.signal,
    ripgrepPath: options.ripgrepPath ?? DEFAULT_RIPGREP_PATH,
  };
  const engine = options.engine ?? 'auto';
  if (engine === 'javascript' || (engine === 'auto' && !ripgrepAvailable(plan.ripgrepPath))) {
    return searchWithJavaScript(plan);
  }
  return searchWithRipgrep(plan);
}
