import { defineConfig } from 'tsup';

export default defineConfig({
  // `testing` is the throwaway-cluster helper for other packages' tests; it
  // spawns processes, so it lives under test/ and stays out of `index`.
  entry: { index: 'src/index.ts', testing: 'test/pg-cluster.ts' },
  format: ['esm'],
  dts: true,
  clean: true,
  target: 'node20',
  esbuildOptions(options) {
    options.conditions = ['source'];
    options.mainFields = ['module', 'main'];
  },
});
