import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildInjectedEnv, EnvInjection, secretStdin, withCredentialHeader, withSecretFile } from '../src/index.js';
import { handleOf, materialOf } from './helpers.js';

const VALUE = 'injected-secret-value-9876';

describe('per-request header injection', () => {
  it('adds the credential, replacing any the caller set', () => {
    const headers = withCredentialHeader(
      { Authorization: 'Bearer old', accept: 'application/json' },
      materialOf(VALUE),
    );
    expect(headers).toEqual({ _tag: 'Right', right: { accept: 'application/json', authorization: `Bearer ${VALUE}` } });
    const raw = withCredentialHeader({}, materialOf(VALUE), { header: 'x-api-key', scheme: null });
    expect(raw).toEqual({ _tag: 'Right', right: { 'x-api-key': VALUE } });
  });

  it('refuses secrets that would split the header, and bad header names', () => {
    const split = withCredentialHeader({}, materialOf('line1\r\nX-Evil: 1'));
    expect(split._tag === 'Left' && split.left._tag).toBe('SecretUnusableInHeader');
    expect(JSON.stringify(split)).not.toContain('X-Evil');
    const badName = withCredentialHeader({}, materialOf(VALUE), { header: 'bad header' });
    expect(badName._tag === 'Left' && badName.left._tag).toBe('HeaderNameInvalid');
  });
});

describe('short-lived file handoff', () => {
  it('exists as a 0600 file in a 0700 directory only while in use', async () => {
    let seenPath = '';
    const result = await withSecretFile(materialOf(VALUE), async (path) => {
      seenPath = path;
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(dirname(path))).mode & 0o777).toBe(0o700);
      return readFile(path, 'utf8');
    });
    expect(result).toBe(VALUE);
    await expect(stat(seenPath)).rejects.toThrow();
    await expect(stat(dirname(seenPath))).rejects.toThrow();
  });

  it('is removed when the user throws', async () => {
    let seenPath = '';
    await expect(
      withSecretFile(materialOf(VALUE), async (path) => {
        seenPath = path;
        throw new Error('tool failed');
      }),
    ).rejects.toThrow('tool failed');
    await expect(stat(seenPath)).rejects.toThrow();
  });

  it('stdin bytes for a runner', () => {
    expect(new TextDecoder().decode(secretStdin(materialOf(VALUE)))).toBe(VALUE);
  });
});

describe('environment injection', () => {
  const handle = handleOf('LEGACY_TOKEN');

  it('exists only as a declared value that records profile and reason', () => {
    const declared = EnvInjection.declare({
      variable: 'LEGACY_TOKEN',
      handle,
      profile: 'legacy-deploy',
      reason: 'the deploy tool reads its token only from the environment',
    });
    if (declared._tag === 'Left') throw new Error(declared.left._tag);
    expect(JSON.parse(JSON.stringify(declared.right))).toEqual({
      variable: 'LEGACY_TOKEN',
      uri: 'secret://LEGACY_TOKEN',
      profile: 'legacy-deploy',
      reason: 'the deploy tool reads its token only from the environment',
    });
    const env = buildInjectedEnv(
      { PATH: '/usr/bin' },
      [declared.right],
      new Map([['LEGACY_TOKEN', materialOf(VALUE)]]),
    );
    expect(env).toEqual({ _tag: 'Right', right: { PATH: '/usr/bin', LEGACY_TOKEN: VALUE } });
    const missing = buildInjectedEnv({}, [declared.right], new Map());
    expect(missing._tag === 'Left' && missing.left._tag).toBe('EnvSecretMissing');
  });

  it('refuses reserved variables and missing reasons; a plain object is not an injection', () => {
    for (const variable of ['PATH', 'LD_PRELOAD', 'NODE_OPTIONS', 'lower', 'A-B']) {
      expect(
        EnvInjection.declare({ variable, handle, profile: 'p', reason: 'a long enough reason' })._tag,
        variable,
      ).toBe('Left');
    }
    expect(EnvInjection.declare({ variable: 'X_TOKEN', handle, profile: 'p', reason: 'why' })).toEqual({
      _tag: 'Left',
      left: { _tag: 'EnvReasonMissing' },
    });
    const typeChecks = (): void => {
      // @ts-expect-error — only EnvInjection.declare makes one.
      buildInjectedEnv({}, [{ variable: 'X', handle, profile: 'p', reason: 'r' }], new Map());
    };
    expect(typeof typeChecks).toBe('function');
  });
});
