/**
 * CLI start-up (issue #17: "start-up ≤ 1.1× node"). Spawns the built CLI the
 * way a person runs it — `crustcore --version`, `--help`, `<cmd> --help`, an
 * unknown command — through the bin (crustcore.cjs) and the ES module entry
 * (crustcore.js), crustcore-nano and the single executable, each against `node -e 0` spawned in
 * the same rounds (see sampleInterleaved). An empty ES module
 * is the floor any ESM entry pays on top of `node -e 0` (the ESM loader); an
 * empty CommonJS file the floor of the bin.
 * Peak RSS comes from the kernel's rusage of each child (python3 waits for it).
 *
 * `node --conditions=source --import tsx benches/startup.bench.ts [iterations]`
 * (default 24 rounds); build first (scripts/setup.sh).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BenchRow, ratio, report } from './harness.js';

const ITERATIONS = Number(process.argv[2] ?? 24);
const DIST = resolve(import.meta.dirname, '../packages/crustcore/dist');
const BIN = join(DIST, 'crustcore.cjs');
const ESM = join(DIST, 'crustcore.js');
const NANO = join(DIST, 'crustcore-nano.js');
// The single executable (docs/single-executable.md), with its start-up snapshot: built here when missing.
const SEA = join(DIST, 'sea', 'crustcore');
if (!existsSync(SEA))
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../scripts/sea.mjs')], { stdio: 'ignore' });
const scratch = mkdtempSync(join(tmpdir(), 'crustcore-bench-startup-'));
const EMPTY_MODULE = join(scratch, 'empty.mjs');
writeFileSync(EMPTY_MODULE, '');
const EMPTY_CJS = join(scratch, 'empty.cjs');
writeFileSync(EMPTY_CJS, '');
// A private home, so nothing the CLI might read at start-up comes from this machine's user.
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch, CRUSTCORE_HOME: scratch, NO_COLOR: '1' };

interface Subject {
  readonly name: string;
  readonly argv: readonly [string, ...string[]];
  /** The exit code the subject must end with; a crash would otherwise look like a fast start. */
  readonly status: number;
  /** Run on a terminal (script(1) gives it a pty), as a person types it; compared with node -e 0 there. */
  readonly pty?: boolean;
}

const node = (...args: string[]): readonly [string, ...string[]] => [process.execPath, ...args];
const BASELINE: Subject = { name: 'node -e 0', argv: node('-e', '0'), status: 0 };
const SUBJECTS: readonly Subject[] = [
  { name: 'node empty.mjs (ESM floor)', argv: node(EMPTY_MODULE), status: 0 },
  { name: 'node empty.cjs (CommonJS floor)', argv: node(EMPTY_CJS), status: 0 },
  { name: 'crustcore --version', argv: node(BIN, '--version'), status: 0 },
  { name: 'crustcore --help', argv: node(BIN, '--help'), status: 0 },
  { name: 'crustcore run --help', argv: node(BIN, 'run', '--help'), status: 0 },
  { name: 'crustcore daemon --help', argv: node(BIN, 'daemon', '--help'), status: 0 },
  { name: 'crustcore rnu (unknown command)', argv: node(BIN, 'rnu'), status: 2 },
  { name: 'crustcore.js --version (ESM entry)', argv: node(ESM, '--version'), status: 0 },
  { name: 'crustcore.js --help (ESM entry)', argv: node(ESM, '--help'), status: 0 },
  { name: 'crustcore-nano --version', argv: node(NANO, '--version'), status: 0 },
  { name: 'crustcore-nano --help', argv: node(NANO, '--help'), status: 0 },
  { name: 'single executable --version', argv: [SEA, '--version'], status: 0 },
  { name: 'single executable --help', argv: [SEA, '--help'], status: 0 },
  { name: 'crustcore --help on a terminal', argv: node(BIN, '--help'), status: 0, pty: true },
  { name: 'crustcore run --help on a terminal', argv: node(BIN, 'run', '--help'), status: 0, pty: true },
  { name: 'crustcore rnu on a terminal', argv: node(BIN, 'rnu'), status: 2, pty: true },
];
/** The baseline for the terminal cases: node -e 0 under the same script(1). */
const PTY_BASELINE: Subject = { name: 'node -e 0 on a terminal', argv: node('-e', '0'), status: 0, pty: true };

/** script(1) runs the command on a pty and exits with its status (-e). */
const onTerminal = (argv: readonly string[]): readonly [string, ...string[]] => [
  'script',
  '-qec',
  argv.map((word) => `'${word.replaceAll("'", `'"'"'`)}'`).join(' '),
  '/dev/null',
];

function spawnOnce(subject: Subject): void {
  const [command, ...args] = subject.pty === true ? onTerminal(subject.argv) : subject.argv;
  const result = spawnSync(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (result.status !== subject.status) {
    throw new Error(`${subject.name} exited ${result.status} (want ${subject.status}): ${result.stderr}`);
  }
}

/**
 * Interleaved rounds instead of tinybench's one-task-after-another: on this shared machine the
 * load drifts over a minute, and a case measured during a busy stretch would look slow against a
 * baseline measured in a quiet one. Each round spawns every subject once, in a rotated order.
 */
function sampleInterleaved(subjects: readonly Subject[], rounds: number): Map<string, number[]> {
  const samples = new Map(subjects.map((s) => [s.name, [] as number[]]));
  for (const subject of subjects) spawnOnce(subject); // warm the page cache
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[(round + k) % subjects.length] as Subject;
      const started = performance.now();
      spawnOnce(subject);
      samples.get(subject.name)?.push(performance.now() - started);
    }
  }
  return samples;
}

function toRow(name: string, timesMs: readonly number[]): BenchRow {
  const sorted = [...timesMs].sort((a, b) => a - b);
  const p50Ms = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  const meanMs = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { name, p50Ms, meanMs, perItemP50Us: p50Ms * 1000, itemsPerSecond: 1000 / meanMs, samples: sorted.length };
}

const ALL = [BASELINE, PTY_BASELINE, ...SUBJECTS];
const sampled = sampleInterleaved(ALL, ITERATIONS);
const rows = ALL.map((s) => toRow(s.name, sampled.get(s.name) ?? []));
console.log(`\n## CLI start-up (${ITERATIONS} interleaved rounds, p50 of each)`);
console.table(rows.map((r) => ({ case: r.name, 'p50 (ms)': r.p50Ms.toFixed(1), 'mean (ms)': r.meanMs.toFixed(1) })));
const row = (name: string): BenchRow => {
  const found = rows.find((r) => r.name === name);
  if (found === undefined) throw new Error(`no row ${name}`);
  return found;
};
const baseline = row(BASELINE.name);
const ptyBaseline = row(PTY_BASELINE.name);
for (const subject of SUBJECTS) {
  const target = subject.name.startsWith('node ') ? undefined : '≤ 1.1× (issue #17)';
  const against = subject.pty === true ? ptyBaseline : baseline;
  ratio(`${subject.name} vs ${against.name}`, row(subject.name), against, target);
}

/** Peak resident set of one spawn, in KiB, from the kernel's accounting of the waited child. */
function peakRssKiB(subject: Subject): number {
  const script =
    'import resource,subprocess,sys\nsubprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)\nprint(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)';
  const result = spawnSync('python3', ['-c', script, ...subject.argv], { env, encoding: 'utf8' });
  return Number(result.stdout.trim());
}

const medianRss = (subject: Subject): number => {
  const samples = Array.from({ length: 7 }, () => peakRssKiB(subject)).sort((a, b) => a - b);
  return samples[3] ?? Number.NaN;
};
const baseRss = medianRss(BASELINE);
report('peak RSS node -e 0', `${(baseRss / 1024).toFixed(1)} MiB (median of 7)`);
for (const subject of SUBJECTS.filter((candidate) => candidate.pty !== true)) {
  const rss = medianRss(subject);
  report(
    `peak RSS ${subject.name}`,
    `${(rss / 1024).toFixed(1)} MiB = ${(rss / baseRss).toFixed(2)}× node -e 0`,
    subject.name.startsWith('node ') ? undefined : '≤ 1.2× (issue #17)',
  );
}
rmSync(scratch, { recursive: true, force: true });
