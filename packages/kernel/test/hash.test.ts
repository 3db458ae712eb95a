import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../src/hash.js';
import { parseId } from '../src/ids.js';

describe('hash', () => {
  it('sha256 of empty string', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
  it('canonical json sorts keys and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: undefined })).toBe('{"a":[true,null,"x"],"b":1}');
  });
  it('parses ids', () => {
    expect(parseId('TaskId', 't_abc')._tag).toBe('Right');
    expect(parseId('TaskId', 'j_abc')._tag).toBe('Left');
  });
});
