// What the nano build (build.mjs) and the single executable (scripts/sea.mjs) share.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/** The packs: loaded on demand by the full CLI, left out of nano (which refuses their commands). */
export const packs = [
  '@crustcore/net',
  '@crustcore/agent',
  '@crustcore/workers',
  '@crustcore/state',
  '@crustcore/mcp',
  '@crustcore/mcp-gateway',
  '@crustcore/secrets',
  '@crustcore/index',
  '@crustcore/memory',
];

// Nano is one file: there a lazily loaded module only adds esbuild's wrappers (to it and to
// everything it imports), so nano imports up front what the full CLI loads on demand: each
// module named here is replaced by its `-eager.ts` twin, which exports the same names.
const EAGER_IN_NANO = /^\.\/(?:[\w-]+\/)*(?:core-table|crash-redactor)\.js$/;
export const eagerInNano = {
  name: 'eager-in-nano',
  setup(build) {
    build.onResolve({ filter: EAGER_IN_NANO }, (args) => ({
      path: join(args.resolveDir, args.path.replace(/\.js$/, '-eager.ts')),
    }));
  },
};
