/**
 * One way to compare path names the way the most permissive host would.
 * A patch is written on Linux but may be checked out on macOS (case- and
 * normalisation-insensitive, ignores some zero-width code points) or Windows
 * (case-insensitive, drops trailing dots and spaces, answers to 8.3 short
 * names such as `GIT~1`). A rule that only matched the exact bytes `.git` or
 * `.husky` would let `.GIT`, `.git.`, `.hus\u200Bky` or `.husky ` through on
 * one of those hosts, so every rule in this package compares folded names.
 *
 * Folding only ever makes more names match, so it can over-flag a Linux-only
 * oddity, never under-flag: the safe direction for a risk check.
 */

// Code points every Unicode-aware file system or terminal may drop or not show.
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
// Windows strips these from the end of each path component.
const TRAILING_DOTS_SPACES = /[. ]+$/;

/** Folded components seen so far: a tree of 20k paths repeats its directory names thousands of times. */
const foldMemo = new Map<string, string>();
const FOLD_MEMO_LIMIT = 1 << 16;

// Printable ASCII: NFKC leaves it alone, none of it is default-ignorable, and upper-then-lower is lower.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function foldUncached(segment: string): string {
  // The fast path for the names nearly every tree is made of (a 20k-file tree folds 20k of them).
  if (PRINTABLE_ASCII.test(segment)) return withoutTrailingDotsSpaces(segment.toLowerCase());
  return foldSegmentUnicode(segment);
}

/** The general fold (exported so a property test pins the ASCII fast path to it). */
export function foldSegmentUnicode(segment: string): string {
  const visible = segment.normalize('NFKC').replace(DEFAULT_IGNORABLE, '');
  // Upper then lower: the closest JS has to full case folding (ß → ss, ﬁ → fi via NFKC).
  return withoutTrailingDotsSpaces(visible.toUpperCase().toLowerCase().normalize('NFKC'));
}

function withoutTrailingDotsSpaces(folded: string): string {
  // `.` and `..` keep their meaning; only names lose trailing dots and spaces.
  if (folded === '.' || folded === '..') return folded;
  return folded.replace(TRAILING_DOTS_SPACES, '');
}

/** One path component, folded: NFKC, no default-ignorable code points, case-folded, no trailing dots/spaces. */
export function foldSegment(segment: string): string {
  const known = foldMemo.get(segment);
  if (known !== undefined) return known;
  const folded = foldUncached(segment);
  if (foldMemo.size >= FOLD_MEMO_LIMIT) foldMemo.clear();
  foldMemo.set(segment, folded);
  return folded;
}

/** A repository-relative path, split on `/` and folded per component. */
export function foldPath(path: string): readonly string[] {
  return path.split('/').map(foldSegment);
}

/**
 * True for a component that is (or could be) a Windows 8.3 short name such as
 * `GIT~1` or `HUSKY~2.JS`: such a name can stand for any long name, so no
 * name-based rule can say what it points at.
 */
export function isShortName(segment: string): boolean {
  return /~\d+(?:\.[^.]{0,3})?$/.test(foldSegment(segment));
}

/** The long name a short name can stand for starts with these characters (dots removed, ≤ 6). */
export function shortNamePrefix(segment: string): string | null {
  const match = /^([^~]{1,6})~\d+(?:\.[^.]{0,3})?$/.exec(foldSegment(segment));
  return match === null ? null : (match[1] as string);
}

/** True when `segment` names git's own directory on some host (`.git`, `.GIT.`, `.g\u200Bit`, `GIT~1`). */
export function isGitDirName(segment: string): boolean {
  const folded = foldSegment(segment);
  if (folded === '.git') return true;
  // NTFS alternate data streams: `.git::$INDEX_ALLOCATION` is the directory `.git`.
  if (folded.startsWith('.git:')) return true;
  return shortNamePrefix(segment) === 'git';
}

/** True when the path has a component naming git's own directory. */
export const hasGitDirComponent = (path: string): boolean => path.split('/').some(isGitDirName);

/** The folded last component of a path (its file name). */
export const foldedName = (path: string): string => foldSegment(path.slice(path.lastIndexOf('/') + 1));

/**
 * Why a path a caller wants written could mean something else on some host,
 * or null when it is unambiguous: a component that is `.git` in any spelling,
 * carries default-ignorable (zero-width, bidi-invisible) code points, is not
 * in NFC (macOS stores NFD and would merge it with another name), ends in a
 * dot or space (Windows drops them) or is an 8.3 short name (`GIT~1`).
 */
export function ambiguousPathProblem(path: string): string | null {
  for (const segment of path.split('/')) {
    const shown = JSON.stringify(segment.slice(0, 100));
    if (isGitDirName(segment)) return `component ${shown} is git's own directory on some host (.git in any spelling)`;
    if (/\p{Default_Ignorable_Code_Point}/u.test(segment))
      return `component ${shown} has zero-width or invisible characters`;
    if (segment.normalize('NFC') !== segment) return `component ${shown} is not in Unicode NFC form`;
    if (/[. ]$/.test(segment) && segment !== '.' && segment !== '..')
      return `component ${shown} ends in a dot or space (dropped on Windows)`;
    if (isShortName(segment)) return `component ${shown} looks like an 8.3 short name (~N), which can alias any name`;
  }
  return null;
}
