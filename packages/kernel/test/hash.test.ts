import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../src/hash.js';
import { parseId } from '../src/ids.js';

const nodeSha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

describe('hash', () => {
  it('sha256 matches the FIPS 180-4 vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    expect(sha256Hex('a'.repeat(1_000_000))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  });

  it('sha256 agrees with node:crypto at every padding boundary and on random bytes', () => {
    for (let n = 0; n <= 200; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff);
      expect(sha256Hex(bytes), `length ${n}`).toBe(nodeSha256(bytes));
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4_096 }), (bytes) => sha256Hex(bytes) === nodeSha256(bytes)),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 500 }), (text) => sha256Hex(text) === nodeSha256(text)),
      { numRuns: 300 },
    );
  });

  it('canonical json sorts keys and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: undefined })).toBe('{"a":[true,null,"x"],"b":1}');
  });
  it('parses ids', () => {
    expect(parseId('TaskId', 't_abc')._tag).toBe('Right');
    expect(parseId('TaskId', 'j_abc')._tag).toBe('Left');
  });
});
