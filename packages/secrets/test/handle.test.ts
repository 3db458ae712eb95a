import { isId } from '@crustcore/kernel';
import { PathReporter } from 'io-ts/lib/PathReporter.js';
import { describe, expect, it } from 'vitest';
import { parseSecretReference, SecretHandle, SecretReferenceC } from '../src/index.js';
import { FakeTokens } from './fixtures/detector-corpus.js';

const handle = (name: string, label?: string): SecretHandle => {
  const made = SecretHandle.create(name, label);
  if (made._tag === 'Left') throw new Error(made.left.reason);
  return made.right;
};

describe('SecretHandle', () => {
  it('has a stable id, a label and a secret:// URI, all safe to show', () => {
    const h = handle('OPENAI_API_KEY', 'OpenAI key');
    expect(h.uri).toBe('secret://OPENAI_API_KEY');
    expect(String(h)).toBe('secret://OPENAI_API_KEY');
    expect(isId('SecretId', h.id)).toBe(true);
    expect(h.id).toBe(handle('OPENAI_API_KEY').id);
    expect(h.id).not.toBe(handle('OPENAI_API_KEY2').id);
    expect(JSON.parse(JSON.stringify(h))).toEqual({
      id: h.id,
      name: 'OPENAI_API_KEY',
      label: 'OpenAI key',
      uri: 'secret://OPENAI_API_KEY',
    });
  });

  it('refuses bad names and labels that could break a redaction marker', () => {
    for (const bad of ['', '1abc', 'a b', 'a/b', 'x'.repeat(65), 'näme', '-x']) {
      expect(SecretHandle.create(bad)._tag).toBe('Left');
    }
    expect(SecretHandle.create('ok', 'has ] bracket')._tag).toBe('Left');
    expect(SecretHandle.create('ok', 'line\nbreak')._tag).toBe('Left');
    expect(SecretHandle.create('ok', 'Fine label.')._tag).toBe('Right');
  });
});

describe('config resolver', () => {
  it('accepts secret://NAME only', () => {
    const parsed = parseSecretReference('secret://GITHUB_TOKEN');
    expect(parsed._tag === 'Right' && parsed.right.name).toBe('GITHUB_TOKEN');
    expect(parseSecretReference('secret://')._tag).toBe('Left');
    expect(parseSecretReference('secret://bad name')._tag).toBe('Left');
    expect(parseSecretReference(42)._tag).toBe('Left');
    const plain = parseSecretReference('gpt-4o');
    expect(plain._tag === 'Left' && plain.left._tag).toBe('NotASecretReference');
  });

  it('refuses raw-looking values as RawSecretInConfig without repeating them', () => {
    const fake = new FakeTokens(7);
    const raws = [fake.github(), fake.openai(), fake.awsKeyId(), fake.mixed('abcdefXYZ0123456789', 32), fake.stripe()];
    for (const raw of raws) {
      const parsed = parseSecretReference(raw);
      expect(parsed._tag === 'Left' && parsed.left._tag).toBe('RawSecretInConfig');
      expect(JSON.stringify(parsed)).not.toContain(raw);
    }
  });

  it('the io-ts codec decodes handles and its error report withholds the value', () => {
    const decoded = SecretReferenceC.decode('secret://NPM_TOKEN');
    expect(decoded._tag === 'Right' && decoded.right.uri).toBe('secret://NPM_TOKEN');
    const raw = new FakeTokens(8).github();
    const failed = SecretReferenceC.decode(raw);
    expect(failed._tag).toBe('Left');
    const report = PathReporter.report(failed).join('\n');
    expect(report).toContain('RawSecretInConfig');
    expect(report).not.toContain(raw);
    expect(JSON.stringify(failed)).not.toContain(raw);
    expect(SecretReferenceC.encode(handle('X'))).toBe('secret://X');
  });
});

describe('config resolver inside a larger codec', () => {
  it('withholds the value at every context level', async () => {
    const t = await import('io-ts');
    const Config = t.type({ provider: t.string, apiKey: SecretReferenceC });
    const raw = new FakeTokens(9).openai();
    const failed = Config.decode({ provider: 'openai', apiKey: raw });
    expect(failed._tag).toBe('Left');
    expect(JSON.stringify(failed)).not.toContain(raw);
    expect(PathReporter.report(failed).join('\n')).not.toContain(raw);
  });
});
