/**
 * The one tsup configuration every package builds with (each package's
 * `tsup.config.ts` names only what differs: its entry points).
 *
 * Type declarations are not part of the everyday build: tsup makes them with
 * one TypeScript program per package (about four minutes of CPU for the
 * repository, against 25 s for the whole-repository `tsc` the test command
 * runs anyway), and nothing in the repository reads them — workspace packages
 * resolve each other's sources through the `source` condition. `npm run
 * build:types` (CRUSTCORE_BUILD_TYPES=1) builds them for a release.
 */
import { defineConfig, type Options } from 'tsup';

export const BUILD_TYPES = process.env.CRUSTCORE_BUILD_TYPES === '1';

export function packageBuild(overrides: Options = {}): ReturnType<typeof defineConfig> {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm'],
    dts: BUILD_TYPES,
    clean: true,
    target: 'node20',
    esbuildOptions(options) {
      options.conditions = ['source'];
      options.mainFields = ['module', 'main'];
    },
    ...overrides,
  });
}
