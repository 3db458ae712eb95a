import { Console } from 'node:console';
import { PassThrough } from 'node:stream';
import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isSecretMaterial, MAX_SECRET_BYTES, SecretMaterial } from '../src/index.js';

const VALUE = 'correct-horse-battery-staple-7319';

function material(value = VALUE): SecretMaterial {
  const made = SecretMaterial.fromText(value);
  if (made._tag === 'Left') throw new Error(made.left._tag);
  return made.right;
}

describe('SecretMaterial never shows its bytes', () => {
  it('String(), template literals, concatenation and toString print [secret]', () => {
    const m = material();
    expect(String(m)).toBe('[secret]');
    expect(`${m}`).toBe('[secret]');
    expect('' + m).toBe('[secret]');
    expect(m.toString()).toBe('[secret]');
    expect(new Error(`failed with ${m}`).message).not.toContain(VALUE);
  });

  it('JSON.stringify throws, also when nested', () => {
    const m = material();
    expect(() => JSON.stringify(m)).toThrow(TypeError);
    expect(() => JSON.stringify({ config: { key: m } })).toThrow(TypeError);
  });

  it('util.inspect, util.format and console.log print [secret]', () => {
    const m = material();
    expect(inspect(m)).toBe('[secret]');
    expect(inspect({ nested: [m] }, { depth: 10, showHidden: true })).not.toContain(VALUE);
    expect(format('%s %o %O', m, m, m)).not.toContain(VALUE);
    const sink = new PassThrough();
    let captured = '';
    sink.on('data', (chunk: Buffer) => {
      captured += chunk.toString();
    });
    const logger = new Console({ stdout: sink, stderr: sink });
    logger.log(m);
    logger.log({ m });
    logger.error('err', m);
    logger.dir(m, { showHidden: true, depth: 5 });
    logger.table([{ m }]);
    expect(captured).toContain('[secret]');
    expect(captured).not.toContain(VALUE);
  });

  it('structuredClone throws instead of copying', () => {
    const m = material();
    expect(() => structuredClone(m)).toThrow(/could not be cloned|DataCloneError|Symbol/i);
    expect(() => structuredClone({ wrapped: m })).toThrow();
  });

  it('has no enumerable data: Object.keys, entries and spread reveal nothing', () => {
    const m = material();
    const spread = { ...m };
    expect(JSON.stringify(Object.keys(m))).toBe('["cloneGuard"]');
    expect(inspect(spread, { showHidden: true })).not.toContain(VALUE);
    expect(Object.getOwnPropertyNames(m)).toEqual(['cloneGuard']);
  });

  it('equality is identity: equal contents are not equal materials', () => {
    const a = material();
    const b = material();
    expect(a === b).toBe(false);
    expect(Object.is(a, b)).toBe(false);
    expect(new Set([a, b]).size).toBe(2);
    // toPrimitive makes both "[secret]": loose comparison with the value itself never holds.
    // biome-ignore lint/suspicious/noDoubleEquals: loose equality is the case under test.
    expect((a as unknown) == VALUE).toBe(false);
  });

  it('expose() is the one way out, and returns the value', () => {
    expect(material().expose()).toBe(VALUE);
    const methods = Object.getOwnPropertyNames(SecretMaterial.prototype).filter((name) => name !== 'constructor');
    const returningValue = methods.filter((name) => {
      const m = material();
      const member = (m as unknown as Record<string, unknown>)[name];
      if (typeof member !== 'function') return typeof member === 'string' && member.includes(VALUE);
      try {
        const out = (member as () => unknown).call(m);
        return typeof out === 'string' && out.includes(VALUE);
      } catch {
        return false;
      }
    });
    expect(returningValue).toEqual(['expose']);
  });

  it('dispose() zero-fills and later expose() throws', () => {
    const source = new TextEncoder().encode(VALUE);
    const made = SecretMaterial.fromBytes(source);
    if (made._tag === 'Left') throw new Error('unexpected');
    const m = made.right;
    source.fill(0); // the material holds its own copy
    expect(m.expose()).toBe(VALUE);
    expect(m.byteLength).toBe(VALUE.length);
    m.dispose();
    expect(m.disposed).toBe(true);
    expect(m.byteLength).toBe(0);
    expect(() => m.expose()).toThrow(/disposed/);
    m.dispose();
  });

  it('refuses empty, oversize and non-text input with typed errors', () => {
    expect(SecretMaterial.fromText('')).toEqual({ _tag: 'Left', left: { _tag: 'SecretEmpty' } });
    expect(SecretMaterial.fromBytes(new Uint8Array())).toEqual({ _tag: 'Left', left: { _tag: 'SecretEmpty' } });
    const big = SecretMaterial.fromBytes(new Uint8Array(MAX_SECRET_BYTES + 1).fill(65));
    expect(big._tag === 'Left' && big.left._tag).toBe('SecretTooLong');
    expect(SecretMaterial.fromBytes(Uint8Array.from([0xff, 0xfe]))).toEqual({
      _tag: 'Left',
      left: { _tag: 'SecretNotText' },
    });
    expect(SecretMaterial.fromText('lone \ud800 surrogate')).toEqual({ _tag: 'Left', left: { _tag: 'SecretNotText' } });
  });

  it('cannot be forged: a plain object is not a SecretMaterial (compile time and run time)', () => {
    const forged = { expose: () => 'x', dispose: () => undefined, cloneGuard: Symbol('x') };
    expect(isSecretMaterial(forged)).toBe(false);
    expect(isSecretMaterial(material())).toBe(true);
    // Compile-time checks (tsc runs over tests); never called.
    const takesMaterial = (m: SecretMaterial): number => m.byteLength;
    const typeChecks = (): void => {
      // @ts-expect-error — the constructor is private.
      new SecretMaterial(new Uint8Array([1]));
      // @ts-expect-error — a structurally similar object lacks the private field.
      takesMaterial(forged);
      // @ts-expect-error — a string is not a SecretMaterial.
      takesMaterial('raw-secret');
    };
    expect(typeof typeChecks).toBe('function');
  });
});
