/**
 * Splits one command string into argv the way a POSIX shell splits words —
 * quotes and backslashes respected — but never runs a shell. Anything a shell
 * would change beyond quote removal (operators, redirections, expansions,
 * globs, comments, leading `NAME=value` assignments) is rejected as a typed
 * error, so the argv that runs is exactly the text the user can see.
 */
import { err, ok, type Result } from '@crustcore/kernel';

export type ArgvErrorReason =
  | 'empty'
  | 'too-long'
  | 'too-many-words'
  | 'unterminated-quote'
  | 'trailing-backslash'
  | 'operator'
  | 'expansion'
  | 'glob'
  | 'comment'
  | 'assignment';

export interface ArgvError {
  readonly _tag: 'ArgvError';
  readonly reason: ArgvErrorReason;
  /** Offending text (at most 40 characters). */
  readonly detail: string;
  /** Character offset in the input where the problem starts. */
  readonly index: number;
  readonly message: string;
}

/** A non-empty argv: program first. */
export type Argv = readonly [string, ...string[]];

export const MAX_COMMAND_CHARS = 8192;
export const MAX_ARGV_WORDS = 256;

const OPERATOR_CHARS = new Set(['|', '&', ';', '<', '>', '(', ')', '\n']);
const GLOB_CHARS = new Set(['*', '?', '[']);
const BLANK = new Set([' ', '\t']);
// Inside double quotes a backslash only escapes these (POSIX 2.2.3).
const DOUBLE_QUOTE_ESCAPABLE = new Set(['$', '`', '"', '\\', '\n']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function failure(reason: ArgvErrorReason, detail: string, index: number, message: string): ArgvError {
  return { _tag: 'ArgvError', reason, detail: detail.slice(0, 40), index, message };
}

/**
 * `splitArgv('node --test "a b"')` → `['node', '--test', 'a b']`.
 * Returns an `ArgvError` for anything that would need a shell to mean what it says.
 */
export function splitArgv(text: string): Result<ArgvError, Argv> {
  if (text.length > MAX_COMMAND_CHARS) {
    return err(failure('too-long', '', MAX_COMMAND_CHARS, `command is longer than ${MAX_COMMAND_CHARS} characters`));
  }
  const words: string[] = [];
  // `inWord` is set by quotes too, so `""` is an empty argument; `unquotedPrefix` is the
  // word's leading unquoted run, which is what makes a shell treat `NAME=value` as an assignment.
  let word = '';
  let inWord = false;
  let unquotedPrefix = '';
  let i = 0;
  const finishWord = (): Result<ArgvError, null> => {
    if (!inWord) return ok(null);
    if (words.length === 0 && ASSIGNMENT.test(unquotedPrefix)) {
      return err(
        failure(
          'assignment',
          word,
          i,
          'leading NAME=value assignments need a shell; pass the environment separately or quote the word',
        ),
      );
    }
    if (words.length >= MAX_ARGV_WORDS) {
      return err(failure('too-many-words', word, i, `more than ${MAX_ARGV_WORDS} words`));
    }
    words.push(word);
    word = '';
    inWord = false;
    unquotedPrefix = '';
    return ok(null);
  };

  while (i < text.length) {
    const ch = text[i] as string;
    if (BLANK.has(ch)) {
      const done = finishWord();
      if (done._tag === 'Left') return done;
      i += 1;
      continue;
    }
    if (OPERATOR_CHARS.has(ch)) {
      const shown = ch === '\n' ? '\\n' : text.slice(i, i + 2).replace(/[^|&;<>()]/g, '');
      return err(
        failure(
          'operator',
          shown,
          i,
          `shell operator "${shown}" is not allowed: verify commands are one argv, never a shell line (quote it to pass it literally)`,
        ),
      );
    }
    if (ch === '$' || ch === '`') {
      return err(
        failure(
          'expansion',
          text.slice(i, i + 8),
          i,
          `"${ch}" would be expanded by a shell; quote it with '…' to pass it literally`,
        ),
      );
    }
    if (ch === '#' && !inWord) {
      return err(
        failure('comment', text.slice(i, i + 8), i, '"#" starts a shell comment; quote it to pass it literally'),
      );
    }
    if (ch === '~' && !inWord) {
      return err(
        failure('expansion', text.slice(i, i + 8), i, '"~" would be expanded by a shell; quote it or spell the path'),
      );
    }
    if (GLOB_CHARS.has(ch)) {
      return err(failure('glob', ch, i, `"${ch}" would be a glob in a shell; quote it to pass it literally`));
    }
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return err(failure('unterminated-quote', text.slice(i, i + 20), i, "unterminated ' quote"));
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (ch === '"') {
      const start = i;
      i += 1;
      let closed = false;
      while (i < text.length) {
        const c = text[i] as string;
        if (c === '"') {
          closed = true;
          i += 1;
          break;
        }
        if (c === '$' || c === '`') {
          return err(
            failure(
              'expansion',
              text.slice(i, i + 8),
              i,
              `"${c}" inside double quotes would be expanded; use '…' quotes`,
            ),
          );
        }
        if (c === '\\' && i + 1 < text.length && DOUBLE_QUOTE_ESCAPABLE.has(text[i + 1] as string)) {
          const next = text[i + 1] as string;
          // A backslash-newline is a line continuation: both characters vanish.
          if (next !== '\n') word += next;
          i += 2;
          continue;
        }
        word += c;
        i += 1;
      }
      if (!closed)
        return err(failure('unterminated-quote', text.slice(start, start + 20), start, 'unterminated " quote'));
      inWord = true;
      continue;
    }
    if (ch === '\\') {
      if (i + 1 >= text.length) return err(failure('trailing-backslash', '\\', i, 'trailing backslash'));
      const next = text[i + 1] as string;
      if (next !== '\n') {
        word += next;
        inWord = true;
      }
      i += 2;
      continue;
    }
    if (!inWord || unquotedPrefix.length === word.length) unquotedPrefix += ch;
    word += ch;
    inWord = true;
    i += 1;
  }
  const done = finishWord();
  if (done._tag === 'Left') return done;
  const [first, ...rest] = words;
  if (first === undefined) return err(failure('empty', '', 0, 'the command is empty'));
  return ok([first, ...rest]);
}

/** Quotes argv back into a string that `splitArgv` (and a POSIX shell) reads as the same words. */
export function quoteArgv(argv: readonly string[]): string {
  return argv
    .map((word) => (/^[A-Za-z0-9_@%+:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}
