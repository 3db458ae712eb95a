/**
 * Second opinions on a detector's value: is it random enough to be a key, or
 * a placeholder, an example from the documentation, or code that fetches a
 * key? Detectors find shapes; these checks keep the shapes that documentation
 * and templates are full of (`xxxx`, `<your-token>`, `${TOKEN}`, AWS's
 * published example pair) from being redacted.
 */

/** Shannon entropy in bits per character. */
export function shannonEntropy(value: string): number {
  if (value.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  const length = [...value].length;
  for (const count of counts.values()) {
    const p = count / length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** How many of: lowercase, uppercase, digit, other. */
export function characterClassCount(value: string): number {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

const PLACEHOLDER =
  /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|<[^>]*>|\{\{.*\}\}|%[sdv]|\*+|[xX.•]+|\[REDACTED.*|(?:your|my|example|sample|change|replace|insert|enter|dummy|placeholder|redacted|fake|test|null|none|undefined|true|false)[A-Za-z0-9_-]*)$/i;

export const looksLikePlaceholder = (value: string): boolean => PLACEHOLDER.test(value);

/**
 * Words that only documentation puts inside a token (AWS's `…EXAMPLE` keys,
 * `ghp_your_token_here`), and filler runs. Bounded: every quantifier is small.
 */
const EXAMPLE_WORDS =
  /example|sample|dummy|placeholder|your[_-]|[_-]here\b|redacted|changeme|xxxx|\*\*\*\*|<|>|\$\{|\{\{/i;

/** A run of six ascending characters (`123456`, `abcdef`): typed by a person, not drawn at random. */
function hasAscendingRun(value: string, run: number): boolean {
  let length = 1;
  for (let i = 1; i < value.length; i++) {
    length = value.charCodeAt(i) === value.charCodeAt(i - 1) + 1 ? length + 1 : 1;
    if (length >= run) return true;
  }
  return false;
}

/** Fewer than this many distinct characters in a token body means filler (`aaaa…`, `abab…`). */
const MIN_DISTINCT = 6;

/**
 * Whether a token-shaped value is a documented placeholder: an example word,
 * a filler run, an ascending run, or too few distinct characters. `body` is
 * the part after a fixed prefix (the prefix itself is not random).
 */
export function looksLikeExampleToken(body: string): boolean {
  if (EXAMPLE_WORDS.test(body)) return true;
  if (new Set(body).size < Math.min(MIN_DISTINCT, body.length)) return true;
  return hasAscendingRun(body, 6);
}

const LOWER = /[a-z]/;
const UPPER = /[A-Z]/;
const DIGIT = /[0-9]/;

/** Random API keys mix lower, upper and digits; kebab-case identifiers do not. */
export const randomMixed = (value: string): boolean => LOWER.test(value) && UPPER.test(value) && DIGIT.test(value);

/** Letters and digits both present: true of nearly every random key, false of words and numbers. */
export const lettersAndDigits = (value: string): boolean =>
  DIGIT.test(value) && (LOWER.test(value) || UPPER.test(value));

/** `process.env.X`, `os.environ[…]`, `getPassword(user)`: code that fetches a secret, not the secret. */
const CODE_REFERENCE = /^[A-Za-z_$]{2,40}(?:\.[A-Za-z_$]{2,40})+(?:\[.{0,200})?$|\(/;

/** Keys their providers publish in web pages on purpose (Stripe publishable, Mapbox public tokens). */
const PUBLISHABLE_KEY = /^(?:pk_(?:live|test)_|pk\.eyJ)/;

/** Free-form secrets (passwords, tokens in assignments): not a placeholder, not code, not low-entropy. */
export function looksRandom(value: string): boolean {
  if (looksLikePlaceholder(value) || CODE_REFERENCE.test(value) || looksLikeExampleToken(value)) return false;
  if (PUBLISHABLE_KEY.test(value)) return false;
  return characterClassCount(value) >= 2 && shannonEntropy(value) >= 3;
}

/** A bearer-style credential: random, and with letters and digits (prose after `Bearer` has no digits). */
export const looksLikeKey = (value: string): boolean => looksRandom(value) && lettersAndDigits(value);

/** Accepts a prefixed token unless its body (after `prefixLength` characters) is an example. */
export const notExampleAfter =
  (prefixLength: number) =>
  (value: string): boolean =>
    !looksLikeExampleToken(value.slice(prefixLength));

/** Accepts a token whose body is not an example and mixes letters and digits. */
export const randomAfter =
  (prefixLength: number) =>
  (value: string): boolean => {
    const body = value.slice(prefixLength);
    return !looksLikeExampleToken(body) && lettersAndDigits(body);
  };
