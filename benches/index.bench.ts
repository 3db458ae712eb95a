/**
 * Repo capsule build cost (issue #15 item 1), on a generated repository of
 * 1,000 source files (TypeScript, Python, Go, Rust in equal parts):
 *  - a full build (empty cache), per 1,000 files;
 *  - an incremental re-index after one file changes (one file parsed);
 * each against `git ls-files -s` on the same tree in the same run, through
 * the same trusted git runner the index uses. Each case is timed over
 * BENCH_ROUNDS rounds (default 5) and reported by its median: a full build
 * takes seconds, too long for tinybench's sample counts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildIndex } from '@crustcore/index';
import { openRepository, repositoryLocation, runGitAt } from '@crustcore/verify';
import { report } from './harness.js';

const FILES = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const gitEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', ...args], { cwd, env: gitEnv });

const SOURCES: readonly ((n: number) => [string, string])[] = [
  (n) => [
    `ts/m${n}.ts`,
    `export interface I${n} { a: number }\nexport class C${n} {\n  run(): number {\n    return ${n};\n  }\n}\nexport const f${n} = (x: number) => x + ${n};\n`,
  ],
  (n) => [
    `py/m${n}.py`,
    `class C${n}:\n    def run(self):\n        return ${n}\n\n\ndef f${n}(x):\n    return x + ${n}\n`,
  ],
  (n) => [
    `go/m${n}.go`,
    `package m\n\ntype S${n} struct{ a int }\n\nfunc (s S${n}) Run() int { return ${n} }\n\nfunc F${n}(x int) int { return x + ${n} }\n`,
  ],
  (n) => [
    `rs/m${n}.rs`,
    `pub struct S${n} { a: i32 }\n\nimpl S${n} {\n    pub fn run(&self) -> i32 { ${n} }\n}\n\npub fn f${n}(x: i32) -> i32 { x + ${n} }\n`,
  ],
];

function makeTree(): string {
  const base = mkdtempSync(join(tmpdir(), 'cc-index-bench-'));
  const repo = join(base, 'repo');
  for (const dir of ['ts', 'py', 'go', 'rs']) mkdirSync(join(repo, dir), { recursive: true });
  for (let n = 0; n < FILES; n++) {
    const [path, text] = (SOURCES[n % SOURCES.length] as (n: number) => [string, string])(n);
    writeFileSync(join(repo, path), text);
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'tree');
  return base;
}

async function median(
  rounds: number,
  once: (round: number) => Promise<void>,
  prepare: (round: number) => void = () => {},
): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    prepare(round);
    const start = performance.now();
    await once(round);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

const base = makeTree();
const repoDir = join(base, 'repo');
try {
  const repo = await openRepository(repoDir);
  if (repo._tag === 'Left') throw new Error(repo.left.message);
  const location = { ...repositoryLocation(repo.right), workTree: repoDir, cwd: repoDir };
  const build = async (cacheDir: string) => {
    const built = await buildIndex({ dir: repoDir, cacheDirFor: () => cacheDir });
    if (built._tag === 'Left') throw new Error(built.left.message);
    return built.right;
  };
  await build(join(base, 'warm')); // loads the WASM runtime and grammars once, as a long-lived process would have
  const lsFiles = await median(ROUNDS, async () => {
    const listed = await runGitAt(location, ['ls-files', '-s', '-z']);
    if (listed._tag === 'Left') throw new Error(listed.left.message);
  });
  const full = await median(ROUNDS, async (round) => void (await build(join(base, `full-${round}`))));
  const incremental = await median(
    ROUNDS,
    async () => {
      const result = await build(join(base, 'warm'));
      if (result.stats.parsed.length !== 1) throw new Error(`expected one parse, saw ${result.stats.parsed.length}`);
    },
    (round) => {
      writeFileSync(join(repoDir, 'ts/m0.ts'), `export const changed${round} = ${round};\n`);
      git(repoDir, 'add', 'ts/m0.ts');
    },
  );
  console.log(`\n## index (${FILES} files, median of ${ROUNDS})`);
  report('git ls-files -s (baseline)', `${lsFiles.toFixed(1)} ms`);
  report('full build per 1,000 files', `${full.toFixed(1)} ms = ${(full / lsFiles).toFixed(1)}× git ls-files`);
  report(
    'incremental re-index after one change',
    `${incremental.toFixed(1)} ms = ${(incremental / lsFiles).toFixed(1)}× git ls-files`,
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
