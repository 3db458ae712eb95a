import { BUILD_TYPES, packageBuild } from '../../tsup.shared.js';

// One output file per module (bundle: false) so that consumers, with
// `sideEffects: false`, drop the io-ts codecs when they only need the state
// machine: the size gate measures exactly that.
export default packageBuild({
  entry: ['src/*.ts'],
  bundle: false,
  dts: BUILD_TYPES ? { entry: 'src/index.ts' } : false,
});
