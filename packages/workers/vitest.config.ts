import { defineProject, mergeConfig } from 'vitest/config';
import { packageProject } from '../../vitest.shared.js';

export default mergeConfig(
  packageProject,
  defineProject({
    // Real worker CLIs in real sandboxes: a run takes seconds on a busy 2-core machine.
    test: { include: ['test/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 60_000 },
  }),
);
