import { defineConfig } from 'vitest/config';
import { PlainSummaryReporter } from './scripts/plain-summary-reporter.js';

export default defineConfig({
  test: {
    projects: ['packages/*', 'redteam', 'golden'],
    reporters: ['default', new PlainSummaryReporter()],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
