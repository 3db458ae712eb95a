// Builds the CLI twice:
//  - dist/crustcore-nano.js: one bundled, minified file with the trusted core
//    (kernel, ledger, confine, sandbox, verify, the runtime). The size gate
//    measures it. Packs are not in it and nano refuses the commands that need
//    them, so no second copy of the core can meet the first.
//  - dist/crustcore.js (the `crustcore` bin): the CLI's own code bundled, every
//    @crustcore package imported from its built dist, so the CLI and the packs
//    it loads on demand (agent, workers, state, mcp, net, secrets) share one
//    instance of each module — capabilities and receipts are class instances,
//    and a second copy would not recognize the first's.
import { readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const packs = [
  '@crustcore/net',
  '@crustcore/agent',
  '@crustcore/workers',
  '@crustcore/state',
  '@crustcore/mcp',
  '@crustcore/secrets',
];

const common = {
  entryPoints: ['src/bin.ts'],
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  mainFields: ['module', 'main'],
  metafile: true,
  legalComments: 'none',
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
};

const nano = await build({
  ...common,
  outfile: 'dist/crustcore-nano.js',
  conditions: ['source'],
  external: packs,
  define: { CRUSTCORE_VERSION: JSON.stringify(pkg.version), 'globalThis.CRUSTCORE_NANO': 'true' },
});
writeFileSync('dist/meta.json', JSON.stringify(nano.metafile));

await build({
  ...common,
  outfile: 'dist/crustcore.js',
  external: ['@crustcore/*'],
  define: { CRUSTCORE_VERSION: JSON.stringify(pkg.version), 'globalThis.CRUSTCORE_NANO': 'false' },
});
