import { defineProject, mergeConfig } from 'vitest/config';
import { sharedProject } from '../../vitest.shared.js';

export default mergeConfig(
  sharedProject,
  defineProject({
    // PGlite takes seconds to start and a PostgreSQL cluster is started per file.
    test: { include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 120_000 },
  }),
);
