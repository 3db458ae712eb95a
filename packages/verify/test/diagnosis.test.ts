import { describe, expect, it } from 'vitest';
import { DIAGNOSIS_LIMITS, diagnoseFailure } from '../src/index.js';

const run = (stdout: string, stderr = '', extra: Partial<Parameters<typeof diagnoseFailure>[0]> = {}) =>
  diagnoseFailure({ exitCode: 1, signal: null, timedOut: false, stdout, stderr, roots: ['/work/wt'], ...extra });

describe('diagnoseFailure', () => {
  it('missing module (node, python, go, rust)', () => {
    expect(
      run(
        '',
        "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/work/wt/src/x.js' imported from /work/wt/test/a.test.js",
      ).kind,
    ).toBe('missing-module');
    expect(run("E   ModuleNotFoundError: No module named 'requests'").kind).toBe('missing-module');
    expect(run('', 'main.go:3:8: no required module provides package example.com/x').kind).toBe('missing-module');
    expect(run('', 'error[E0432]: unresolved import `crate::foo`\n --> src/lib.rs:1:5').kind).toBe('missing-module');
  });

  it('syntax errors with the first location', () => {
    const d = run(
      '',
      "/work/wt/src/math.js:3\n  return a +;\n            ^\n\nSyntaxError: Unexpected token ';'\n    at compileSourceTextModule (node:internal/modules/esm/utils:340:16)",
    );
    expect(d.kind).toBe('syntax-error');
    expect(d.firstErrorLocation).toEqual({ file: 'src/math.js', line: 3, column: null });
    const py = run('  File "/work/wt/calc.py", line 2\n    return a +\n              ^\nSyntaxError: invalid syntax\n');
    expect(py.kind).toBe('syntax-error');
    expect(py.firstErrorLocation).toEqual({ file: 'calc.py', line: 2, column: null });
  });

  it('node --test assertion: failing tests, expected/received, location', () => {
    const tap = [
      'not ok 1 - adds',
      '  ---',
      "  location: '/work/wt/test/math.test.js:4:1'",
      '  error: |-',
      '    Expected values to be strictly equal:',
      '  expected: 3',
      '  actual: -1',
      '  stack: |-',
      '    TestContext.<anonymous> (file:///work/wt/test/math.test.js:4:29)',
      '# tests 1',
      '# pass 0',
      '# fail 1',
    ].join('\n');
    const d = run(tap);
    expect(d).toMatchObject({ kind: 'assertion', failingTests: ['adds'], expected: '3', received: '-1' });
    expect(d.firstErrorLocation?.file).toBe('test/math.test.js');
    expect(d.counts).toMatchObject({ failed: 1 });
    expect(d.excerpt).not.toContain('/work/wt');
  });

  it('vitest and jest', () => {
    const vitest =
      ' FAIL  test/a.test.ts > math > adds\nAssertionError: expected 2 to be 3 // Object.is equality\n ❯ test/a.test.ts:5:17\n';
    expect(run('', vitest)).toMatchObject({
      kind: 'assertion',
      failingTests: ['test/a.test.ts > math > adds'],
      expected: '3',
      received: '2',
    });
    const jest =
      '  ● math › adds\n\n    expect(received).toBe(expected)\n\n    Expected: 3\n    Received: 2\n\n      at Object.<anonymous> (test/a.test.js:5:17)\n';
    const d = run('', jest);
    expect(d).toMatchObject({ kind: 'assertion', failingTests: ['math › adds'], expected: '3', received: '2' });
    expect(d.firstErrorLocation).toEqual({ file: 'test/a.test.js', line: 5, column: 17 });
  });

  it('pytest, cargo and go', () => {
    const py =
      '    def test_mul():\n>       assert mul(3, 4) == 12\nE       assert 7 == 12\n\ntests/test_calc.py:5: AssertionError\nFAILED tests/test_calc.py::test_mul - assert 7 == 12\n';
    expect(run(py)).toMatchObject({
      kind: 'assertion',
      failingTests: ['tests/test_calc.py::test_mul'],
      expected: '12',
      received: '7',
    });
    const cargo =
      "test tests::adds ... FAILED\n\n---- tests::adds stdout ----\nthread 'tests::adds' panicked at src/lib.rs:10:9:\nassertion `left == right` failed\n  left: 2\n right: 3\n";
    const c = run(cargo);
    expect(c).toMatchObject({ kind: 'assertion', failingTests: ['tests::adds'], expected: '3', received: '2' });
    expect(c.firstErrorLocation).toEqual({ file: 'src/lib.rs', line: 10, column: 9 });
    const go = '--- FAIL: TestAdd (0.00s)\n    math_test.go:9: got 2, want 3\nFAIL\n';
    expect(run(go)).toMatchObject({
      kind: 'assertion',
      failingTests: ['TestAdd'],
      expected: '3',
      received: '2',
      firstErrorLocation: { file: 'math_test.go', line: 9 },
    });
  });

  it('timeouts and environment failures', () => {
    expect(run('', '', { timedOut: true, exitCode: null, signal: 'SIGKILL' }).kind).toBe('timeout');
    expect(run('', 'sh: 1: jest: not found', { exitCode: 127 })).toMatchObject({
      kind: 'environment',
      environmentCause: 'command-not-found',
    });
    expect(run('', "Error: EACCES: permission denied, open '/etc/x'")).toMatchObject({
      kind: 'environment',
      environmentCause: 'permission-denied',
    });
    expect(run('', 'Error: getaddrinfo ENOTFOUND registry.npmjs.org')).toMatchObject({
      kind: 'environment',
      environmentCause: 'network',
    });
  });

  it('is bounded whatever the input', () => {
    const noisy = Array.from(
      { length: 5000 },
      (_, i) => `not ok ${i} - ${'x'.repeat(400)} Error: boom at t.test.js:${i}`,
    ).join('\n');
    const d = run(noisy);
    expect(d.failingTests.length).toBeLessThanOrEqual(DIAGNOSIS_LIMITS.failingTests);
    expect(d.failingTests.every((t) => t.length <= DIAGNOSIS_LIMITS.testNameChars)).toBe(true);
    expect(d.excerpt.length).toBeLessThanOrEqual(DIAGNOSIS_LIMITS.excerptChars);
    expect(d.summary.length).toBeLessThanOrEqual(DIAGNOSIS_LIMITS.summaryChars);
  });
});
