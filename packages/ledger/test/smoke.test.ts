import { sha256Hex } from '@crustcore/kernel';
import { expect, it } from 'vitest';

it('resolves workspace sources', () => {
  expect(sha256Hex('a')).toHaveLength(64);
});
