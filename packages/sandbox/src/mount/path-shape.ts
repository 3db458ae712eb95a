/**
 * Pure checks on path strings. They never touch the filesystem; callers that
 * need the real location resolve it first (realpath) and then compare.
 */
import { isAbsolute, normalize } from 'node:path';

/** Absolute, without `.`, `..` or `//` segments or NUL; one trailing slash is tolerated. */
export function isNormalizedAbsolute(path: string): boolean {
  if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\u0000')) return false;
  const trimmed = path.length > 1 ? path.replace(/\/$/, '') : path;
  return normalize(trimmed) === trimmed;
}

/** True when `child` is `parent` or lies below it (both normalized absolute). */
export function isInside(child: string, parent: string): boolean {
  if (parent === '/') return child.startsWith('/');
  const base = parent.replace(/\/$/, '');
  return child === base || child.startsWith(`${base}/`) || child === `${base}/`;
}

/** True when one of the two paths contains the other. */
export const overlaps = (a: string, b: string): boolean => isInside(a, b) || isInside(b, a);
