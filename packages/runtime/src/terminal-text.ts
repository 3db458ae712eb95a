/**
 * Makes untrusted text (diffs, model output, test logs) safe to print on a
 * terminal: escape sequences, other control characters, bidirectional
 * overrides and zero-width characters are shown as visible `\u{…}` escapes,
 * so a diff cannot repaint the screen, hide a line or reorder what the user
 * reads before approving it.
 */
const INVISIBLE =
  // C0 controls except \t and \n, DEL, C1 controls, bidi controls, zero-width and other invisible format characters.
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\u206A-\u206F\uFEFF\uFFF9-\uFFFB]/g;

export function sanitizeForTerminal(text: string): string {
  return text.replace(INVISIBLE, (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`);
}

/** True when the text had anything that sanitizing changed (worth a warning). */
export const hasHiddenCharacters = (text: string): boolean => {
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.test(text);
  INVISIBLE.lastIndex = 0;
  return found;
};
