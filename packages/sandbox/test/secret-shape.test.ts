import { describe, expect, it } from 'vitest';
import { looksLikeSecretName, looksLikeSecretValue } from '../src/index.js';

describe('looksLikeSecretName', () => {
  it.each([
    'GH_TOKEN',
    'API_KEY',
    'apiKey',
    'MY_SECRET',
    'DB_PASSWORD',
    'SIGNING_KEY',
    'SESSION_COOKIE',
    'MYAPITOKEN',
    'client-secret',
    'PRIVATE_KEY_PATH',
  ])('flags %s', (name) => expect(looksLikeSecretName(name)).toBe(true));

  it.each(['PATH', 'NODE_ENV', 'MONKEY', 'KEYBOARD_LAYOUT', 'CI', 'LANG', 'PYTHONPATH', 'TOKENIZERS_PARALLELISM_X'])(
    'does not flag %s',
    (name) => {
      // TOKENIZERS… contains TOKEN as a substring: eager on purpose.
      expect(looksLikeSecretName(name)).toBe(name.startsWith('TOKENIZERS'));
    },
  );
});

describe('looksLikeSecretValue', () => {
  it.each([
    'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    'AKIAIOSFODNN7EXAMPLE',
    'sk-proj-abcdefghijklmnopqrstuvwx',
    'xoxb-123456789012-abcdefghij',
    'https://user:hunter2@example.com/repo.git',
    '-----BEGIN OPENSSH PRIVATE KEY-----\nabc',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig',
    'Zq8vN3xK0pL7mR2sT9wY4bC6dF1gH5jA',
  ])('flags %s', (value) => expect(looksLikeSecretValue(value)).toBe(true));

  it.each([
    'test',
    '/usr/bin:/bin',
    'C.UTF-8',
    'production',
    '1',
    'https://example.com/path',
    'a long sentence with words in it',
  ])('does not flag %s', (value) => expect(looksLikeSecretValue(value)).toBe(false));
});
