import { defineConfig } from 'tsup';

// One output file per module (bundle: false) so that consumers, with
// `sideEffects: false`, drop the io-ts codecs when they only need the state
// machine: the size gate measures exactly that.
export default defineConfig({
  entry: ['src/*.ts'],
  bundle: false,
  format: ['esm'],
  dts: { entry: 'src/index.ts' },
  clean: true,
  target: 'node20',
});
