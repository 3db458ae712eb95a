import { defineProject, mergeConfig } from 'vitest/config';
import { packageProject } from '../../vitest.shared.js';

export default mergeConfig(
  packageProject,
  defineProject({
    // PGlite takes seconds to start and a PostgreSQL cluster is started per file.
    test: { include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 120_000 },
  }),
);
