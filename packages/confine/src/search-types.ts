/**
 * Shapes shared by the search entry point and its two engines.
 */
import type { ConfinedReadPath } from './confined-path.js';
import type { PathError } from './errors.js';
import type { InvalidGlob } from './glob-pattern.js';

export type SearchEngine = 'ripgrep' | 'javascript';

export interface SearchOptions {
  /** A regular expression, or a literal with `fixedStrings`. */
  readonly pattern: string;
  readonly fixedStrings?: boolean;
  readonly caseInsensitive?: boolean;
  /** Directory or file to search; default the root. */
  readonly path?: ConfinedReadPath;
  /** Keep only files whose root-relative path matches this glob. */
  readonly glob?: string;
  /** Names never entered; default `.git`, `node_modules`. */
  readonly skipNames?: readonly string[];
  /** Default 200 matching lines. */
  readonly maxMatches?: number;
  /** Files larger than this are skipped (default 1 MiB). */
  readonly maxFileBytes?: number;
  /** Match text is clipped to this many characters (default 400). */
  readonly maxLineChars?: number;
  /** `auto` (default) uses ripgrep when installed. */
  readonly engine?: 'auto' | SearchEngine;
  /** ripgrep's wall-clock bound (default 20 s). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Where ripgrep lives (default /usr/bin/rg). */
  readonly ripgrepPath?: string;
}

export interface SearchMatch {
  /** Root-relative path. */
  readonly path: string;
  /** 1-based line number. */
  readonly lineNumber: number;
  /** 1-based byte column of the first match in the line. */
  readonly column: number;
  /** The line without its line ending, clipped to `maxLineChars`. */
  readonly text: string;
}

export interface SearchResult {
  readonly engine: SearchEngine;
  readonly matches: readonly SearchMatch[];
  /** True when a bound (matches, output bytes, time) cut the search short. */
  readonly truncated: boolean;
}

export interface InvalidPattern {
  readonly _tag: 'InvalidPattern';
  readonly message: string;
}

export interface SearchFailed {
  readonly _tag: 'SearchFailed';
  readonly engine: SearchEngine;
  readonly message: string;
}

export type SearchError = PathError | InvalidGlob | InvalidPattern | SearchFailed;

/** What both engines receive once options are checked. */
export interface SearchPlan {
  readonly root: ConfinedReadPath['root'];
  /** Root-relative directory or file to search ('' = the root). */
  readonly start: string;
  readonly pattern: string;
  readonly fixedStrings: boolean;
  readonly caseInsensitive: boolean;
  readonly regex: RegExp;
  readonly glob: RegExp | null;
  readonly skipNames: readonly string[];
  readonly maxMatches: number;
  readonly maxFileBytes: number;
  readonly maxLineChars: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly ripgrepPath: string;
}
