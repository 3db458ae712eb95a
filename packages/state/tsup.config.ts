import { packageBuild } from '../../tsup.shared.js';

// `testing` is the throwaway-cluster helper for other packages' tests; it
// spawns processes, so it lives under test/ and stays out of `index`.
export default packageBuild({ entry: { index: 'src/index.ts', testing: 'test/pg-cluster.ts' } });
