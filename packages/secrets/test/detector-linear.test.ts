/**
 * Linear time, by construction and by attack. Every detector pattern is
 * certified by `recheck` (no super-linear backtracking), and the scan itself
 * is measured by counting its steps — anchor comparisons and regex attempts —
 * on adversarial inputs built from each detector's own anchors and
 * alphabets: quadrupling the input may at most quadruple the steps. No
 * assertion reads a clock.
 */
import { checkSync } from 'recheck';
import { describe, expect, it } from 'vitest';
import { DETECTORS, type Detector } from '../src/index.js';
import { type DetectorScanStats, DetectorSet } from '../src/redact/detector-scan.js';
import { fuzzVerdict, verdictKey, verdictsOf } from './recheck-verdicts.js';

const KIB = 1024;

/** Inputs that keep a detector's anchor firing and its quantifiers running to their bounds. */
function adversarialInputs(detector: Detector, size: number): string[] {
  const fill = (unit: string): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  const inputs: string[] = [];
  for (const anchor of detector.anchors) {
    const back = anchor.back === null ? '' : anchor.back.chars[0]!.repeat(anchor.back.max);
    inputs.push(fill(anchor.text));
    inputs.push(fill(`${back}${anchor.text}`));
    for (const run of ['a', 'A0', '0.', '-_=']) {
      inputs.push(fill(`${back}${anchor.text}${run.repeat(Math.ceil(detector.maxMatchLength / run.length) + 3)}!`));
    }
    inputs.push(`${anchor.text}${fill('aB3')}`);
  }
  return inputs;
}

/** The unbounded quantifiers (`*`, `+`, `{n,}`) of a regex source, outside character classes. */
function unboundedQuantifiers(source: string): string[] {
  const found: string[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '*' || ch === '+') found.push(ch);
    else if (ch === '{') {
      const open = /^\{[0-9]+,\}/.exec(source.slice(i));
      if (open !== null) found.push(open[0]);
    }
  }
  return found;
}

function stepsOn(set: DetectorSet, text: string): { steps: number; longest: number } {
  const stats: DetectorScanStats = { anchorChecks: 0, candidates: 0, regexAttempts: 0 };
  let longest = 0;
  set.scan(
    text,
    0,
    (_, matchStart, _valueStart, valueEnd) => (longest = Math.max(longest, valueEnd - matchStart)),
    stats,
  );
  return { steps: stats.anchorChecks + stats.regexAttempts, longest };
}

describe('detectors run in linear time', () => {
  const unique = [...new Map(DETECTORS.map((d) => [`${d.flags}/${d.source}`, d])).values()];

  it('quadrupling an adversarial input at most quadruples the scan steps, and matches keep their bound', {
    timeout: 600_000,
  }, () => {
    const all = new DetectorSet(DETECTORS);
    for (const detector of unique) {
      const alone = new DetectorSet([detector]);
      const small = adversarialInputs(detector, 16 * KIB);
      const large = adversarialInputs(detector, 64 * KIB);
      for (let k = 0; k < small.length; k++) {
        // Every detector together on the first inputs (anchors of one waking others), each alone on all.
        for (const set of k < 2 ? [alone, all] : [alone]) {
          const a = stepsOn(set, small[k]!);
          const b = stepsOn(set, large[k]!);
          const label = `${detector.id} input ${k}`;
          // Linear: 4× the input, 4× the steps (plus edge effects: a match cut short by the end of the text).
          expect(b.steps, label).toBeLessThanOrEqual(4.25 * a.steps + 256);
          // Steps per character are bounded by the anchors that can start at one position, not by the input.
          expect(b.steps, label).toBeLessThanOrEqual(large[k]!.length * 16);
          if (set === alone) expect(b.longest, label).toBeLessThanOrEqual(detector.maxMatchLength);
        }
      }
    }
  });

  it('CONTROL: the step count does catch super-linear work (a scan that rescans from every anchor)', () => {
    // A naive scan that, at each anchor, looks at everything after it: quadratic in the input.
    const quadraticSteps = (text: string): number => {
      let steps = 0;
      for (let at = text.indexOf('ghp_'); at >= 0; at = text.indexOf('ghp_', at + 1)) steps += text.length - at;
      return steps;
    };
    const small = 'ghp_'.repeat(4 * KIB);
    const large = 'ghp_'.repeat(16 * KIB);
    expect(quadraticSteps(large)).toBeGreaterThan(4.25 * quadraticSteps(small) + 256);
  });

  it('every quantifier in every pattern is bounded (no *, +, or open {n,})', () => {
    for (const detector of unique) expect(unboundedQuantifiers(detector.source), detector.id).toEqual([]);
    expect(unboundedQuantifiers('a+b')).toEqual(['+']);
    expect(unboundedQuantifiers('[a+]{1,4}\\+x{2,}')).toEqual(['{2,}']);
  });

  // Two checkers. The automaton decides ambiguity exactly on each pattern's NFA (no sampling: "safe"
  // is a proof that no input makes the work per attempt grow faster than linearly). It cannot see
  // how large a bounded repeat's constant is, so the fuzzer's verdicts stand beside it; those are
  // remembered per pattern hash (recheck-verdicts.ts), since fuzzing all of them takes minutes.
  const AUTOMATON = { checker: 'automaton', timeout: 120_000 } as const;

  it('recheck: the automaton proves every pattern safe; the fuzzer finds nothing beyond the bounds', {
    timeout: 1_800_000,
  }, () => {
    const automaton = unique.map((d) => {
      const result = checkSync(d.source, d.flags, AUTOMATON);
      return { id: d.id, verdict: result.status === 'vulnerable' ? result.complexity.type : result.status };
    });
    expect(automaton.filter((v) => v.verdict !== 'safe')).toEqual([]);
    const { verdicts, fuzzedNow } = verdictsOf(unique);
    if (fuzzedNow > 0) console.log(`fuzzed ${fuzzedNow} patterns not in recheck-verdicts.json: refresh it`);
    const fuzzed = unique.map((d, i) => ({
      id: d.id,
      verdict: verdicts[i],
      bounded: unboundedQuantifiers(d.source).length === 0,
    }));
    expect(fuzzed.filter((v) => v.verdict === 'exponential' || v.verdict === 'unknown')).toEqual([]);
    // With every quantifier bounded, a "polynomial" from the fuzzer is a constant per attempt (≤ the
    // bound), which the step test above measures.
    expect(fuzzed.filter((v) => v.verdict === 'polynomial' && !v.bounded)).toEqual([]);
  });

  it('CONTROL: both checkers flag nested quantifiers; the automaton flags adjacent ones', () => {
    const exponential = checkSync('(?:[a-z0-9]+)+@', 'g', AUTOMATON);
    expect(exponential.status === 'vulnerable' && exponential.complexity.type).toBe('exponential');
    const polynomial = checkSync('[a-z]+[a-z0-9]+@', 'g', AUTOMATON);
    expect(polynomial.status === 'vulnerable' && polynomial.complexity.type).toBe('polynomial');
    expect(fuzzVerdict({ source: '(?:[a-z0-9]+)+@', flags: 'g' })).toBe('exponential');
  });

  it('CONTROL: a remembered verdict belongs to one exact pattern (a changed pattern is fuzzed again)', () => {
    const pattern = unique[0]!;
    const key = verdictKey(pattern);
    expect(verdictKey({ ...pattern, source: `${pattern.source} ` })).not.toBe(key);
    expect(verdictKey({ ...pattern, flags: `${pattern.flags}i` })).not.toBe(key);
  });
});
