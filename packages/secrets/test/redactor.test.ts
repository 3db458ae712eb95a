import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_REDACTABLE_SECRET_LENGTH, Redactor, secretForms, taint } from '../src/index.js';
import { FakeTokens } from './fixtures/detector-corpus.js';
import { handleOf, materialOf, redactorWith } from './helpers.js';

const SECRET = 'pw-Zq8#vL2!xR7"mK9\\tQ4/yT+3';
const exact = (secrets: Record<string, string>) => redactorWith(secrets, { detectors: [] });

describe('registered secrets are replaced in every form', () => {
  const redactor = exact({ vault: SECRET });
  const bytes = Buffer.from(SECRET, 'utf8');
  const cases: Record<string, string> = {
    raw: SECRET,
    base64: bytes.toString('base64'),
    'base64 without padding': bytes.toString('base64').replace(/=+$/, ''),
    base64url: bytes.toString('base64url'),
    'URL-encoded': encodeURIComponent(SECRET),
    'URL-encoded, lowercase hex': encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (p) => p.toLowerCase()),
    'form-encoded': new URLSearchParams({ v: SECRET }).toString().slice(2),
    'JSON-escaped': JSON.stringify(SECRET).slice(1, -1),
    'hex lowercase': bytes.toString('hex'),
    'hex uppercase': bytes.toString('hex').toUpperCase(),
  };
  for (const [form, text] of Object.entries(cases)) {
    it(form, () => {
      const out = redactor.redactText(`before ${text} after`);
      expect(out).toBe('before [REDACTED:vault] after');
    });
  }

  it('inside a larger base64 blob at every byte offset, for both alphabets', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40 }),
        fc.uint8Array({ maxLength: 40 }),
        fc.constantFrom('base64' as const, 'base64url' as const),
        (prefix, suffix, alphabet) => {
          const blob = Buffer.concat([prefix, bytes, suffix]).toString(alphabet);
          const report = redactor.report(`data=${blob}`);
          expect(report.findings.some((f) => f.label === 'vault')).toBe(true);
          // What remains of the blob decodes to at most 2 secret-adjacent bytes on each side.
          const middle = Buffer.from(bytes.subarray(1, bytes.length - 1))
            .toString(alphabet)
            .slice(2, -2);
          expect(report.text).not.toContain(middle);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('forms are distinct and long enough, longest first', () => {
    const forms = secretForms(SECRET);
    expect(new Set(forms).size).toBe(forms.length);
    expect(forms.every((f) => f.length >= 6)).toBe(true);
    expect([...forms].sort((a, b) => b.length - a.length)).toEqual(forms);
  });
});

describe('redactor behaviour', () => {
  it('labels come from the handle; overlapping findings merge into one marker', () => {
    const redactor = exact({ first: 'alpha-bravo-charlie', second: 'charlie-delta-echo' });
    expect(redactor.redactText('x alpha-bravo-charlie-delta-echo y')).toBe('x [REDACTED:first] y');
    expect(redactor.redactText('alpha-bravo-charlie charlie-delta-echo')).toBe('[REDACTED:first] [REDACTED:second]');
  });

  it('refuses secrets too short to redact safely', () => {
    const redactor = new Redactor();
    const short = redactor.register(handleOf('PIN'), materialOf('1234'));
    expect(short).toEqual({
      _tag: 'Left',
      left: { _tag: 'SecretTooShortToRedact', label: 'PIN', minLength: MIN_REDACTABLE_SECRET_LENGTH },
    });
  });

  it('re-registering replaces the value; unregister forgets it; disposed material is refused', () => {
    const redactor = new Redactor({ detectors: [] });
    const h = handleOf('ROTATING');
    redactor.register(h, materialOf('old-value-123456'));
    redactor.register(h, materialOf('new-value-654321'));
    expect(redactor.redactText('old-value-123456 new-value-654321')).toBe('old-value-123456 [REDACTED:ROTATING]');
    expect(redactor.unregister(h)).toBe(true);
    expect(redactor.redactText('new-value-654321')).toBe('new-value-654321');
    const gone = materialOf('disposed-value-1');
    gone.dispose();
    expect(redactor.register(h, gone)._tag).toBe('Left');
  });

  it('accepts tainted input and reports findings without values', () => {
    const redactor = redactorWith({ db: 'db-password-value-77' });
    const report = redactor.report(taint('conn failed for db-password-value-77 (token ghp_x)'));
    expect(report.text).toBe('conn failed for [REDACTED:db] (token ghp_x)');
    expect(report.findings).toEqual([{ label: 'db', source: 'registered', start: 16, end: 36 }]);
    expect(JSON.stringify(report.findings)).not.toContain('db-password-value-77');
  });

  it('redactJson redacts values and keys, and bounds depth', () => {
    const redactor = exact({ k: 'json-secret-value-1' });
    const out = redactor.redactJson({ a: ['json-secret-value-1', 3, null], 'json-secret-value-1': { b: true } });
    expect(out).toEqual({ a: ['[REDACTED:k]', 3, null], '[REDACTED:k]': { b: true } });
    let deep: unknown = 'json-secret-value-1';
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(JSON.stringify(redactor.redactJson(deep))).not.toContain('json-secret-value-1');
  });

  it('the redactor itself never prints its secrets', () => {
    const redactor = exact({ k: 'printed-secret-value' });
    expect(String(redactor)).toBe('Redactor(1 secrets, 0 detectors)');
    expect(() => JSON.stringify(redactor)).toThrow(TypeError);
  });

  it('handles 50 registered secrets at once, and all detectors together', () => {
    const fake = new FakeTokens(50);
    const secrets: Record<string, string> = {};
    for (let i = 0; i < 50; i++) secrets[`s${i}`] = fake.password(20 + (i % 30));
    const redactor = redactorWith(secrets);
    const values = Object.values(secrets);
    const text = values.map((v, i) => `line ${i}: ${i % 2 === 0 ? v : Buffer.from(v).toString('base64')}`).join('\n');
    const out = redactor.redactText(text);
    for (const v of values) expect(out).not.toContain(v);
    expect(out.match(/\[REDACTED:s\d+\]/g)?.length).toBe(50);
  });
});

describe('the exact matcher agrees with a naive search', () => {
  // 'a', 'q', 'A' and '1' share their low 4 bits, so the matcher's prefix signature collides on them
  // and only the exact comparison tells them apart.
  it.each([
    ['a small alphabet', ['a', 'b', 'c']],
    ['characters whose signatures collide', ['a', 'q', 'A', '1', 'b']],
  ])('finds the same union of spans as indexOf over every pattern (%s)', (_name, letters) => {
    const alphabet = fc.constantFrom(...letters);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: alphabet, minLength: 8, maxLength: 12 }), { minLength: 1, maxLength: 5 }),
        fc.string({ unit: alphabet, maxLength: 200 }),
        (secrets, text) => {
          const redactor = new Redactor({ detectors: [] });
          secrets.forEach((s, i) => {
            redactor.register(handleOf(`S${i}`), materialOf(s));
          });
          const covered = new Array<boolean>(text.length).fill(false);
          for (const s of secrets) {
            for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + 1)) {
              for (let k = at; k < at + s.length; k++) covered[k] = true;
            }
          }
          const expected = text
            .split('')
            .map((ch, i) => (covered[i] ? '#' : ch))
            .join('');
          const actual = redactor.redactText(text).replace(/\[REDACTED:S\d+\]/g, '#');
          // Each merged run of covered characters becomes one marker.
          expect(actual).toBe(expected.replace(/#+/g, '#'));
        },
      ),
      { numRuns: 300 },
    );
  });
});
