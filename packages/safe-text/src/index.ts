/**
 * @crustcore/safe-text: the one table of characters that make text read
 * differently from how a program acts on it, lossless bytes-to-text, and the
 * terminal guard every CLI write passes through. A leaf: it imports nothing,
 * so the CLI can guard its output at start-up without loading the verifier
 * (`crustcore --help` stays as fast as Node allows). @crustcore/verify and
 * @crustcore/runtime re-export it unchanged.
 */
export { byteOrderMark, type DecodedBytes, declaredNonUtf8Encoding, decodeBytes } from './bytes.js';
export {
  CHARACTER_CONCERNS,
  type CharacterConcern,
  concernOf,
  type EscapedText,
  type EscapeFormat,
  type EscapeOptions,
  escapeConcerns,
  escapeForPerson,
  escapeHiding,
  HIDING_CONCERNS,
  visibleEscape,
} from './characters.js';
export {
  guardOutput,
  guardTerminalText,
  hasHiddenCharacters,
  sanitizeForTerminal,
  sanitizeName,
  type TextSink,
  unguarded,
} from './terminal-text.js';
