/**
 * The ripgrep engine. ripgrep runs through the one trusted host runner with
 * an environment built from scratch, `--no-config` (no RIPGREP_CONFIG_PATH),
 * fixed flags chosen to match the JS engine, the pattern passed as
 * `--regexp=…` (so it can never be read as a flag) and the path after `--`.
 * Its `--json` lines are untrusted input and are decoded with io-ts.
 */

import { err, ok, type Result } from '@crustcore/kernel';
import { type ProcessResult, runTrustedHostCommand } from '@crustcore/sandbox';
import { isLeft } from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { SearchError, SearchMatch, SearchPlan, SearchResult } from './search-types.js';

/** ripgrep prints paths and lines as text, or as base64 bytes when they are not UTF-8. */
const RipgrepData = t.union([t.type({ text: t.string }), t.type({ bytes: t.string })]);

const RipgrepMatch = t.type({
  type: t.literal('match'),
  data: t.type({
    path: RipgrepData,
    lines: RipgrepData,
    line_number: t.union([t.number, t.null]),
    submatches: t.array(t.type({ start: t.number, end: t.number })),
  }),
});

const RipgrepMessage = t.type({ type: t.string });

/** Output budget for ripgrep's JSON (each match line costs a few hundred bytes of framing). */
const MAX_RIPGREP_OUTPUT_BYTES = 16 * 1024 * 1024;
const TRUNCATION_MARKER = '\n…[crustcore: ';

function dataText(data: t.TypeOf<typeof RipgrepData>): string {
  return 'text' in data ? data.text : Buffer.from(data.bytes, 'base64').toString('utf8');
}

/** Escapes a literal name for a ripgrep glob. */
function globLiteral(name: string): string {
  return name.replace(/[\\*?[\]{}!]/g, '\\$&');
}

export function ripgrepArguments(plan: SearchPlan): string[] {
  const args = [
    '--no-config',
    '--json',
    '--line-number',
    '--no-ignore',
    '--hidden',
    '--no-follow',
    '--sort=path',
    `--max-filesize=${plan.maxFileBytes}`,
    `--max-count=${plan.maxMatches + 1}`,
    plan.caseInsensitive ? '--ignore-case' : '--case-sensitive',
  ];
  if (plan.fixedStrings) args.push('--fixed-strings');
  for (const name of plan.skipNames) args.push(`--glob=!${globLiteral(name)}`);
  args.push(`--regexp=${plan.pattern}`, '--', plan.start === '' ? '.' : `./${plan.start}`);
  return args;
}

/** The complete JSON lines of a (possibly middle-truncated) capture. */
function completeLines(result: ProcessResult): { lines: string[]; cut: boolean } {
  let text = result.stdout.text;
  let cut = false;
  if (result.stdout.truncated) {
    const marker = text.indexOf(TRUNCATION_MARKER);
    text = marker >= 0 ? text.slice(0, marker) : text;
    text = text.slice(0, text.lastIndexOf('\n') + 1);
    cut = true;
  }
  return { lines: text.split('\n').filter((line) => line !== ''), cut };
}

function toMatch(plan: SearchPlan, message: t.TypeOf<typeof RipgrepMatch>): SearchMatch | null {
  let path = dataText(message.data.path);
  if (path.startsWith('./')) path = path.slice(2);
  if (plan.glob !== null && !plan.glob.test(path)) return null;
  let line = dataText(message.data.lines);
  if (line.endsWith('\n')) line = line.slice(0, -1);
  if (line.endsWith('\r')) line = line.slice(0, -1);
  const first = message.data.submatches[0];
  return {
    path,
    lineNumber: message.data.line_number ?? 0,
    column: (first?.start ?? 0) + 1,
    text: line.length > plan.maxLineChars ? line.slice(0, plan.maxLineChars) : line,
  };
}

export async function searchWithRipgrep(plan: SearchPlan): Promise<Result<SearchError, SearchResult>> {
  const result = await runTrustedHostCommand({
    argv: [plan.ripgrepPath, ...ripgrepArguments(plan)],
    cwd: plan.root.path,
    // Built from scratch: nothing from the host environment reaches ripgrep.
    env: { PATH: '/usr/bin:/bin', LC_ALL: 'C.UTF-8' },
    timeoutMs: plan.timeoutMs,
    maxOutputBytes: MAX_RIPGREP_OUTPUT_BYTES,
    ...(plan.signal === undefined ? {} : { signal: plan.signal }),
  });
  if (result.startError !== null) {
    return err({
      _tag: 'SearchFailed',
      engine: 'ripgrep',
      message: `ripgrep did not start: ${result.startError.message}`,
    });
  }
  const { lines, cut } = completeLines(result);
  // Exit 1 means "no match"; 2 means an error, possibly after partial results.
  if (result.exitCode === 2 && lines.length === 0) {
    return err({
      _tag: 'SearchFailed',
      engine: 'ripgrep',
      message: `ripgrep failed: ${result.stderr.text.slice(0, 500)}`,
    });
  }
  if (result.exitCode === null && !result.timedOut && !result.cancelled) {
    return err({
      _tag: 'SearchFailed',
      engine: 'ripgrep',
      message: `ripgrep was killed by ${result.signal ?? 'a signal'}`,
    });
  }
  const matches: SearchMatch[] = [];
  for (const line of lines) {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return err({ _tag: 'SearchFailed', engine: 'ripgrep', message: 'ripgrep printed a line that is not JSON' });
    }
    const kind = RipgrepMessage.decode(json);
    if (isLeft(kind)) return err({ _tag: 'SearchFailed', engine: 'ripgrep', message: 'ripgrep JSON without a type' });
    if (kind.right.type !== 'match') continue;
    const decoded = RipgrepMatch.decode(json);
    if (isLeft(decoded)) return err({ _tag: 'SearchFailed', engine: 'ripgrep', message: 'malformed ripgrep match' });
    const match = toMatch(plan, decoded.right);
    if (match !== null) matches.push(match);
    if (matches.length > plan.maxMatches) break;
  }
  const truncated = matches.length > plan.maxMatches || cut || result.timedOut || result.cancelled;
  return ok({ engine: 'ripgrep', matches: matches.slice(0, plan.maxMatches), truncated });
}
