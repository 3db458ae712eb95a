/**
 * Settings every vitest project shares: resolve workspace packages to their
 * TypeScript sources through the "source" export condition, so tests never
 * depend on a stale build.
 */
import type { UserWorkspaceConfig } from 'vitest/config';

const conditions = ['source', 'module', 'node', 'import', 'default'];

export const sharedProject: UserWorkspaceConfig = {
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['source'] } },
  // Projects do not inherit the root's test options. Real processes, sandboxes and
  // databases on a 2-core machine need more than vitest's 5 s default.
  test: {
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // CRUSTCORE_CPU_LOG=FILE records each file's CPU (scripts/cpu-per-file.ts); a no-op otherwise.
    // remove-temp-roots.ts: the repositories a golden harness made go when their file ends.
    setupFiles: [
      new URL('./scripts/cpu-per-file.ts', import.meta.url).pathname,
      new URL('./scripts/remove-temp-roots.ts', import.meta.url).pathname,
    ],
  },
};

/**
 * Package unit tests share one module cache per worker instead of a fresh one per file:
 * they start no daemons and keep no global state between files, and importing each
 * package's sources again for every file was about a third of their CPU (measured on
 * kernel, net and secrets: 142 s → 92 s). Golden and redteam files stay isolated.
 */
export const packageProject: UserWorkspaceConfig = {
  ...sharedProject,
  test: { ...sharedProject.test, isolate: false },
};
