/**
 * Vitest never prints a plain "N passed, N failed" line. This reporter counts
 * test states (a file that fails to import counts as one failure) and writes
 * the counts to a JSON file that the test command folds into its closing line.
 */
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

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
    const out = process.env.CRUSTCORE_SUMMARY_FILE;
    const line = `vitest: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    if (out) writeFileSync(out, JSON.stringify({ passed, failed, skipped }));
    else process.stdout.write(`${line}\n`);
  }
}
