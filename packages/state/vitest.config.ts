import { defineProject, mergeConfig } from 'vitest/config';
import { packageProject } from '../../vitest.shared.js';

export default mergeConfig(
  packageProject,
  defineProject({
    // PGlite takes seconds to start and the cluster is started per file.
    test: { include: ['test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 120_000 },
  }),
);
