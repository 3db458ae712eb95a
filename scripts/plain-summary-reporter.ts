/**
 * Vitest never prints a plain "N passed, N failed" line. This reporter counts
 * test states (a file that fails to import counts as one failure) and writes
 * the counts to a JSON file that the test command folds into its closing line.
 */
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';
import { DURATIONS_FILE, durationKey } from './longest-first-sequencer.js';

/** With CRUSTCORE_RECORD_DURATIONS=1, a full run rewrites the durations the sequencer orders by. */
function recordDurations(testModules: ReadonlyArray<TestModule>): void {
  const durations: Record<string, number> = {};
  for (const mod of testModules)
    durations[durationKey(mod.project.name, mod.project.config.root, mod.moduleId)] = Math.round(
      mod.diagnostic().duration,
    );
  const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
}

export class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let sawTest = false;
      for (const test of mod.children.allTests()) {
        sawTest = true;
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      const modState = mod.state();
      if (!sawTest && modState === 'failed') failed++;
      else if (sawTest && modState === 'failed' && mod.errors().length > 0) failed++;
    }
    failed += unhandledErrors.length;
    if (process.env.CRUSTCORE_RECORD_DURATIONS === '1') recordDurations(testModules);
    const out = process.env.CRUSTCORE_SUMMARY_FILE;
    const line = `vitest: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    if (out) writeFileSync(out, JSON.stringify({ passed, failed, skipped }));
    else process.stdout.write(`${line}\n`);
  }
}
