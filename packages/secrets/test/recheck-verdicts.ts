/**
 * recheck's fuzzing verdicts, remembered per pattern. The default (auto) checker
 * fuzzes every pattern with large bounded repeats (it takes minutes for the
 * whole detector set), and its verdict depends only on the pattern, its flags,
 * recheck's version and the options below — so a verdict is keyed by a hash
 * of exactly those, and a pattern that changes (or a new one) is fuzzed again.
 * CRUSTCORE_NIGHTLY=1 ignores the file and fuzzes everything.
 * Refresh after changing patterns with refresh-recheck-verdicts.ts (it rewrites
 * recheck-verdicts.json from fresh runs; review its diff like code).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { checkSync } from 'recheck';

export const FUZZ_OPTIONS = { checker: 'auto', timeout: 120_000, randomSeed: 20261201 } as const;
const FILE = new URL('./recheck-verdicts.json', import.meta.url);
const RECHECK_VERSION = (createRequire(import.meta.url)('recheck/package.json') as { version: string }).version;

export type Verdict = 'safe' | 'polynomial' | 'exponential' | 'unknown';

export interface Pattern {
  readonly source: string;
  readonly flags: string;
}

export function verdictKey(pattern: Pattern): string {
  const identity = JSON.stringify([RECHECK_VERSION, FUZZ_OPTIONS, pattern.flags, pattern.source]);
  return createHash('sha256').update(identity).digest('hex');
}

export function fuzzVerdict(pattern: Pattern): Verdict {
  const result = checkSync(pattern.source, pattern.flags, FUZZ_OPTIONS);
  return result.status === 'vulnerable' ? result.complexity.type : result.status;
}

function remembered(): Readonly<Record<string, Verdict>> {
  if (process.env.CRUSTCORE_NIGHTLY === '1') return {};
  try {
    return JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, Verdict>;
  } catch {
    return {};
  }
}

/** Each pattern's verdict: remembered when its key is in the file, fuzzed now otherwise. */
export function verdictsOf(patterns: readonly Pattern[]): { verdicts: Verdict[]; fuzzedNow: number } {
  const known = remembered();
  let fuzzedNow = 0;
  const verdicts = patterns.map((pattern) => {
    const hit = known[verdictKey(pattern)];
    if (hit !== undefined) return hit;
    fuzzedNow += 1;
    return fuzzVerdict(pattern);
  });
  return { verdicts, fuzzedNow };
}

/** Rewrites the file from fresh runs over `patterns` (the refresh script). */
export function rememberVerdicts(patterns: readonly Pattern[]): void {
  const entries = patterns.map((pattern) => [verdictKey(pattern), fuzzVerdict(pattern)] as const);
  entries.sort(([a], [b]) => (a < b ? -1 : 1));
  writeFileSync(FILE, `${JSON.stringify(Object.fromEntries(entries), null, 1)}\n`);
}
