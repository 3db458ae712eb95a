/**
 * Heuristics for credentials in environment variables. They are deliberately
 * eager: dropping a harmless variable costs a re-run with a renamed variable,
 * leaking a key costs the key. Matching is on whole name parts, so `MONKEY`
 * is not a key but `SIGNING_KEY`, `apiKey` and `GH_TOKEN` are.
 */

const SECRET_NAME_PARTS = new Set([
  'TOKEN',
  'TOKENS',
  'SECRET',
  'SECRETS',
  'PASSWORD',
  'PASSWORDS',
  'PASSWD',
  'PASS',
  'PWD',
  'PASSPHRASE',
  'KEY',
  'KEYS',
  'APIKEY',
  'CREDENTIAL',
  'CREDENTIALS',
  'CREDS',
  'AUTH',
  'AUTHTOKEN',
  'COOKIE',
  'SESSION',
  'PRIVATE',
  'SIGNATURE',
  'SALT',
  'BEARER',
  'OAUTH',
  'JWT',
  'DSN',
]);

// Substrings that mark a secret even inside one run-together word (MYAPITOKEN).
const SECRET_NAME_SUBSTRINGS = ['TOKEN', 'SECRET', 'PASSW', 'APIKEY', 'PRIVATEKEY', 'ACCESSKEY', 'CREDENTIAL'];

/** Splits `apiKey`, `API_KEY`, `api-key` into upper-case parts. */
function nameParts(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((part) => part.length > 0);
}

/** True when the variable's name says it holds a credential. */
export function looksLikeSecretName(name: string): boolean {
  const parts = nameParts(name);
  if (parts.some((part) => SECRET_NAME_PARTS.has(part))) return true;
  const squashed = parts.join('');
  return SECRET_NAME_SUBSTRINGS.some((fragment) => squashed.includes(fragment));
}

const SECRET_VALUE_PATTERNS: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{20,}/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/,
  /\bglpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/, // Slack
  /\bsk-[A-Za-z0-9_-]{20,}/, // OpenAI / Anthropic style
  /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/, // Stripe
  /\bAIza[0-9A-Za-z_-]{35}\b/, // Google API key
  /\bnpm_[A-Za-z0-9]{36}\b/, // npm
  /\bhf_[A-Za-z0-9]{30,}/, // Hugging Face
  /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/, // SendGrid
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./, // JWT
  /[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:[^\s@/]+@/i, // URL with user:password
  /(?:^|[;\s])(?:AccountKey|SharedAccessSignature|password|pwd)=/i, // connection strings
];

function shannonBitsPerChar(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * True when the value looks like a credential: a known token shape, or one
 * long random-looking word (letters and digits mixed, no path or spaces).
 */
export function looksLikeSecretValue(value: string): boolean {
  if (SECRET_VALUE_PATTERNS.some((pattern) => pattern.test(value))) return true;
  if (value.length < 24 || value.length > 4096) return false;
  if (!/^[A-Za-z0-9+/=_.~-]+$/.test(value) || value.startsWith('/')) return false;
  if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) return false;
  return shannonBitsPerChar(value) >= 3.5;
}
