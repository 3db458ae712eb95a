/**
 * Reads how many tests ran from a runner's own summary lines. Used to notice
 * a patch that makes the suite pass by running fewer tests. Unknown output
 * gives null, never a guess: a missing count is itself reported as a risk by
 * the caller when the base run had one.
 */

export type TestRunner = 'node-test' | 'vitest' | 'jest' | 'pytest' | 'unittest' | 'cargo' | 'go';

export interface TestCounts {
  readonly runner: TestRunner;
  /** Tests that ran (passed + failed); skipped tests are not counted as run. */
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

// Strip colour codes: runners colour their summaries on a TTY or with FORCE_COLOR.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export const stripAnsi = (text: string): string => text.replace(ANSI, '');

function lastMatchNumber(text: string, pattern: RegExp): number | null {
  let found: number | null = null;
  for (const match of text.matchAll(pattern)) found = Number(match[1]);
  return found;
}

function nodeTest(text: string): TestCounts | null {
  // TAP (`# tests 5`) and spec (`ℹ tests 5`) reporters share the same summary keys.
  const tests = lastMatchNumber(text, /^[#ℹ] tests (\d+)\s*$/gm);
  const pass = lastMatchNumber(text, /^[#ℹ] pass (\d+)\s*$/gm);
  const fail = lastMatchNumber(text, /^[#ℹ] fail (\d+)\s*$/gm);
  if (tests === null || pass === null || fail === null) return null;
  const skipped =
    (lastMatchNumber(text, /^[#ℹ] skipped (\d+)\s*$/gm) ?? 0) + (lastMatchNumber(text, /^[#ℹ] todo (\d+)\s*$/gm) ?? 0);
  return { runner: 'node-test', total: pass + fail, passed: pass, failed: fail, skipped };
}

function countIn(segment: string, word: string): number {
  const match = new RegExp(`(\\d+) ${word}`).exec(segment);
  return match === null ? 0 : Number(match[1]);
}

function vitest(text: string): TestCounts | null {
  // "      Tests  1 failed | 4 passed | 2 skipped (7)"
  const match = /^\s*Tests\s{2,}(.+?)\s+\((\d+)\)\s*$/m.exec(text);
  if (match === null) return null;
  const segment = match[1] as string;
  const passed = countIn(segment, 'passed');
  const failed = countIn(segment, 'failed');
  const skipped = countIn(segment, 'skipped') + countIn(segment, 'todo');
  return { runner: 'vitest', total: passed + failed, passed, failed, skipped };
}

function jest(text: string): TestCounts | null {
  // "Tests:       1 failed, 4 passed, 5 total"
  const match = /^Tests:\s+(.+?\d+ total)\s*$/m.exec(text);
  if (match === null) return null;
  const segment = match[1] as string;
  const passed = countIn(segment, 'passed');
  const failed = countIn(segment, 'failed');
  const skipped = countIn(segment, 'skipped') + countIn(segment, 'todo');
  return { runner: 'jest', total: passed + failed, passed, failed, skipped };
}

function pytest(text: string): TestCounts | null {
  // "==== 1 failed, 4 passed, 1 skipped in 0.12s ====" (or without the rules with -q)
  let segment: string | null = null;
  for (const match of text.matchAll(
    /^=*\s*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)(?:, )?)+) in [\d.]+s/gm,
  )) {
    segment = match[1] as string;
  }
  if (segment === null) {
    if (/^=+ no tests ran in [\d.]+s/m.test(text))
      return { runner: 'pytest', total: 0, passed: 0, failed: 0, skipped: 0 };
    return null;
  }
  const passed = countIn(segment, 'passed') + countIn(segment, 'xpassed') + countIn(segment, 'xfailed');
  const failed = countIn(segment, 'failed') + countIn(segment, 'errors?');
  const skipped = countIn(segment, 'skipped') + countIn(segment, 'deselected');
  return { runner: 'pytest', total: passed + failed, passed, failed, skipped };
}

function unittest(text: string): TestCounts | null {
  const ran = lastMatchNumber(text, /^Ran (\d+) tests? in [\d.]+s$/gm);
  if (ran === null) return null;
  const status = /^(OK|FAILED)(?: \((.*)\))?\s*$/m.exec(text.slice(text.lastIndexOf('\nRan ')));
  const detail = status?.[2] ?? '';
  const failed = sumDetail(detail, ['failures', 'errors', 'unexpected successes']);
  const skipped = sumDetail(detail, ['skipped']);
  return { runner: 'unittest', total: ran - skipped, passed: ran - skipped - failed, failed, skipped };
}

function sumDetail(detail: string, keys: readonly string[]): number {
  let sum = 0;
  for (const key of keys) {
    const match = new RegExp(`${key}=(\\d+)`).exec(detail);
    if (match !== null) sum += Number(match[1]);
  }
  return sum;
}

function cargo(text: string): TestCounts | null {
  // One line per test binary: "test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out"
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let seen = false;
  for (const match of text.matchAll(/^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored/gm)) {
    seen = true;
    passed += Number(match[1]);
    failed += Number(match[2]);
    skipped += Number(match[3]);
  }
  return seen ? { runner: 'cargo', total: passed + failed, passed, failed, skipped } : null;
}

function go(text: string): TestCounts | null {
  // Without -v, go prints only failures; with -v every test. Subtests are indented and not counted.
  const passed = [...text.matchAll(/^--- PASS: /gm)].length;
  const failed = [...text.matchAll(/^--- FAIL: /gm)].length;
  const skipped = [...text.matchAll(/^--- SKIP: /gm)].length;
  if (passed + failed + skipped === 0) return null;
  return { runner: 'go', total: passed + failed, passed, failed, skipped };
}

/**
 * Test counts from a runner's summary in stdout and/or stderr, or null when no known
 * summary is present. Summaries are looked for in a fixed order; the first that parses wins.
 */
export function parseTestCounts(stdout: string, stderr = ''): TestCounts | null {
  const text = stripAnsi(`${stdout}\n${stderr}`).replace(/\r\n/g, '\n');
  return nodeTest(text) ?? vitest(text) ?? jest(text) ?? pytest(text) ?? cargo(text) ?? unittest(text) ?? go(text);
}

export interface ReportedFailure {
  readonly runner: TestRunner;
  readonly failed: number;
}

// Every summary shape a runner prints for failures; each capture is a count.
const FAILURE_SUMMARIES: readonly (readonly [TestRunner, RegExp])[] = [
  ['node-test', /^[#ℹ] fail (\d+)\s*$/gm],
  ['vitest', /^\s*(?:Tests|Test Files)\s{2,}.*?(\d+) failed/gm],
  ['jest', /^(?:Tests|Test Suites):\s+.*?(\d+) failed/gm],
  ['jest', /^\s*(\d+) failing\s*$/gm], // mocha
  ['pytest', /^=*\s*(?:\d+ \w+, )*(\d+) (?:failed|errors?)(?:, \d+ \w+)* in [\d.]+s/gm],
  ['cargo', /^test result: \w+\. \d+ passed; (\d+) failed;/gm],
  ['unittest', /^FAILED \((?:\w+=\d+, )*(?:failures|errors)=(\d+)/gm],
  ['go', /^(--- FAIL): /gm],
  ['go', /^(FAIL)\s+\S+\s+[\d.]+s\s*$/gm],
];

/**
 * The largest failure count any runner summary in the output reports, or null
 * when none reports a failure. Exit 0 is not the runner's last word: a patch
 * can end a failing suite with `process.exit(0)`, `|| true` or a patched
 * reporter, and the summary still says what ran. A test that prints a fake
 * "fail 0" cannot hide a real failure line, because every line counts.
 */
export function reportedFailures(stdout: string, stderr = ''): ReportedFailure | null {
  const text = stripAnsi(`${stdout}\n${stderr}`).replace(/\r\n/g, '\n');
  let worst: ReportedFailure | null = null;
  for (const [runner, pattern] of FAILURE_SUMMARIES) {
    for (const match of text.matchAll(pattern)) {
      const failed = /^\d+$/.test(match[1] as string) ? Number(match[1]) : 1;
      if (failed > 0 && (worst === null || failed > worst.failed)) worst = { runner, failed };
    }
  }
  return worst;
}
