import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './scripts/longest-first-sequencer.js';
import { PlainSummaryReporter } from './scripts/plain-summary-reporter.js';

export default defineConfig({
  test: {
    projects: ['packages/*', 'redteam', 'golden'],
    reporters: ['default', new PlainSummaryReporter()],
    // Most suites wait on real processes (git, bubblewrap, PostgreSQL), not the CPU:
    // a few more workers than cores keeps both cores busy.
    maxWorkers: 4,
    // A fresh clone has no results cache: order by committed durations, longest first, across projects.
    sequence: { sequencer: LongestFirstSequencer },
  },
});
