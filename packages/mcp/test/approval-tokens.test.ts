import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApprovalTokenBook } from '../src/index.js';

const binding = (taskId = 't_one') => ({
  taskId,
  approvalId: 'ap_one',
  nonce: 'n'.repeat(16),
  opHash: 'c'.repeat(64),
  stagedHash: 'a'.repeat(64),
  verificationRunId: 7n,
  patchSha256: 'b'.repeat(64),
});

describe('human-issued approval tokens', () => {
  it('a token redeems once, for its own task only', () => {
    const book = new ApprovalTokenBook();
    const minted = book.mint(binding());
    if (minted._tag === 'Left') throw new Error('mint failed');
    expect(minted.right.token).toMatch(/^cct_[0-9a-hjkmnp-tv-z]{32}$/);
    expect(book.redeem(minted.right.token, 't_one')).toMatchObject({ _tag: 'Right', right: { verificationRunId: 7n } });
    expect(book.redeem(minted.right.token, 't_one')).toMatchObject({ _tag: 'Left', left: { _tag: 'TokenSpent' } });
  });

  it('presented for another task, it is refused and spent', () => {
    const book = new ApprovalTokenBook();
    const minted = book.mint(binding());
    if (minted._tag === 'Left') throw new Error('mint failed');
    expect(book.redeem(minted.right.token, 't_two')).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'TokenForAnotherTask' },
    });
    expect(book.redeem(minted.right.token, 't_one')).toMatchObject({ _tag: 'Left', left: { _tag: 'TokenSpent' } });
  });

  it('expires; a new token for a task revokes the old one; revokeTask drops them', () => {
    let now = 1_000;
    const book = new ApprovalTokenBook({ clockMs: () => now, ttlMs: 100 });
    const first = book.mint(binding());
    const second = book.mint(binding());
    if (first._tag === 'Left' || second._tag === 'Left') throw new Error('mint failed');
    expect(book.redeem(first.right.token, 't_one')._tag).toBe('Left');
    now += 101;
    expect(book.redeem(second.right.token, 't_one')).toMatchObject({ _tag: 'Left', left: { _tag: 'TokenExpired' } });
    const third = book.mint(binding('t_three'));
    if (third._tag === 'Left') throw new Error('mint failed');
    book.revokeTask('t_three');
    expect(book.size).toBe(0);
  });

  it('no string a caller makes up is accepted', () => {
    const book = new ApprovalTokenBook();
    const minted = book.mint(binding());
    if (minted._tag === 'Left') throw new Error('mint failed');
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (guess) => {
        fc.pre(guess !== minted.right.token);
        expect(book.redeem(guess, 't_one')._tag).toBe('Left');
      }),
      { numRuns: 500 },
    );
    expect(book.redeem(minted.right.token, 't_one')._tag).toBe('Right');
  });

  it('tokens do not repeat', () => {
    const book = new ApprovalTokenBook();
    const seen = new Set<string>();
    for (let i = 0; i < 500; i += 1) {
      const minted = book.mint(binding(`t_${i}`));
      if (minted._tag === 'Left') throw new Error('mint failed');
      seen.add(minted.right.token);
    }
    expect(seen.size).toBe(500);
  });
});
