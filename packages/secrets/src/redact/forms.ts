/**
 * The spellings a secret takes on its way through tools: as-is, URL-encoded,
 * JSON-escaped, hex in either case, and base64 / base64url — both on its own
 * and embedded at any byte offset inside a larger base64 blob (three
 * alignments; each contributes the characters that depend on the secret's
 * bits alone). Fragments (every window of the raw secret) catch a secret
 * printed in pieces or cut short.
 */
import { Buffer } from 'node:buffer';

/** Forms shorter than this are not matched: they would redact ordinary text. */
export const MIN_FORM_LENGTH = 6;

type Base64Alphabet = 'base64' | 'base64url';

/**
 * The characters of base64(prefix ‖ secret ‖ suffix) that depend only on the
 * secret, when the secret starts `alignment` bytes into a 3-byte group.
 */
function base64Core(bytes: Uint8Array, alignment: 0 | 1 | 2, alphabet: Base64Alphabet): string {
  const padded = Buffer.alloc(alignment + bytes.byteLength);
  padded.set(bytes, alignment);
  const encoded = padded.toString(alphabet).replace(/=+$/, '');
  const startBits = alignment * 8;
  const endBits = (alignment + bytes.byteLength) * 8;
  const first = Math.ceil(startBits / 6);
  const last = Math.floor(endBits / 6);
  padded.fill(0);
  return encoded.slice(first, last);
}

/** Every distinct form of the secret worth matching, longest first. */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>();
  forms.add(secret);
  const uriEncoded = encodeURIComponent(secret);
  forms.add(uriEncoded);
  forms.add(uriEncoded.replace(/%[0-9A-F]{2}/g, (percent) => percent.toLowerCase()));
  forms.add(new URLSearchParams({ v: secret }).toString().slice(2));
  // String-literal escapings: JSON, single-quoted (util.inspect, JS, Python), and backslashes alone.
  forms.add(JSON.stringify(secret).slice(1, -1));
  forms.add(secret.replace(/\\/g, '\\\\').replace(/'/g, "\\'"));
  forms.add(secret.replace(/\\/g, '\\\\'));
  const hex = bytes.toString('hex');
  forms.add(hex);
  forms.add(hex.toUpperCase());
  for (const alphabet of ['base64', 'base64url'] as const) {
    const whole = bytes.toString(alphabet);
    forms.add(whole);
    forms.add(whole.replace(/=+$/, ''));
    for (const alignment of [0, 1, 2] as const) forms.add(base64Core(bytes, alignment, alphabet));
  }
  bytes.fill(0);
  return [...forms].filter((form) => form.length >= MIN_FORM_LENGTH).sort((a, b) => b.length - a.length);
}

/** Fragments are only made for secrets up to this long: the table grows with length × window. */
export const MAX_FRAGMENTED_SECRET_LENGTH = 512;

/**
 * Every `length`-character window of the raw secret, so a secret printed in
 * pieces (halves, a truncated copy) is still redacted piece by piece. A
 * random 12-character window occurs in unrelated text with negligible
 * probability; a secret no longer than the window has no fragments.
 */
export function secretFragments(secret: string, length: number): string[] {
  if (length < MIN_FORM_LENGTH || secret.length <= length || secret.length > MAX_FRAGMENTED_SECRET_LENGTH) return [];
  const windows = new Set<string>();
  for (let at = 0; at + length <= secret.length; at++) windows.add(secret.slice(at, at + length));
  return [...windows];
}
