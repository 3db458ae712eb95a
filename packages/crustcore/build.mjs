// Builds crustcore-nano: one bundled, minified ESM file. Heavy packs are
// never bundled; the CLI imports them lazily, only for the commands that need
// them, so `--version`, `run` and `demo` never load them.
import { readFileSync } from 'node:fs';
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

await build({
  entryPoints: ['src/bin.ts'],
  outfile: 'dist/crustcore.js',
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  conditions: ['source'],
  mainFields: ['module', 'main'],
  external: packs,
  metafile: true,
  legalComments: 'none',
  banner: { js: '#!/usr/bin/env node' },
  define: { CRUSTCORE_VERSION: JSON.stringify(pkg.version) },
  logLevel: 'warning',
}).then(async (result) => {
  const { writeFileSync } = await import('node:fs');
  writeFileSync('dist/meta.json', JSON.stringify(result.metafile));
});
