/**
 * Glob patterns compiled to anchored regular expressions, matched against
 * `/`-separated paths relative to the root.
 *
 * Syntax: `*` (any run inside one component), `?` (one character), `[abc]`,
 * `[!abc]`/`[^abc]`, `{a,b}` (alternatives, expanded up front, may nest),
 * `**` as a whole component (zero or more components), `\x` (literal x).
 * `*` and `?` also match a leading dot: tools skip `.git` and `node_modules`
 * by name instead.
 */
import { err, ok, type Result } from '@crustcore/kernel';

export interface InvalidGlob {
  readonly _tag: 'InvalidGlob';
  readonly pattern: string;
  readonly message: string;
}

export const MAX_GLOB_CHARS = 1024;
const MAX_BRACE_EXPANSIONS = 256;

function invalid(pattern: string, message: string): InvalidGlob {
  return { _tag: 'InvalidGlob', pattern: pattern.slice(0, 200), message };
}

/** Index of the `}` closing the `{` at `open`, honouring nesting and escapes; -1 when unclosed. */
function closingBrace(pattern: string, open: number): number {
  let depth = 0;
  for (let index = open; index < pattern.length; index += 1) {
    const char = pattern[index];
    if (char === '\\') index += 1;
    else if (char === '{') depth += 1;
    else if (char === '}') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

/** Splits the body of a brace group on top-level commas. */
function splitAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < body.length; index += 1) {
    const char = body[index];
    if (char === '\\') index += 1;
    else if (char === '{') depth += 1;
    else if (char === '}') depth -= 1;
    else if (char === ',' && depth === 0) {
      parts.push(body.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function firstBrace(pattern: string): number {
  for (let index = 0; index < pattern.length; index += 1) {
    if (pattern[index] === '\\') index += 1;
    else if (pattern[index] === '{') return index;
  }
  return -1;
}

/** Expands `{a,b}` groups into separate patterns (bounded). */
export function expandBraces(pattern: string): Result<InvalidGlob, string[]> {
  const done: string[] = [];
  const pending = [pattern];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    const open = firstBrace(current);
    if (open < 0) {
      done.push(current);
    } else {
      const close = closingBrace(current, open);
      if (close < 0) return err(invalid(pattern, 'unclosed `{`'));
      for (const alternative of splitAlternatives(current.slice(open + 1, close))) {
        pending.push(current.slice(0, open) + alternative + current.slice(close + 1));
      }
    }
    if (done.length + pending.length > MAX_BRACE_EXPANSIONS) {
      return err(invalid(pattern, `more than ${MAX_BRACE_EXPANSIONS} brace expansions`));
    }
  }
  return ok(done.reverse());
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/;

function escapeChar(char: string): string {
  return REGEX_SPECIAL.test(char) ? `\\${char}` : char;
}

/** Translates one path component (no `/`, no braces) to a regex fragment. */
function componentSource(component: string, pattern: string): Result<InvalidGlob, string> {
  let out = '';
  for (let index = 0; index < component.length; index += 1) {
    const char = component[index] as string;
    if (char === '\\') {
      index += 1;
      if (index >= component.length) return err(invalid(pattern, 'trailing `\\`'));
      out += escapeChar(component[index] as string);
    } else if (char === '*') {
      out += '[^/]*';
    } else if (char === '?') {
      out += '[^/]';
    } else if (char === '[') {
      const close = component.indexOf(']', index + 2);
      if (close < 0) return err(invalid(pattern, 'unclosed `[`'));
      let body = component.slice(index + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      const escaped = body.replace(/[\\\]^]/g, (match) => `\\${match}`);
      out += negated ? `[^/${escaped}]` : `[${escaped}]`;
      index = close;
    } else {
      out += escapeChar(char);
    }
  }
  return ok(out);
}

function patternSource(pattern: string, original: string): Result<InvalidGlob, string> {
  const components = pattern.split('/').filter((component) => component !== '' && component !== '.');
  if (components.length === 0) return err(invalid(original, 'empty pattern'));
  let source = '';
  for (let index = 0; index < components.length; index += 1) {
    const component = components[index] as string;
    const last = index === components.length - 1;
    if (component === '..') return err(invalid(original, '`..` is not allowed in patterns'));
    if (component === '**') {
      source += last ? '.*' : '(?:[^/]+/)*';
      continue;
    }
    const fragment = componentSource(component, original);
    if (fragment._tag === 'Left') return fragment;
    source += fragment.right + (last ? '' : '/');
  }
  return ok(source);
}

/** Compiles a glob into a matcher for root-relative paths. */
export function compileGlob(pattern: string): Result<InvalidGlob, RegExp> {
  if (typeof pattern !== 'string' || pattern.length === 0) return err(invalid('', 'empty pattern'));
  if (pattern.length > MAX_GLOB_CHARS) return err(invalid(pattern, `longer than ${MAX_GLOB_CHARS} characters`));
  if (pattern.includes('\u0000')) return err(invalid(pattern, 'contains a NUL byte'));
  if (pattern.startsWith('/')) return err(invalid(pattern, 'patterns are relative to the root'));
  const expanded = expandBraces(pattern);
  if (expanded._tag === 'Left') return expanded;
  const sources: string[] = [];
  for (const alternative of expanded.right) {
    const source = patternSource(alternative, pattern);
    if (source._tag === 'Left') return source;
    sources.push(source.right);
  }
  return ok(new RegExp(`^(?:${sources.join('|')})$`, 'u'));
}

/**
 * Leading components with no glob syntax (`src/lib` of `src/lib/**\/*.ts`):
 * the walk can start there. Empty when the pattern has braces at the top.
 */
export function staticPrefix(pattern: string): string[] {
  const components = pattern.split('/').filter((component) => component !== '' && component !== '.');
  const prefix: string[] = [];
  for (let index = 0; index < components.length - 1; index += 1) {
    const component = components[index] as string;
    if (/[*?[{\\]/.test(component) || component === '..') break;
    prefix.push(component);
  }
  return prefix;
}
