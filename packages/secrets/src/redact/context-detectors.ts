/**
 * Detectors that need the text around a value: PEM blocks and JWTs (long,
 * with a trigger literal), credentials in URLs and headers, and values that
 * are secrets only because of the name they are assigned to (an AWS secret
 * key is forty base64 characters; so is much else).
 */
import { Buffer } from 'node:buffer';
import { anyCase, type Detector, exactly } from './detector-model.js';
import {
  lettersAndDigits,
  looksLikeExampleToken,
  looksLikeKey,
  looksLikePlaceholder,
  looksRandom,
} from './value-checks.js';

/** `name = value`, `name: "value"`, `"name": "value"`, `name := value`, `name => value`. */
const ASSIGNMENT = `["']?\\s{0,5}(?::=|=>|[:=])\\s{0,5}["']?`;

/** A name starts a word, or starts a camelCase part (`stripeSecret`). */
const NAME_START = '(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))';

/** `(?:Secret|secret|SECRET)`: the spellings a name takes in code and env files. */
const spellings = (word: string): string =>
  `(?:${word[0]!.toUpperCase()}${word.slice(1)}|${word}|${word.toUpperCase()})`;

/** Words that name a secret on their own, and words that do when followed by "key". */
const SECRET_WORDS = ['password', 'passwd', 'pass', 'pwd', 'secret', 'token'];
const KEY_WORDS = ['api', 'access', 'secret', 'private', 'signing', 'encryption', 'master', 'app'];

const SECRET_NAME = `(?:${SECRET_WORDS.map(spellings).join('|')}|(?:${KEY_WORDS.map(spellings).join('|')})[_.-]?${spellings('key')})`;

const PEM_SPACE = '(?: |%20|\\+)';
/** ` RSA PRIVATE KEY`, ` PRIVATE KEY BLOCK`, …: up to three words before PRIVATE KEY. */
const PEM_LABEL = `(?:${PEM_SPACE}[A-Z0-9]{1,12}){0,3}${PEM_SPACE}PRIVATE${PEM_SPACE}KEY(?:${PEM_SPACE}BLOCK)?`;

/** `/`, or `%2F` when a URL travels URL-encoded inside another URL. */
const SLASH = '(?:\\/|%2F|%2f)';

/** A YAML env entry names its value one line earlier: `- name: DB_PASSWORD` / `value: "…"`. */
const NAMED_VALUE_NAME =
  '[A-Za-z0-9_]{0,40}(?:PASSWORD|PASSWD|SECRET|TOKEN|KEY|Password|Secret|Token|Key)[A-Za-z0-9_]{0,20}';

/** Is this `Basic` value base64 of `user:password`? */
function isBasicCredential(value: string): boolean {
  if (!/^[A-Za-z0-9+/]{8,}={0,2}$/.test(value)) return false;
  const decoded = Buffer.from(value, 'base64').toString('latin1');
  return /^[\x21-\x7e]{1,128}:[\x20-\x7e]{1,256}$/.test(decoded) && !looksLikePlaceholder(decoded.split(':')[1]!);
}

function bearerAccept(value: string, context = ''): boolean {
  if (/^basic/i.test(context)) return isBasicCredential(value);
  return looksLikeKey(value);
}

/** Not all-hex-of-one-case look-alike checks: an AWS secret mixes cases and is not AWS's documented example. */
const awsSecretAccept = (value: string): boolean => !/EXAMPLE/i.test(value) && lettersAndDigits(value);

export const CONTEXT_DETECTORS: readonly Detector[] = [
  {
    id: 'private-key',
    // A space may be URL-encoded (%20 or +) when a key travels in a query string. The body is a
    // tempered run that cannot contain "-----END", so it splits from the footer one way only; a
    // block with no footer within the bound is redacted to the bound (failing closed).
    source: `()(-----BEGIN${PEM_LABEL}-----(?:(?!-----END)[\\s\\S]){0,16384}(?:-----END${PEM_LABEL}-----)?)`,
    flags: 'g',
    maxMatchLength: 16_384 + 2 * 90,
    trigger: '-----BEGIN',
    anchors: [exactly('-----BEGIN')],
    accept: null,
  },
  {
    id: 'aws-secret-access-key',
    // Forty base64 characters are everywhere; only the surrounding name makes them an AWS secret.
    source: `(?<![A-Za-z0-9])((?:aws[_ .-]?)?secret[_ .-]?access[_ .-]?key${ASSIGNMENT}|aws[_ .-]?secret[_ .-]?key${ASSIGNMENT})([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
    flags: 'gi',
    maxMatchLength: 30 + 12 + 40,
    trigger: null,
    anchors: [anyCase('aws'), anyCase('secret')],
    accept: awsSecretAccept,
  },
  {
    id: 'gcp-service-account-key',
    // The key id of a service-account JSON file; its private key is caught as a PEM block.
    source: `(?<![A-Za-z0-9])(private_key_id${ASSIGNMENT})([0-9a-f]{40})(?![0-9a-f])`,
    flags: 'g',
    maxMatchLength: 14 + 14 + 40,
    trigger: null,
    anchors: [exactly('private_key_id')],
    accept: null,
  },
  {
    id: 'azure-storage-key',
    source:
      '(?<![A-Za-z0-9])((?:AccountKey|SharedAccessKey)=)([A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])',
    flags: 'gi',
    maxMatchLength: 16 + 88,
    trigger: null,
    anchors: [anyCase('AccountKey='), anyCase('SharedAccessKey=')],
    accept: lettersAndDigits,
  },
  {
    id: 'azure-sas-signature',
    source: '([?&;]sig=)([A-Za-z0-9%+/]{40,120}(?:%3D|%3d|=){0,2})',
    flags: 'g',
    maxMatchLength: 5 + 120 + 6,
    trigger: null,
    anchors: [exactly('sig=')].map((a) => ({ ...a, back: { chars: '?&;', max: 1 } })),
    accept: lettersAndDigits,
  },
  {
    id: 'heroku-key',
    // Classic Heroku API keys are UUIDs: secret only under a Heroku name.
    source: `(?<![A-Za-z0-9])((?:heroku|HEROKU|Heroku)[A-Za-z0-9_.-]{0,24}${ASSIGNMENT})([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![0-9a-fA-F-])`,
    flags: 'g',
    maxMatchLength: 6 + 24 + 14 + 36,
    trigger: null,
    anchors: [anyCase('heroku')],
    accept: null,
  },
  {
    id: 'discord-webhook',
    source: `((?:ptb\\.|canary\\.)?discord(?:app)?\\.com${SLASH}api${SLASH}webhooks${SLASH})([0-9]{17,20}${SLASH}[A-Za-z0-9_-]{60,68})(?![A-Za-z0-9_-])`,
    flags: 'g',
    maxMatchLength: 48 + 23 + 68,
    trigger: null,
    anchors: [exactly('discord'), exactly('ptb.discord'), exactly('canary.discord')],
    accept: null,
  },
  {
    id: 'slack-webhook',
    source: `(hooks\\.slack\\.com${SLASH}(?:services|workflows|triggers)${SLASH})([A-Za-z0-9]{8,14}${SLASH}[A-Za-z0-9]{8,14}${SLASH}[A-Za-z0-9]{16,64})(?![A-Za-z0-9])`,
    flags: 'g',
    maxMatchLength: 40 + 17 + 17 + 64,
    trigger: null,
    anchors: [exactly('hooks.slack.com')],
    accept: (value) => !looksLikeExampleToken(value.slice(value.search(/[A-Za-z0-9]{16,64}$/))),
  },
  {
    id: 'secret-assignment',
    source: `(?<![A-Za-z0-9])(name:\\s{0,3}["']?${NAMED_VALUE_NAME}["']?[ \\t]{0,20}\\r?\\n[ \\t]{0,20}(?:-[ \\t]{1,4})?value:\\s{0,3}["']?)([^\\s"'\`&,;<>]{8,200})`,
    flags: 'g',
    maxMatchLength: 10 + 62 + 50 + 12 + 200,
    trigger: null,
    anchors: [exactly('name:')],
    accept: looksRandom,
  },
  {
    id: 'jwt',
    // Each segment is taken whole, never backtracked: (?=(x))\\3 is an atomic group in JavaScript.
    source:
      '\\b()(eyJ(?=([A-Za-z0-9_-]{8,4096}))\\3\\.eyJ(?=([A-Za-z0-9_-]{8,4096}))\\4\\.(?=([A-Za-z0-9_-]{8,4096}))\\5)',
    flags: 'g',
    maxMatchLength: 3 * 4096 + 8,
    trigger: 'eyJ',
    anchors: [exactly('eyJ')],
    accept: null,
  },
  {
    id: 'connection-string-password',
    // Starts at "://"; the password is what sits between "user:" and "@".
    source: `(:\\/\\/[^\\s:@\\/?#"'<>]{0,128}:)([^\\s@\\/?#"'<>]{1,256})@`,
    flags: 'g',
    maxMatchLength: 3 + 128 + 1 + 256 + 1,
    trigger: null,
    anchors: [exactly('://')],
    accept: (value) => !looksLikePlaceholder(value),
  },
  {
    id: 'bearer-credential',
    source:
      '(?<![A-Za-z0-9])((?:bearer|basic|authorization:\\s{0,5}token)\\s{1,5})([A-Za-z0-9._~+/-]{16,512}={0,2})(?![A-Za-z0-9._~+/=-])',
    flags: 'gi',
    maxMatchLength: 30 + 5 + 512 + 2,
    trigger: null,
    anchors: [anyCase('bearer'), anyCase('basic'), anyCase('authorization')],
    accept: bearerAccept,
  },
  {
    id: 'secret-assignment',
    source: `${NAME_START}(${SECRET_NAME}${ASSIGNMENT})([^\\s"'\`&,;<>]{8,200})`,
    flags: 'g',
    maxMatchLength: 16 + 14 + 200,
    trigger: null,
    anchors: [
      ...SECRET_WORDS.filter((w) => w !== 'passwd' && w !== 'password'),
      ...KEY_WORDS.filter((w) => w !== 'secret'),
    ].map(anyCase),
    accept: looksRandom,
  },
];
