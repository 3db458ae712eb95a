/**
 * Opening a NEW embedded database (every `crustcore mcp`, daemon and memory
 * store with a fresh state directory): `PgliteInstance.open`, which starts
 * from the build's empty-cluster template, against a bare `PGlite.create` on
 * an empty directory (PGlite's own initdb), and against reopening a directory
 * that already holds a cluster. CPU time of this process (PGlite runs in it)
 * and wall time, median of ROUNDS; each database is closed before the next.
 *
 * Run: node --conditions=source --import tsx benches/pglite-open.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgliteInstance } from '@crustcore/state';
import { PGlite } from '@electric-sql/pglite';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const scratch = mkdtempSync(join(tmpdir(), 'crustcore-bench-pglite-'));

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

async function measure(open: (dir: string) => Promise<() => Promise<void>>, fresh: boolean) {
  const cpu: number[] = [];
  const wall: number[] = [];
  const reused = join(scratch, `reused-${Math.random().toString(36).slice(2)}`);
  if (!fresh) await (await open(reused))();
  for (let round = 0; round < ROUNDS; round += 1) {
    const dir = fresh ? mkdtempSync(join(scratch, 'db-')) : reused;
    const c0 = cpuMs();
    const t0 = performance.now();
    const close = await open(dir);
    wall.push(performance.now() - t0);
    cpu.push(cpuMs() - c0);
    await close();
  }
  return { cpuMs: Math.round(median(cpu)), wallMs: Math.round(median(wall)) };
}

const viaCrustcore = async (dir: string) => {
  const opened = await PgliteInstance.open({ dataDir: dir });
  if (opened._tag === 'Left') throw new Error(JSON.stringify(opened.left));
  return () => opened.right.close();
};
const bareInitdb = async (dir: string) => {
  const pg = await PGlite.create({ dataDir: dir });
  return () => pg.close();
};

const initdb = await measure(bareInitdb, true);
const template = await measure(viaCrustcore, true);
const reopen = await measure(viaCrustcore, false);
rmSync(scratch, { recursive: true, force: true });
console.log(`\n## opening a PGlite database (median of ${ROUNDS})`);
console.table([
  { case: 'baseline: PGlite.create on an empty directory (initdb)', ...initdb },
  { case: 'PgliteInstance.open, new directory (template)', ...template },
  { case: 'PgliteInstance.open, existing cluster', ...reopen },
]);
console.log(
  `new database from the template vs initdb: ${(template.cpuMs / initdb.cpuMs).toFixed(2)}× CPU, ` +
    `${(template.wallMs / initdb.wallMs).toFixed(2)}× wall; reopening: ${(reopen.cpuMs / initdb.cpuMs).toFixed(2)}× CPU`,
);
