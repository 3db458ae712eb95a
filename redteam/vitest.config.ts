import { defineProject, mergeConfig } from 'vitest/config';
import { sharedProject } from '../vitest.shared.js';

export default mergeConfig(
  sharedProject,
  defineProject({
    test: { include: ['**/*.test.ts'], exclude: ['**/node_modules/**', '**/fixtures/**'], testTimeout: 300_000 },
  }),
);
