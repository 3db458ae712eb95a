/**
 * Failure classifier: turns a failed verify run into a small structured
 * `Diagnosis` the backend gets on its next attempt, instead of raw stderr.
 * Every field is bounded; paths are made relative to the checkout so host
 * paths never reach a model.
 */
import { blockMessage, failureBlocks, mochaTitle } from './failure-blocks.js';
import { missingCommand, missingModule } from './missing-thing.js';
import { parseTestCounts, stripAnsi, type TestCounts } from './test-counts.js';

export type FailureKind =
  | 'timeout'
  | 'environment'
  | 'missing-module'
  | 'syntax-error'
  | 'compile-error'
  | 'usage-error'
  | 'assertion'
  | 'unknown';

export type EnvironmentCause = 'command-not-found' | 'permission-denied' | 'network' | 'out-of-memory';

export interface ErrorLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number | null;
}

export interface Diagnosis {
  readonly kind: FailureKind;
  /** Set when kind is 'environment'. */
  readonly environmentCause: EnvironmentCause | null;
  /** The command (command-not-found) or module (missing-module) that was missing, when the output names it. */
  readonly missing?: string | null;
  /** The first failing test with its own message and location (not another failure's). */
  readonly firstFailure?: FirstFailure | null;
  /** One line saying what went wrong (≤ 300 chars). */
  readonly summary: string;
  /** What to try next (fixed text per kind). */
  readonly remediation: string;
  /** Up to 20 names, each ≤ 200 chars. */
  readonly failingTests: readonly string[];
  readonly firstErrorLocation: ErrorLocation | null;
  /** Extracted from assertion messages when present (each ≤ 500 chars). */
  readonly expected: string | null;
  readonly received: string | null;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly counts: TestCounts | null;
  /** The most relevant output lines (≤ 2,000 chars). */
  readonly excerpt: string;
}

export interface FirstFailure {
  readonly test: string | null;
  /** ≤ 500 chars. */
  readonly message: string | null;
  readonly location: ErrorLocation | null;
}

export interface FailedRun {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
  /** Absolute paths under these roots are shown relative to them. */
  readonly roots?: readonly string[];
}

export const DIAGNOSIS_LIMITS = {
  summaryChars: 300,
  failingTests: 20,
  testNameChars: 200,
  valueChars: 500,
  excerptChars: 2000,
} as const;

const REMEDIATION: Record<FailureKind, string> = {
  timeout:
    'The run hit its time budget. Look for a hang (unclosed handle, infinite loop, awaited promise that never settles) or make the change smaller.',
  environment:
    'The failure comes from the environment, not the code: the sandbox has no network and only the tools it lists. Do not work around it by editing tests.',
  'missing-module':
    'An import or module could not be resolved. Check module paths, export names and that the dependency is declared; nothing can be installed during verify.',
  'syntax-error':
    'The code does not parse. Check brackets, quotes, indentation and language grammar in the changed files.',
  'compile-error': 'The code does not compile or type-check. Fix the reported error at its location first.',
  'usage-error':
    'The test runner rejected its command line or configuration before running any test (unknown option, no test files, unreadable config). Fix the verify command or the runner config, not the code under test.',
  assertion: 'A test assertion failed: the behaviour does not match the test. Fix the implementation, not the test.',
  unknown: 'The verify command failed without a recognised cause. Read the excerpt and the first error location.',
};

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function relativize(text: string, roots: readonly string[]): string {
  let out = text;
  for (const root of roots) {
    if (root.length < 2) continue;
    const withSlash = root.endsWith('/') ? root : `${root}/`;
    out = out.split(`file://${withSlash}`).join('').split(withSlash).join('');
  }
  return out;
}

const ENVIRONMENT: readonly (readonly [EnvironmentCause, RegExp])[] = [
  [
    'command-not-found',
    /command not found|: not found$|spawn \S+ ENOENT|No such file or directory \(os error 2\)|executable file not found|bwrap: execvp/m,
  ],
  ['permission-denied', /EACCES|Permission denied|Operation not permitted|EPERM/],
  [
    'network',
    /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|getaddrinfo|Network is unreachable|Temporary failure in name resolution|Could not resolve host|dial tcp/,
  ],
  ['out-of-memory', /JavaScript heap out of memory|MemoryError|Cannot allocate memory|out of memory/],
];

const MISSING_MODULE =
  /Cannot find module|ERR_MODULE_NOT_FOUND|Cannot find package|ModuleNotFoundError|No module named|ImportError|Failed to resolve import|unresolved import|error\[E0432\]|error\[E0433\]|no required module provides package|cannot find package|is not in std|does not provide an export named|has no exported member/;
const SYNTAX =
  /SyntaxError|IndentationError|TabError|Unexpected token|Unexpected end of input|parse error|syntax error|error: expected .* found|expected one of .* found|error: unexpected closing delimiter|Unterminated string/;
const COMPILE =
  /error TS\d+|error\[E\d+\]|^error: could not compile|^\S+\.go:\d+:\d+: |undefined: \w+|ReferenceError|TypeError: .* is not a function/m;
const ASSERTION =
  /AssertionError|ERR_ASSERTION|expect\(|Expected:|expected .+ to (?:be|equal|deeply equal|strictly equal)|assert |assertion .*failed|panicked at|^--- FAIL|^not ok |^FAILED |\d+ failed/m;

/** A runner refusing its own command line or config (mocha, vitest, jest, pytest, node --test, npm, go, cargo, make). */
const USAGE =
  /ERR_MOCHA_|Error: No test files found|Unable to read\/parse .*mocharc|No test files found, exiting with code|No tests found, exiting with code|● Validation Error|Unrecognized CLI Parameter|CACError|Unknown option|unknown option|unrecognized option|^ERROR: usage:|error: unrecognized arguments|ERROR: file or directory not found|^Could not find '[^']+'$|Missing script: |missing script: |No rule to make target|flag provided but not defined|error: unexpected argument|error: no such command|no Go files in/m;

function classifyKind(
  run: FailedRun,
  text: string,
  tests: readonly string[],
): { kind: FailureKind; cause: EnvironmentCause | null } {
  if (run.timedOut) return { kind: 'timeout', cause: null };
  if (run.exitCode === 127) return { kind: 'environment', cause: 'command-not-found' };
  if (run.exitCode === 126) return { kind: 'environment', cause: 'permission-denied' };
  // Checked before imports: a runner that cannot load its reporter also says "Cannot find module".
  // Only when no test was reported failing, so a test's own message cannot make it a usage error.
  if (tests.length === 0 && USAGE.test(text)) return { kind: 'usage-error', cause: null };
  // Test failures can mention these words too; syntax and imports are checked first
  // because they stop the suite before any assertion runs.
  if (MISSING_MODULE.test(text)) return { kind: 'missing-module', cause: null };
  if (SYNTAX.test(text)) return { kind: 'syntax-error', cause: null };
  if (ASSERTION.test(text)) return { kind: 'assertion', cause: null };
  for (const [cause, pattern] of ENVIRONMENT) if (pattern.test(text)) return { kind: 'environment', cause };
  if (COMPILE.test(text)) return { kind: 'compile-error', cause: null };
  if (run.signal === 'SIGKILL' || run.signal === 'SIGXCPU') return { kind: 'timeout', cause: null };
  return { kind: 'unknown', cause: null };
}

function pushUnique(into: string[], name: string): void {
  const cleaned = clip(name.trim(), DIAGNOSIS_LIMITS.testNameChars);
  if (cleaned === '' || into.includes(cleaned) || into.length >= DIAGNOSIS_LIMITS.failingTests) return;
  into.push(cleaned);
}

const FAILING_TEST_PATTERNS: readonly RegExp[] = [
  /^\s*not ok \d+ - (.+?)(?:\s+#.*)?$/gm, // node --test TAP
  /^\s*✖ (.+?) \(\d[\d.]*m?s\)\s*$/gm, // node --test spec reporter
  /^\s*FAIL\s+(\S.+?>.+?)(?:\s+\d+m?s)?\s*$/gm, // vitest
  /^\s*[×✕] (.+?)(?:\s+\d+m?s)?\s*$/gm, // vitest / jest
  /^\s*● (.+? › .+?)\s*$/gm, // jest
  /^FAILED (\S+::\S+)/gm, // pytest short summary
  /^test (\S+) \.\.\. FAILED\s*$/gm, // cargo
  /^--- FAIL: (\S+)/gm, // go
  /^(?:FAIL|ERROR): (\w+ \([\w.]+\))/gm, // unittest
];

function failingTests(text: string): string[] {
  const names: string[] = [];
  // mocha: titles come from the blocks under "N failing" ("1) suite\n  test:").
  for (const block of failureBlocks(text)) {
    if (block.runner !== 'mocha') break;
    const title = mochaTitle(block.text);
    if (title !== null) pushUnique(names, title);
  }
  for (const pattern of FAILING_TEST_PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const name = match[1] as string;
      // The spec reporter repeats failures under a "failing tests:" header; TAP subtests nest.
      if (/^failing tests:?$/.test(name)) continue;
      pushUnique(names, name);
    }
  }
  return names;
}

const IGNORED_LOCATION =
  /node_modules|node:internal|^internal\/|\/usr\/(?:local\/)?lib|site-packages|\.rustup|\.cargo\/registry|<frozen|\/go\/src\/|^\/rustc\//;
const LOCATION_PATTERNS: readonly RegExp[] = [
  /File "([^"]+)", line (\d+)/g,
  /((?:[\w.@+-]+\/)*[\w.@+-]+\.(?:[cm]?[jt]sx?|py|rs|go|rb|java|c|cc|cpp|h)):(\d+)(?::(\d+))?/g,
];

interface Candidate {
  readonly index: number;
  readonly python: boolean;
  readonly location: ErrorLocation;
}

/** Every location in the text that points into the project, in order of appearance. */
function locations(text: string): Candidate[] {
  const found: Candidate[] = [];
  LOCATION_PATTERNS.forEach((pattern, patternIndex) => {
    for (const match of text.matchAll(pattern)) {
      const file = (match[1] as string).replace(/^file:\/\//, '');
      if (IGNORED_LOCATION.test(file) || file.startsWith('/')) continue;
      const location = { file, line: Number(match[2]), column: match[3] === undefined ? null : Number(match[3]) };
      found.push({ index: match.index ?? 0, python: patternIndex === 0, location });
      if (found.length > 200) break;
    }
  });
  return found.sort((a, b) => a.index - b.index);
}

const firstLocation = (text: string): ErrorLocation | null => locations(text)[0]?.location ?? null;

/**
 * The location of the first failure marked by `marker`. Python prints the
 * failing frame just before the error line; other runners print it after.
 */
function firstLocationAt(text: string, marker: RegExp): ErrorLocation | null {
  const all = locations(text);
  const found = marker.exec(text);
  if (found === null) return all[0]?.location ?? null;
  const before = all.filter((c) => c.python && c.index < found.index && found.index - c.index < 600).pop();
  if (before !== undefined) return before.location;
  return (all.find((c) => c.index >= found.index) ?? all[0])?.location ?? null;
}

function expectedReceived(text: string): { expected: string | null; received: string | null } {
  const pairs: readonly (readonly [RegExp, 'er' | 're'])[] = [
    [/^\s*Expected:\s*(.+)\n\s*Received:\s*(.+)$/m, 'er'], // jest / vitest
    [/^\s*expected:\s*(.+)\n\s*actual:\s*(.+)$/m, 'er'], // node --test YAML
    [/^\s*actual:\s*(.+)\n\s*expected:\s*(.+)$/m, 're'],
    [/expected (.+?) to (?:be|equal|deeply equal|strictly equal) (.+?)(?: \/\/.*)?$/m, 're'], // chai / vitest
    [/^\s*left: `?(.+?)`?,?\n\s*right: `?(.+?)`?$/m, 're'], // cargo assert_eq!
    [/got:? (.+?),? (?:want|expected):? (.+)$/m, 're'], // go convention
    [/^E\s+assert (.+?) == (.+)$/m, 're'], // pytest
    [/^AssertionError: (.+?) != (.+)$/m, 're'], // unittest assertEqual
    [/\n\n(\S.*?) !== (\S.*?)\n/, 're'], // node assert.strictEqual message
  ];
  for (const [pattern, order] of pairs) {
    const match = pattern.exec(text);
    if (match === null) continue;
    const first = clip((match[1] as string).trim(), DIAGNOSIS_LIMITS.valueChars);
    const second = clip((match[2] as string).trim(), DIAGNOSIS_LIMITS.valueChars);
    return order === 'er' ? { expected: first, received: second } : { expected: second, received: first };
  }
  return { expected: null, received: null };
}

const SIGNAL_LINE =
  /Error|error|FAIL|not ok|panicked|assert|Expected|Received|expected|actual|Traceback|✖|×|●|-->|\.py:\d+|\.[jt]s:\d+|\.go:\d+|\.rs:\d+/;

function excerpt(text: string): string {
  const lines = text.split('\n');
  const picked: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (!SIGNAL_LINE.test(line) || /^\s*at .*node:internal/.test(line)) continue;
    const clipped = clip(line.trimEnd(), 300);
    if (chars + clipped.length + 1 > DIAGNOSIS_LIMITS.excerptChars) break;
    picked.push(clipped);
    chars += clipped.length + 1;
  }
  if (picked.length > 0) return picked.join('\n');
  return clip(text.trim().split('\n').slice(-20).join('\n'), DIAGNOSIS_LIMITS.excerptChars);
}

function summaryLine(
  classified: { readonly kind: FailureKind; readonly cause: EnvironmentCause | null; readonly missing: string | null },
  run: FailedRun,
  text: string,
  tests: readonly string[],
  first: FirstFailure | null,
): string {
  const { kind, cause, missing } = classified;
  if (kind === 'timeout') return run.timedOut ? 'verify timed out' : `verify was killed (${run.signal ?? 'signal'})`;
  // The kind is shown beside the summary everywhere, so the summary never repeats it.
  const head =
    kind === 'environment'
      ? environmentHead(cause, missing)
      : kind === 'missing-module' && missing !== null
        ? `module not found: ${missing}`
        : kind === 'assertion' && tests.length > 0
          ? `${tests.length} failing test${tests.length === 1 ? '' : 's'}: ${tests.slice(0, 3).join(', ')}`
          : null;
  const firstError = first?.message ?? errorLine(text) ?? (kind === 'usage-error' ? usageLine(text) : undefined);
  const parts = [head, firstError].filter((part): part is string => part !== null && part !== undefined);
  return clip(parts.length === 0 ? kind.replace('-', ' ') : parts.join(' — '), DIAGNOSIS_LIMITS.summaryChars);
}

const errorLine = (text: string): string | undefined => /^.*(?:Error|error)[:[].*$/m.exec(text)?.[0]?.trim();

/** The whole line the runner's usage complaint is on. */
function usageLine(text: string): string | undefined {
  const match = USAGE.exec(text);
  if (match === null) return undefined;
  const start = text.lastIndexOf('\n', match.index) + 1;
  const end = text.indexOf('\n', match.index);
  return text.slice(start, end === -1 ? undefined : end).trim();
}

function environmentHead(cause: EnvironmentCause | null, missing: string | null): string {
  switch (cause) {
    case 'command-not-found':
      return missing === null ? 'a command was not found' : `command not found: ${missing}`;
    case 'permission-denied':
      return 'permission denied';
    case 'network':
      return 'no network in the sandbox';
    case 'out-of-memory':
      return 'out of memory';
    default:
      return 'the environment failed';
  }
}

/** The first failing test's own block: its name, message and location. */
function firstFailureOf(text: string, tests: readonly string[]): FirstFailure | null {
  const block = failureBlocks(text)[0];
  if (block === undefined) return null;
  const message = blockMessage(block);
  return {
    test: tests[0] ?? null,
    message: message === null ? null : clip(message, DIAGNOSIS_LIMITS.valueChars),
    location: firstLocation(block.text),
  };
}

/** Classifies a failed verify run. Pure: same input, same diagnosis. */
export function diagnoseFailure(run: FailedRun): Diagnosis {
  const raw = stripAnsi(`${run.stdout}\n${run.stderr}`).replace(/\r\n/g, '\n');
  const text = relativize(raw, run.roots ?? []);
  const tests = failingTests(text);
  const { kind, cause } = classifyKind(run, text, tests);
  const missing =
    kind === 'environment' && cause === 'command-not-found'
      ? missingCommand(text)
      : kind === 'missing-module'
        ? missingModule(text)
        : null;
  const first = kind === 'assertion' || kind === 'unknown' ? firstFailureOf(text, tests) : null;
  // Message, location and values all come from the first failure's own block when there is one.
  const scope = first === null ? text : (failureBlocks(text)[0]?.text ?? text);
  const location =
    first?.location ??
    (kind === 'assertion'
      ? firstLocationAt(scope, /AssertionError|Expected|expect\(|panicked|assert|--- FAIL|FAILED|✖|×/)
      : firstLocation(text));
  const { expected, received } = kind === 'assertion' ? expectedReceived(scope) : { expected: null, received: null };
  return {
    kind,
    environmentCause: cause,
    missing,
    firstFailure: first,
    summary: summaryLine({ kind, cause, missing }, run, text, tests, first),
    remediation: REMEDIATION[kind],
    failingTests: tests,
    firstErrorLocation: location,
    expected,
    received,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    counts: parseTestCounts(text),
    excerpt: excerpt(text),
  };
}
