import { defineConfig } from 'vitest/config';
import { PlainSummaryReporter } from './scripts/plain-summary-reporter.js';

export default defineConfig({
  test: {
    projects: ['packages/*', 'redteam', 'golden'],
    reporters: ['default', new PlainSummaryReporter()],
    // Most suites wait on real processes (git, bubblewrap, PostgreSQL), not the CPU:
    // a few more workers than cores keeps both cores busy.
    maxWorkers: 4,
  },
});
