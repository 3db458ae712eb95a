/**
 * Negative type tests (checked by `tsc`), each paired with the runtime
 * behaviour that backs it: a raw key string is not a key source, and a
 * request that is not a ModelRequest is not accepted.
 */
import { SecretMaterial } from '@crustcore/secrets';
import { describe, expect, it } from 'vitest';
import { createAnthropicProvider, readKey, type StreamEvent } from '../src/index.js';
import { drain, request } from './harnesses.js';

describe('key sources', () => {
  it('rejects a raw key string at compile time and at run time', async () => {
    const provider = createAnthropicProvider({
      id: 'a',
      baseUrl: 'http://127.0.0.1:9/v1',
      // @ts-expect-error a key is never a plain string in code: it comes from a secret source
      key: 'sk-ant-raw-string-key',
    });
    const events: StreamEvent[] = await drain(provider.stream(request()));
    expect(events).toEqual([
      {
        type: 'error',
        error: { _tag: 'auth', provider: 'a', message: 'no API key for provider "a": the key source failed' },
      },
    ]);
    // @ts-expect-error same at the lower level
    expect(await readKey('sk-raw')).toMatchObject({ _tag: 'Left' });
  });

  it('accepts the secrets pack’s SecretMaterial as a key source', async () => {
    const material = SecretMaterial.fromText('sk-from-the-vault-123');
    if (material._tag === 'Left') throw new Error(material.left._tag);
    expect(await readKey(material.right)).toEqual({ _tag: 'Right', right: 'sk-from-the-vault-123' });
    material.right.dispose();
    // A disposed secret throws on expose(); the provider reports that as an unavailable key.
    expect(await readKey(material.right)).toMatchObject({ _tag: 'Left', left: { reason: 'the key source failed' } });
  });

  it('accepts a SecretMaterial-like object and an async function, and refuses header injection', async () => {
    expect(await readKey({ expose: () => 'k1' })).toEqual({ _tag: 'Right', right: 'k1' });
    expect(await readKey(async () => 'k2')).toEqual({ _tag: 'Right', right: 'k2' });
    expect(await readKey(() => 'k3\r\nx-evil: 1')).toEqual({
      _tag: 'Left',
      left: { _tag: 'KeyUnavailable', reason: 'the key contains a line break' },
    });
    expect(
      await readKey(async () => {
        throw new Error('vault says: token=hunter2');
      }),
    ).toEqual({ _tag: 'Left', left: { _tag: 'KeyUnavailable', reason: 'the key source failed' } });
  });

  it('does not let a stream event be forged with an unknown error tag', () => {
    // @ts-expect-error `_tag` is a closed set
    const forged: StreamEvent = { type: 'error', error: { _tag: 'teapot', provider: 'p', message: '' } };
    expect(forged.type).toBe('error');
  });
});
