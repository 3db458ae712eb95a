// Builds the CLI three times:
//  - dist/crustcore-nano.js: one bundled, minified file with the trusted core
//    (kernel, ledger, confine, sandbox, verify, the runtime). The size gate
//    measures it. Packs are not in it and nano refuses the commands that need
//    them, so no second copy of the core can meet the first.
//  - dist/crustcore.js (with its lazily loaded chunks in dist/chunks/): the
//    CLI and every @crustcore package in one build split into chunks. esbuild
//    puts each module in exactly one chunk, so the CLI and the packs it loads
//    on demand (agent, workers, state, mcp, net, secrets) share one instance of
//    each module — capabilities and receipts are class instances, and a second
//    copy would not recognize the first's. One build also means a command loads
//    a few chunks instead of ~60 package files (the ES module loader's cost per
//    file is what `crustcore run` spent its first 100 ms on).
//  - dist/crustcore.cjs (the `crustcore` bin): answers help, the version and
//    mistyped names from the specs alone, and hands every command that runs
//    to dist/crustcore.js.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { eagerInNano, packs, pkg } from './build-shared.mjs';

const common = {
  entryPoints: ['src/bin.ts'],
  bundle: true,
  // NO_MINIFY=1 keeps names readable in a CPU profile (how the run overhead was found).
  minify: process.env.NO_MINIFY !== '1',
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
  plugins: [eagerInNano],
  outfile: 'dist/crustcore-nano.js',
  conditions: ['source'],
  external: packs,
  define: {
    CRUSTCORE_VERSION: JSON.stringify(pkg.version),
    'globalThis.CRUSTCORE_NANO': 'true',
    // Not the single executable (scripts/sea.mjs): its code for finding node and its bridge drop out.
    'globalThis.CRUSTCORE_SEA': 'false',
    'globalThis.CRUSTCORE_SETUP_BRIDGE_SOURCE': 'undefined',
  },
});
writeFileSync('dist/meta.json', JSON.stringify(nano.metafile));

// Third-party packages stay outside the bundle (they find their own files, e.g. PGlite's WASM, next
// to their own modules) except the small pure ones every command needs at start-up.
const BUNDLED_THIRD_PARTY = /^(?:fp-ts|io-ts|@noble\/hashes)(?:\/|$)/;
const NODE_BUILTINS = new Set(builtinModules);
const isNodeBuiltin = (specifier) => specifier.startsWith('node:') || NODE_BUILTINS.has(specifier.split('/')[0]);
const thirdPartyExternal = {
  name: 'third-party-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      // A package's own manifest, located at run time (package-relative-urls): nothing to bundle.
      if (args.kind === 'require-resolve') return { path: args.path, external: true };
      if (args.path.startsWith('@crustcore/') || BUNDLED_THIRD_PARTY.test(args.path) || isNodeBuiltin(args.path))
        return undefined;
      return { path: args.path, external: true };
    });
  },
};

// A package that finds its own files (assets/bridge.mjs, its PGlite template) through import.meta.url
// would, once bundled, look next to the chunk instead. Each such use is replaced by the URL the module
// has in its own package, found at run time through the package's exported package.json.
// (In the CommonJS bundle, where import.meta is empty, the same URL comes from require.resolve.)
const PACKAGE_DIST = /^(.*\/packages\/([\w-]+))\/dist\/.+\.js$/;
const packageRelativeUrls = (format) => ({
  name: 'package-relative-urls',
  setup(build) {
    build.onLoad({ filter: PACKAGE_DIST }, async (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      // The package's root from the path itself, so a file in a subdirectory of dist/ resolves too.
      const [, root, name] = PACKAGE_DIST.exec(args.path);
      const own = JSON.stringify(relative(root, args.path));
      const manifest = JSON.stringify(`@crustcore/${name}/package.json`);
      const base =
        format === 'cjs'
          ? `require("node:url").pathToFileURL(require.resolve(${manifest}))`
          : `import.meta.resolve(${manifest})`;
      const url = `new URL(${own}, ${base}).href`;
      return { contents: text.replaceAll('import.meta.url', url), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
});

// Split into chunks: a command's module (and the package code it imports) is its own chunk, loaded
// only when the command runs, so `--help` and `--version` load one small file. (A single file
// would hoist every import to its top and load them all at start-up.)
const esm = await build({
  ...common,
  entryPoints: { crustcore: 'src/bin.ts' },
  outdir: 'dist',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [thirdPartyExternal, packageRelativeUrls('esm')],
  define: { CRUSTCORE_VERSION: JSON.stringify(pkg.version), 'globalThis.CRUSTCORE_NANO': 'false' },
});
// golden/cli-startup.test.ts reads which package code each chunk carries.
writeFileSync('dist/esm-meta.json', JSON.stringify(esm.metafile));
assertExternalsDeclared(esm.metafile);

// Chunk names carry content hashes, so chunks of earlier builds would stay in dist/chunks and be
// packed into the published tarball: remove every chunk this build did not write. (Not the whole
// directory first: a golden test may be running the CLI from it while another file rebuilds.)
const written = new Set(Object.keys(esm.metafile.outputs).map((path) => basename(path)));
for (const name of readdirSync('dist/chunks')) if (!written.has(name)) rmSync(join('dist/chunks', name));

// The same CLI as one CommonJS file, which the bin compiles from a V8 code cache (src/cli/code-cache.ts):
// Node 20 caches no ES module's compiled code, and compiling the chunks a command loads was ~70 ms of a
// small `crustcore run`. One file, so a command compiles nothing it did not compile last time; no
// shebang, because the bin wraps it in a function. Its content hash names the cache files.
const cli = await build({
  ...common,
  banner: {},
  entryPoints: ['src/bin.ts'],
  outfile: 'dist/crustcore-cli.cjs',
  format: 'cjs',
  plugins: [thirdPartyExternal, packageRelativeUrls('cjs')],
  define: { CRUSTCORE_VERSION: JSON.stringify(pkg.version), 'globalThis.CRUSTCORE_NANO': 'false' },
});
writeFileSync('dist/cli-meta.json', JSON.stringify(cli.metafile));
assertExternalsDeclared(cli.metafile);
const cliText = routeDynamicImports('dist/crustcore-cli.cjs', cli.metafile);
const cliBundleId = createHash('sha256').update(cliText).digest('hex').slice(0, 16);
// Caches of earlier bundles are never read again (their names carry the old hash).
for (const name of readdirSync('dist')) if (name.endsWith('.v8cache')) rmSync(join('dist', name));

// The bin users run: a CommonJS file, because Node starts one without its ES module loader (the
// loader alone costs more than answering `--help`). It carries the specs, the help and the
// terminal guard (@crustcore/safe-text, bundled: pure functions, no instance to share) and hands
// every command that runs to dist/crustcore.js.
const bin = await build({
  ...common,
  entryPoints: ['src/fast-start.ts'],
  outfile: 'dist/crustcore.cjs',
  format: 'cjs',
  external: ['./crustcore.js'],
  define: {
    CRUSTCORE_VERSION: JSON.stringify(pkg.version),
    CRUSTCORE_CLI_BUNDLE_ID: JSON.stringify(cliBundleId),
    'globalThis.CRUSTCORE_NANO': 'false',
  },
});
// golden/cli-startup.test.ts reads what the bin bundles: the CLI's own start-up code and safe-text only.
writeFileSync('dist/bin-meta.json', JSON.stringify(bin.metafile));

/**
 * A function compiled from a V8 code cache loses what `import()` needs on Node 20 (the script's
 * dynamic-import callback): the bundle's `import("pkg")` of the packages left outside it go through
 * `__crustcoreImport`, which the bin passes in (an `import()` of its own, from the same directory).
 * Every dynamic import the metafile lists must be rewritten, and no other `import(` may remain.
 * Returns the text written.
 */
function routeDynamicImports(file, metafile) {
  const [output] = Object.values(metafile.outputs);
  const expected = output.imports.filter((entry) => entry.kind === 'dynamic-import' && entry.external).length;
  const literal = /(?<![\w$.])import\((["'])([^"'\\]+)\1\)/g;
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(literal)].length;
  const routed = text.replace(literal, (_all, quote, specifier) => `__crustcoreImport(${quote}${specifier}${quote})`);
  if (found !== expected || /(?<![\w$.])import\(/.test(routed))
    throw new Error(`${file}: ${found} literal import() calls, ${expected} in the metafile, or an import() left`);
  writeFileSync(file, routed);
  return routed;
}

/** Every package the bundle imports at run time must be a dependency of crustcore, or an install would not find it. */
function assertExternalsDeclared(metafile) {
  const declared = new Set(Object.keys(pkg.dependencies ?? {}));
  const missing = new Set();
  for (const output of Object.values(metafile.outputs))
    for (const { path, external } of output.imports) {
      if (!external || path.startsWith('.') || isNodeBuiltin(path)) continue;
      const name = path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : path.split('/')[0];
      if (!declared.has(name)) missing.add(name);
    }
  if (missing.size > 0)
    throw new Error(`the CLI bundle imports packages crustcore does not depend on: ${[...missing].sort().join(', ')}`);
}
