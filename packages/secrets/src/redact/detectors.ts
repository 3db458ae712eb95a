/**
 * Detectors for credentials nobody registered: well-known token formats and
 * secret-looking assignments. Registered secrets are matched exactly (see
 * matcher.ts); detectors are the safety net for keys that arrive from
 * elsewhere (a tool prints a token it found, a config file is read).
 *
 * Every pattern has two capture groups: (context kept visible)(value
 * redacted). Every pattern has a hard upper bound on its match length, which
 * is what lets the streaming redactor hold back a bounded tail; the few
 * patterns whose bound is large (PEM blocks, JWTs) also name a literal every
 * match starts with, so a stream holds back from that literal only when it
 * actually appears.
 */

// ─── model ────────────────────────────────────────────────────────────────

export const DETECTOR_IDS = [
  'private-key',
  'aws-access-key-id',
  'aws-secret-access-key',
  'github-token',
  'anthropic-key',
  'openai-key',
  'google-api-key',
  'slack-token',
  'stripe-key',
  'jwt',
  'connection-string-password',
  'bearer-credential',
  'secret-assignment',
] as const;
export type DetectorId = (typeof DETECTOR_IDS)[number];

export interface Detector {
  readonly id: DetectorId;
  /** Source of a global regex with groups (context)(value). */
  readonly source: string;
  readonly flags: 'g' | 'gi';
  /** No match is longer than this (plus one character of look-ahead). */
  readonly maxMatchLength: number;
  /** A literal every match starts with, for detectors whose bound is large; null otherwise. */
  readonly trigger: string | null;
  /** A second opinion on the value: rejects placeholders and low-entropy look-alikes. */
  readonly accept: ((value: string) => boolean) | null;
}

// ─── value checks ─────────────────────────────────────────────────────────

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

const hasAll = (value: string, classes: readonly RegExp[]): boolean => classes.every((re) => re.test(value));
const LOWER = /[a-z]/;
const UPPER = /[A-Z]/;
const DIGIT = /[0-9]/;

/** Random API keys mix lower, upper and digits; kebab-case identifiers do not. */
const randomMixed = (value: string): boolean => hasAll(value, [LOWER, UPPER, DIGIT]);

/** `process.env.X`, `config.auth.token`, `getPassword(user)`: code that fetches a secret, not the secret. */
const CODE_REFERENCE = /^[A-Za-z_$][A-Za-z_$]{2,}(?:\.[A-Za-z_$][A-Za-z_$]{2,})+$|\(/;

/** Free-form secrets (passwords, tokens in assignments): not a placeholder, not code, not low-entropy. */
export function looksRandom(value: string): boolean {
  if (looksLikePlaceholder(value) || CODE_REFERENCE.test(value)) return false;
  return characterClassCount(value) >= 2 && shannonEntropy(value) >= 3;
}

// ─── the detectors ────────────────────────────────────────────────────────

const KEYWORD_ASSIGNMENT = `["']?\\s{0,5}[:=]\\s{0,5}["']?`;

export const DETECTORS: readonly Detector[] = [
  {
    id: 'private-key',
    source:
      '()(-----BEGIN(?: [A-Z0-9]{1,12}){0,3} PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]{0,16384}?-----END(?: [A-Z0-9]{1,12}){0,3} PRIVATE KEY(?: BLOCK)?-----|[\\s\\S]{0,16384}))',
    flags: 'g',
    // An unterminated block is redacted to the bound: failing closed beats leaking the key body.
    maxMatchLength: 16_384 + 2 * 70,
    trigger: '-----BEGIN',
    accept: null,
  },
  {
    id: 'aws-access-key-id',
    source: '\\b()((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z2-7]{16})\\b',
    flags: 'g',
    maxMatchLength: 20,
    trigger: null,
    accept: null,
  },
  {
    id: 'aws-secret-access-key',
    // Forty base64 characters are everywhere; only the surrounding name makes them an AWS secret.
    source: `(?<![A-Za-z0-9])((?:aws[_ .-]?)?secret[_ .-]?access[_ .-]?key${KEYWORD_ASSIGNMENT}|aws[_ .-]?secret[_ .-]?key${KEYWORD_ASSIGNMENT})([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
    flags: 'gi',
    maxMatchLength: 30 + 12 + 40,
    trigger: null,
    accept: null,
  },
  {
    id: 'github-token',
    source: '\\b()((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244})',
    flags: 'g',
    maxMatchLength: 255,
    trigger: null,
    accept: null,
  },
  {
    id: 'anthropic-key',
    source: '\\b()(sk-ant-[A-Za-z0-9_-]{20,250})',
    flags: 'g',
    maxMatchLength: 257,
    trigger: null,
    accept: randomMixed,
  },
  {
    id: 'openai-key',
    source: '\\b()(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250})',
    flags: 'g',
    maxMatchLength: 261,
    trigger: null,
    accept: randomMixed,
  },
  {
    id: 'google-api-key',
    source: '\\b()(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])',
    flags: 'g',
    maxMatchLength: 39,
    trigger: null,
    accept: null,
  },
  {
    id: 'slack-token',
    source: '\\b()(xox[abposr]-[0-9A-Za-z-]{10,250})',
    flags: 'g',
    maxMatchLength: 255,
    trigger: null,
    accept: (value) => DIGIT.test(value),
  },
  {
    id: 'stripe-key',
    source: '\\b()((?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,250})',
    flags: 'g',
    maxMatchLength: 258,
    trigger: null,
    accept: null,
  },
  {
    id: 'jwt',
    source: '\\b()(eyJ[A-Za-z0-9_-]{8,4096}\\.eyJ[A-Za-z0-9_-]{8,4096}\\.[A-Za-z0-9_-]{8,4096})',
    flags: 'g',
    maxMatchLength: 3 * 4096 + 8,
    trigger: 'eyJ',
    accept: null,
  },
  {
    id: 'connection-string-password',
    // Starts at "://" (a fast literal scan); the password is what sits between "user:" and "@".
    source: `(:\\/\\/[^\\s:@\\/?#"'<>]{0,128}:)([^\\s@\\/?#"'<>]{1,256})@`,
    flags: 'g',
    maxMatchLength: 3 + 128 + 1 + 256 + 1,
    trigger: null,
    accept: (value) => !looksLikePlaceholder(value),
  },
  {
    id: 'bearer-credential',
    source: '(?<![A-Za-z0-9])((?:bearer|basic)\\s{1,5})([A-Za-z0-9._~+/-]{16,512}={0,2})',
    flags: 'gi',
    maxMatchLength: 6 + 5 + 512 + 2,
    trigger: null,
    accept: looksRandom,
  },
  {
    id: 'secret-assignment',
    source: `(?<![A-Za-z0-9])((?:password|passwd|pwd|secret|client[_-]?secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?key|token)${KEYWORD_ASSIGNMENT})([^\\s"'\`&,;<>]{8,200})`,
    flags: 'gi',
    maxMatchLength: 16 + 12 + 200,
    trigger: null,
    accept: looksRandom,
  },
];

export const detectorById = (id: DetectorId): Detector => {
  const found = DETECTORS.find((d) => d.id === id);
  if (found === undefined) throw new Error(`unknown detector ${id}`);
  return found;
};
