/**
 * `xtask size`: prints the inputs that take the most bytes in the kernel and in crustcore-nano, so a
 * size regression points at its cause. The kernel is built here with an esbuild metafile; nano's
 * table is read from the metafile the real build writes (packages/crustcore/dist/meta.json), so it
 * describes the file the gate measures — a second build here had drifted from it (other packs
 * external, other defines) and listed packages nano does not contain.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';

interface Target {
  readonly name: string;
  readonly entry: string;
  readonly external: readonly string[];
  /** The same defines the real build uses, so the table measures the file that ships. */
  readonly define: Readonly<Record<string, string>>;
}

const targets: readonly Target[] = [
  { name: '@crustcore/kernel', entry: 'packages/kernel/src/index.ts', external: [], define: {} },
];
const NANO_META = 'packages/crustcore/dist/meta.json';
const NANO_FILE = 'packages/crustcore/dist/crustcore-nano.js';

function topInputs(meta: Metafile, limit: number): { path: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const output of Object.values(meta.outputs)) {
    for (const [path, info] of Object.entries(output.inputs)) {
      // Group node_modules by package so the table names dependencies.
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
      const key = match ? `npm:${match[1]}` : path;
      totals.set(key, (totals.get(key) ?? 0) + info.bytesInOutput);
    }
  }
  return [...totals.entries()]
    .map(([path, bytes]) => ({ path, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, limit);
}

export async function size(args: string[]): Promise<number> {
  const limit = Number(args[0] ?? 15);
  for (const target of targets) {
    const result = await build({
      entryPoints: [target.entry],
      bundle: true,
      minify: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      conditions: ['source'],
      mainFields: ['module', 'main'],
      external: [...target.external],
      define: { ...target.define },
      logLevel: 'error',
    });
    const bytes = result.outputFiles.reduce((n, f) => n + f.contents.byteLength, 0);
    const gz = result.outputFiles.reduce((n, f) => n + gzipSync(f.contents).byteLength, 0);
    console.log(`\n${target.name}: ${bytes.toLocaleString('en-US')} B minified, ${gz.toLocaleString('en-US')} B gzip`);
    printTable(result.metafile, limit, bytes);
  }
  if (!existsSync(NANO_META)) {
    console.error(`\ncrustcore-nano: no ${NANO_META}; run npm run build first`);
    return 1;
  }
  const nano = statSync(NANO_FILE).size;
  console.log(`\ncrustcore-nano (the built file): ${nano.toLocaleString('en-US')} B minified`);
  printTable(JSON.parse(readFileSync(NANO_META, 'utf8')) as Metafile, limit, nano);
  return 0;
}

function printTable(meta: Metafile, limit: number, bytes: number): void {
  console.table(
    topInputs(meta, limit).map((r) => ({
      input: r.path,
      bytes: r.bytes,
      share: `${((100 * r.bytes) / bytes).toFixed(1)}%`,
    })),
  );
}
