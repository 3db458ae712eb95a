/**
 * Issue #5 benchmarks, measured in the same run:
 * - `crustcore demo --json` wall time (target under 3 s on a quiet machine);
 * - `crustcore run` overhead over doing the same work by hand: the same worker
 *   command and the same verify command run directly, twice (once on the
 *   base, once after the change, as run does with its baseline).
 * Both through the bin users run (dist/crustcore.cjs), which compiles the CLI
 * from its V8 code cache; the same run with CRUSTCORE_CODE_CACHE=0 (the ES
 * module CLI, compiled from source) is reported beside it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'packages/crustcore/dist/crustcore.cjs');
execFileSync(process.execPath, ['build.mjs'], { cwd: join(ROOT, 'packages/crustcore'), stdio: 'inherit' });
// The build removed the code cache: one command writes it again, as a user's first command does.
spawnSync(process.execPath, [CLI, 'demo', '--json'], { env: { PATH: process.env.PATH, HOME: tmpdir() } });

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};
const time = (fn: () => void): number => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};

const FILES: Record<string, string> = {
  'package.json': '{ "name": "b", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n',
  'src/math.js': 'export function add(a, b) {\n  return a - b;\n}\n',
  'test/math.test.js':
    "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { add } from '../src/math.js';\ntest('adds', () => assert.equal(add(2, 3), 5));\n",
};
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@b',
};

function freshRepo(): { root: string; repo: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-bench-')));
  const repo = join(root, 'repo');
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  for (const args of [
    ['init', '-q'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'base'],
  ])
    execFileSync('git', args, { cwd: repo, env });
  return { root, repo };
}

const WORKER = "sed -i 's/a - b/a + b/' src/math.js";

/** One `crustcore run` of the worker in `b`, timed; `extraEnv` picks the CLI's start. */
function timedRunIn(b: { root: string; repo: string }, extraEnv: Record<string, string>): number {
  const args = ['run', '--dir', b.repo, '--goal', 'fix', '--worker', `sh -c "${WORKER}"`, '--verify', 'node --test'];
  return time(() => {
    const r = spawnSync(process.execPath, [CLI, ...args, '--approve', 'auto', '--json'], {
      env: { ...env, HOME: b.root, CRUSTCORE_HOME: join(b.root, 'home'), ...extraEnv },
    });
    if (r.status !== 0) throw new Error(`run failed: ${r.stdout}${r.stderr}`);
  });
}

/** The first run in a fresh repository and CRUSTCORE_HOME (cold worktree pool), and optionally a second one there. */
function timedRuns(extraEnv: Record<string, string>, again: boolean): { first: number; second: number | null } {
  const b = freshRepo();
  const first = timedRunIn(b, extraEnv);
  let second: number | null = null;
  if (again) {
    // The next task in the same repository: the bug is back, the pool's worktrees are warm.
    execFileSync('git', ['checkout', '-q', '--', '.'], { cwd: b.repo, env });
    second = timedRunIn(b, extraEnv);
  }
  rmSync(b.root, { recursive: true, force: true });
  return { first, second };
}

const demo: number[] = [];
const byHand: number[] = [];
const viaRun: number[] = [];
const viaRunUncached: number[] = [];
const viaRunWarm: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  demo.push(time(() => spawnSync(process.execPath, [CLI, 'demo', '--json'], { env: { ...env, HOME: tmpdir() } })));
  const a = freshRepo();
  byHand.push(
    time(() => {
      spawnSync('node', ['--test'], { cwd: a.repo, env });
      spawnSync('sh', ['-c', WORKER], { cwd: a.repo, env });
      spawnSync('node', ['--test'], { cwd: a.repo, env });
    }),
  );
  rmSync(a.root, { recursive: true, force: true });
  const cached = timedRuns({}, true);
  viaRun.push(cached.first);
  viaRunWarm.push(cached.second ?? Number.NaN);
  viaRunUncached.push(timedRuns({ CRUSTCORE_CODE_CACHE: '0' }, false).first);
}
const d = median(demo);
const h = median(byHand);
const r = median(viaRun);
const u = median(viaRunUncached);
const w = median(viaRunWarm);
console.log(`\n## crustcore demo and run (median of ${ROUNDS})`);
console.table([
  { case: 'crustcore demo --json (wall)', ms: Math.round(d) },
  { case: 'by hand: node --test, worker, node --test', ms: Math.round(h) },
  { case: 'crustcore run (worktree, sandbox, ledger, verify, journal)', ms: Math.round(r) },
  { case: 'crustcore run, the next task in that repository (warm pool)', ms: Math.round(w) },
  { case: 'crustcore run, CRUSTCORE_CODE_CACHE=0 (ES module CLI)', ms: Math.round(u) },
]);
console.log(`demo wall time: ${(d / 1000).toFixed(2)} s — target: under 3 s`);
console.log(
  `ratio crustcore run (first task in a repository) vs by hand: ${(r / h).toFixed(2)}× (overhead ${Math.round(r - h)} ms) — target: ≤ 300 ms`,
);
console.log(
  `ratio crustcore run, next task vs by hand: ${(w / h).toFixed(2)}× (overhead ${Math.round(w - h)} ms) — target: ≤ 300 ms`,
);
console.log(
  `ratio crustcore run, code cache vs none: ${(r / u).toFixed(2)}× (${Math.round(r)} ms vs ${Math.round(u)} ms; without it the overhead is ${Math.round(u - h)} ms)`,
);
