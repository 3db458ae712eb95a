import { packageBuild } from '../../tsup.shared.js';

// `descriptors` is its own entry: the CLI imports it at start-up, before it knows it will need the rest.
export default packageBuild({ entry: ['src/index.ts', 'src/descriptors.ts'] });
