// Builds the single executable, packages/crustcore/dist/sea/crustcore (docs/single-executable.md): nano's trusted core
// plus the secrets pack (so errors and the demo are redacted as in the installed CLI), bundled as
// one CommonJS file (the only entry Node's single executables take), evaluated into a start-up
// snapshot and injected into a copy of this Node binary with postject.
//   npm run sea [-- --no-snapshot]   (node scripts/sea.mjs)
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { eagerInNano, packs, pkg } from '../packages/crustcore/build-shared.mjs';

// The sentinel Node's single-executable loader looks for (Node's documented fuse for SEA blobs).
// Paths below are the CLI package's, wherever this is started from.
process.chdir(fileURLToPath(new URL('../packages/crustcore/', import.meta.url)));
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const OUT = 'dist/sea';
const snapshot = !process.argv.includes('--no-snapshot');

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const entry = join(OUT, 'crustcore-sea.cjs');
await build({
  entryPoints: ['src/sea-main.ts'],
  absWorkingDir: process.cwd(),
  bundle: true,
  minify: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  mainFields: ['module', 'main'],
  conditions: ['source'],
  legalComments: 'none',
  logLevel: 'error',
  outfile: entry,
  plugins: [eagerInNano],
  // The other packs stay out, as in nano: their commands say which install has them.
  external: packs.filter((name) => name !== '@crustcore/secrets'),
  define: {
    CRUSTCORE_VERSION: JSON.stringify(pkg.version),
    'globalThis.CRUSTCORE_NANO': 'true',
    // This binary runs only the CLI: scripts need the PATH's node (see sandbox/src/mount/node-binary.ts).
    'globalThis.CRUSTCORE_SEA': 'true',
    // No files beside the executable: the setup bridge travels as text (see setup-run.ts).
    'globalThis.CRUSTCORE_SETUP_BRIDGE_SOURCE': JSON.stringify(
      readFileSync('../verify/assets/setup-bridge.mjs', 'utf8'),
    ),
  },
});

const blob = join(OUT, 'crustcore.blob');
const config = join(OUT, 'sea-config.json');
writeFileSync(
  config,
  JSON.stringify({
    main: entry,
    output: blob,
    disableExperimentalSEAWarning: true,
    useSnapshot: snapshot,
    useCodeCache: !snapshot,
  }),
);
// Quiet unless it fails: then node's own message says why.
execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'pipe' });

const executable = join(OUT, 'crustcore');
copyFileSync(process.execPath, executable);
chmodSync(executable, 0o755);
const { inject } = createRequire(import.meta.url)('postject');
await inject(executable, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
rmSync(blob);
console.log(`${executable} (${snapshot ? 'with' : 'without'} a start-up snapshot)`);
