/**
 * One table of the characters that can make text read differently from how a
 * program acts on it. Every place that shows a patch, a file name or other
 * untrusted text to a person escapes these as visible `\u{…}` and counts them,
 * so an approver never reads something other than the bytes that will run:
 * - control: C0/C1 controls (terminal escapes repaint the screen; a lone CR
 *   returns the cursor and overprints the line),
 * - line-break: characters some languages end a line at but terminals do not
 *   (JavaScript ends a `//` comment at U+2028/U+2029; Python's splitlines and
 *   some lexers at VT, FF, U+001C–U+001E and NEL),
 * - bidi: directional controls that reorder what is displayed (Trojan Source),
 * - invisible: zero-width and other default-ignorable code points,
 * - odd-space: spaces other than U+0020,
 * - look-alike: characters whose compatibility form is ASCII (fullwidth and
 *   mathematical letters, ligatures) and non-Latin letters inside a word that
 *   also has Latin letters (a Cyrillic "а" in `pаssword`).
 */

export type CharacterConcern = 'control' | 'line-break' | 'bidi' | 'invisible' | 'odd-space' | 'look-alike';

export const CHARACTER_CONCERNS: readonly CharacterConcern[] = [
  'control',
  'line-break',
  'bidi',
  'invisible',
  'odd-space',
  'look-alike',
];

const LINE_BREAK = /[\u000B\u000C\u001C-\u001E\u0085\u2028\u2029]/u;
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
// Controls other than tab and newline; CR is decided by its neighbour (see classifyAt).
const CONTROL = /[\u0000-\u0008\u000E-\u001B\u001F\u007F-\u0084\u0086-\u009F]/u;
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Co}\uFFF9-\uFFFB]/u;
const ODD_SPACE = /[\p{Zs}\u180E]/u;
const ASCII_ALPHANUMERIC = /^[A-Za-z0-9]+$/;

/** What concern a single character raises on its own, or null when it is ordinary text. */
export function concernOf(ch: string): CharacterConcern | null {
  if (ch === '\t' || ch === '\n' || ch === ' ') return null;
  if (LINE_BREAK.test(ch)) return 'line-break';
  if (BIDI.test(ch)) return 'bidi';
  if (CONTROL.test(ch) || ch === '\r') return 'control';
  if (ODD_SPACE.test(ch)) return 'odd-space';
  if (INVISIBLE.test(ch)) return 'invisible';
  const code = ch.codePointAt(0) ?? 0;
  if (code > 0x7e) {
    // Letters and digits whose compatibility form is ASCII (IDNA folds `ｇｏｏｇｌｅ.com` to google.com);
    // fullwidth punctuation in CJK prose is ordinary text.
    const compat = ch.normalize('NFKC');
    if (compat !== ch && ASCII_ALPHANUMERIC.test(compat)) return 'look-alike';
  }
  return null;
}

export type EscapeFormat = 'brace' | 'json';

/** `\u{202E}` for people; `\u202E` (UTF-16 units) where the text may be JSON, which has no brace form. */
export function visibleEscape(ch: string, format: EscapeFormat = 'brace'): string {
  if (format === 'brace') return `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`;
  let out = '';
  for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`;
  return out;
}

/** The concerns that can hide or reorder what a terminal shows: escaped in every output, chat text included. */
export const HIDING_CONCERNS: ReadonlySet<CharacterConcern> = new Set(['control', 'line-break', 'bidi', 'invisible']);

export interface EscapeOptions {
  /** Which concerns to escape; all of them when absent (patch views and file names). */
  readonly only?: ReadonlySet<CharacterConcern>;
  readonly format?: EscapeFormat;
}

const WORD = /[\p{L}\p{M}\p{N}_$]+/gu;
const LATIN = /\p{Script=Latin}/u;
const LETTER = /\p{L}/u;
const NEUTRAL = /[\p{Script=Common}\p{Script=Inherited}]/u;

/** Indexes (in code units) of letters that mix another script into a word that has Latin letters. */
function mixedScriptPositions(text: string): Set<number> {
  const positions = new Set<number>();
  for (const match of text.matchAll(WORD)) {
    const word = match[0];
    if (/^[\u0000-\u007F]*$/.test(word)) continue;
    const letters = [...word];
    if (!letters.some((ch) => LATIN.test(ch))) continue;
    let offset = match.index ?? 0;
    for (const ch of letters) {
      if (LETTER.test(ch) && !LATIN.test(ch) && !NEUTRAL.test(ch)) positions.add(offset);
      offset += ch.length;
    }
  }
  return positions;
}

export interface EscapedText {
  readonly text: string;
  /** How many characters of each concern were escaped. */
  readonly concerns: ReadonlyMap<CharacterConcern, number>;
}

/**
 * Escapes every concerning character of `text`. A CR directly before LF is a
 * Windows line ending and stays as it is; any other CR is escaped.
 */
/**
 * The punctuation the CLI's own help and messages use beside ASCII (dashes, quotes, the ellipsis,
 * ×, →, ≤, ≥): no concern of any kind, so such text needs no per-character work either — that work
 * compiles Unicode property tables, most of `crustcore --help`'s time over bare node.
 */
export const PLAIN_PUNCTUATION = '\u2013\u2014\u2018\u2019\u201C\u201D\u2026\u00D7\u2192\u2264\u2265';
const PLAIN_TEXT = new RegExp(`^[\\u0020-\\u007E\\t\\n${PLAIN_PUNCTUATION}]*$`);
const NO_CONCERNS: ReadonlyMap<CharacterConcern, number> = new Map();

export function escapeConcerns(text: string, options: EscapeOptions = {}): EscapedText {
  // Most lines of most patches are plain ASCII (or the punctuation above): nothing to escape, no per-character work.
  if (PLAIN_TEXT.test(text)) return { text, concerns: NO_CONCERNS };
  const only = options.only;
  const mixed = only === undefined || only.has('look-alike') ? mixedScriptPositions(text) : new Set<number>();
  const concerns = new Map<CharacterConcern, number>();
  let out = '';
  let index = 0;
  for (const ch of text) {
    let concern = concernOf(ch);
    if (concern === 'control' && ch === '\r' && text[index + 1] === '\n') concern = null;
    if (concern === null && mixed.has(index)) concern = 'look-alike';
    if (concern !== null && only !== undefined && !only.has(concern)) concern = null;
    if (concern === null) out += ch;
    else {
      out += visibleEscape(ch, options.format);
      concerns.set(concern, (concerns.get(concern) ?? 0) + 1);
    }
    index += ch.length;
  }
  return { text: out, concerns };
}

/** The escaped text alone, for file names and patch content shown to a person. */
export const escapeForPerson = (text: string): string => escapeConcerns(text).text;

/** Escapes only what can hide or reorder text (chat and log output keep look-alike letters such as fullwidth punctuation). */
export const escapeHiding = (text: string, format: EscapeFormat = 'brace'): string =>
  escapeConcerns(text, { only: HIDING_CONCERNS, format }).text;
