import { defineProject, mergeConfig } from 'vitest/config';
import { packageProject } from '../../vitest.shared.js';

export default mergeConfig(
  packageProject,
  defineProject({
    test: { include: ['test/**/*.test.ts'] },
  }),
);
