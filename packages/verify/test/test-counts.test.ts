import { describe, expect, it } from 'vitest';
import { parseTestCounts } from '../src/index.js';

describe('parseTestCounts', () => {
  it('node --test TAP and spec summaries', () => {
    expect(
      parseTestCounts('ok 1 - a\n# tests 5\n# suites 0\n# pass 4\n# fail 1\n# cancelled 0\n# skipped 1\n# todo 0\n'),
    ).toEqual({
      runner: 'node-test',
      total: 5,
      passed: 4,
      failed: 1,
      skipped: 1,
    });
    expect(parseTestCounts('ℹ tests 3\nℹ pass 3\nℹ fail 0\nℹ skipped 0\n')).toMatchObject({
      runner: 'node-test',
      total: 3,
    });
  });
  it('vitest', () => {
    const out = '\u001b[2m      Tests \u001b[22m 1 failed | 4 passed | 2 skipped (7)\n';
    expect(parseTestCounts('', out)).toEqual({ runner: 'vitest', total: 5, passed: 4, failed: 1, skipped: 2 });
  });
  it('jest', () => {
    expect(parseTestCounts('', 'Tests:       1 failed, 1 skipped, 4 passed, 6 total\n')).toEqual({
      runner: 'jest',
      total: 5,
      passed: 4,
      failed: 1,
      skipped: 1,
    });
  });
  it('pytest', () => {
    expect(parseTestCounts('===== 2 failed, 10 passed, 1 skipped in 0.52s =====\n')).toEqual({
      runner: 'pytest',
      total: 12,
      passed: 10,
      failed: 2,
      skipped: 1,
    });
    expect(parseTestCounts('3 passed in 0.01s\n')).toMatchObject({ runner: 'pytest', total: 3 });
  });
  it('cargo sums every test binary', () => {
    const out =
      'test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n' +
      'test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out\n';
    expect(parseTestCounts(out)).toEqual({ runner: 'cargo', total: 6, passed: 4, failed: 2, skipped: 1 });
  });
  it('go test -v', () => {
    const out =
      '=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\n    --- PASS: TestB/sub (0.00s)\nFAIL\n';
    expect(parseTestCounts(out)).toEqual({ runner: 'go', total: 2, passed: 1, failed: 1, skipped: 0 });
  });
  it('unittest', () => {
    expect(parseTestCounts('', 'Ran 4 tests in 0.001s\n\nFAILED (failures=1, errors=1, skipped=1)\n')).toEqual({
      runner: 'unittest',
      total: 3,
      passed: 1,
      failed: 2,
      skipped: 1,
    });
  });
  it('unknown output is null, never a guess', () => {
    expect(parseTestCounts('all good\n')).toBeNull();
  });
});
