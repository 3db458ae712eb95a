/**
 * Makes untrusted text (diffs, model output, test logs) safe to print on a
 * terminal. The characters that matter are one table (characters.ts), shared
 * with the patch view and the verifier's `hidden-content` risk, so what a surface escapes and what needs a person
 * cannot disagree.
 * - `sanitizeForTerminal` (chat, logs, summaries) escapes what can hide or
 *   reorder text: controls and escape sequences, characters some languages
 *   read as line breaks, bidirectional controls, invisible characters.
 * - `sanitizeName` (file names, anything a person matches against a path)
 *   also escapes unusual spaces and look-alike letters.
 * - `guardOutput` is the last line of defence: every write to the CLI's own
 *   stdout and stderr passes through it, so a command that forgot to sanitize
 *   still cannot send the terminal a control it did not mean to.
 */
import { decodeBytes } from './bytes.js';
import { escapeConcerns, escapeForPerson, escapeHiding, HIDING_CONCERNS } from './characters.js';

/**
 * What the guard wraps: anything with a stream's `write` (a node Writable). Structural, so this
 * package needs no node: module, not even its types.
 */
export interface TextSink {
  write(chunk: never, ...rest: never[]): boolean;
}

export const sanitizeForTerminal = (text: string): string => escapeHiding(text);

export const sanitizeName = (name: string): string => escapeForPerson(name);

/** True when the text had anything that sanitizing changed (worth a warning). */
export const hasHiddenCharacters = (text: string): boolean =>
  escapeConcerns(text, { only: HIDING_CONCERNS }).concerns.size > 0;

// The only escape sequences the CLI itself writes: the styles of cli/output.ts.
const OWN_SGR = /\u001b\[(?:1|2|22|31|32|33|36|39)m/g;

/**
 * Escapes every hiding character except the CLI's own style sequences. The
 * escapes are JSON's `\uXXXX`, so a `--json` line stays valid JSON (inside a
 * JSON string they mean the same character; JSON.stringify already escaped
 * the controls).
 */
export function guardTerminalText(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(OWN_SGR)) {
    const at = match.index ?? 0;
    out += escapeHiding(text.slice(last, at), 'json') + match[0];
    last = at + match[0].length;
  }
  return out + escapeHiding(text.slice(last), 'json');
}

const UNGUARDED = Symbol('crustcore.unguarded');

/**
 * The stream under a guard, for readline and the run's status line alone: a line editor moves the
 * cursor and clears the line with escape sequences of its own, and text it echoes is what the
 * person typed; the status line writes a carriage return and an erase-line, and sanitizes its
 * text itself. Everything else writes through the guard.
 */
export function unguarded<T extends TextSink>(stream: T): T {
  return ((stream as unknown as Record<symbol, unknown>)[UNGUARDED] as T | undefined) ?? stream;
}

/** The stream with every write guarded; everything else (isTTY, events, columns) is the stream's own. */
export function guardOutput<T extends TextSink>(stream: T): T {
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    const text =
      typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? decodeBytes(chunk).text : String(chunk);
    return (stream.write as (...args: unknown[]) => boolean)(guardTerminalText(text), ...rest);
  };
  return new Proxy(stream, {
    get(target, property) {
      if (property === 'write') return write;
      if (property === UNGUARDED) return target;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
