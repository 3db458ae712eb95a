/**
 * What a repository's history costs each `crustcore run`: a project whose ledger and apply
 * journals hold BENCH_HISTORY past tasks (default 100, made by real `crustcore run`s) against
 * one that holds 2, in the same run, rounds alternated. Target: ≤ 1.15× at 100 past tasks.
 *
 * Then the parts of a run that used to read the whole history, each against the way it
 * did so, measured in the same run on the long history:
 * - the open's rebuild restoring only the snapshot it resumes from vs every snapshot it meets;
 * - the run's closing ledger check resumed where its open left off (`InspectOptions.resume`)
 *   vs the check scoped from the snapshot (`fromSnapshot`: it chain-checked every frame again);
 * - start-up journal recovery, which skips journals marked ended, vs reading every journal
 *   (`includeEnded`, what it did before the markers).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inspectLog, kernelReplay, openReceiptKey, rebuildKernel } from '@crustcore/ledger';
import { recoverJournals } from '@crustcore/verify';
import { BUGGY_ADD_FILES, benchEnv, gitProject, median } from './git-project.js';
import { ratio, runCases } from './harness.js';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'packages/crustcore/dist/crustcore.cjs');
const HISTORY = Number(process.env.BENCH_HISTORY ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-bench-history-')));
const env = benchEnv(scratch);

const project = (name: string): string =>
  gitProject(
    join(scratch, name),
    {
      'package.json':
        '{ "name": "h", "private": true, "type": "module", "scripts": { "test": "node --test test/" } }\n',
      ...BUGGY_ADD_FILES,
    },
    env,
  );

/** One real task: the worker fixes the bug, the fix is verified and applied; then the tree is reset. */
function runOnce(dir: string, home: string): number {
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [CLI, 'run', '--dir', dir, '--goal', 'fix', '--worker', `sh -c "sed -i 's/a - b/a + b/' src/math.js"`].concat([
      '--verify',
      'node --test test/',
      '--approve',
      'auto',
      '--json',
    ]),
    { env: { ...env, CRUSTCORE_HOME: home } },
  );
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`run failed: ${r.stdout}${r.stderr}`);
  execFileSync('git', ['checkout', '-q', '--', '.'], { cwd: dir, env });
  return ms;
}

const shortDir = project('short');
const longDir = project('long');
const shortHome = join(scratch, 'home-short');
const longHome = join(scratch, 'home-long');
for (let i = 0; i < 2; i++) runOnce(shortDir, shortHome);
console.log(`making a history of ${HISTORY} tasks…`);
for (let i = 0; i < HISTORY; i++) runOnce(longDir, longHome);

const short: number[] = [];
const long: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  short.push(runOnce(shortDir, shortHome));
  long.push(runOnce(longDir, longHome));
}
const s = median(short);
const l = median(long);
console.log(
  `ratio crustcore run, ${HISTORY} past tasks vs 2: ${(l / s).toFixed(2)}× (${Math.round(l)} vs ${Math.round(s)} ms; ` +
    `+${Math.round(((l - s) * 100) / HISTORY)} ms per 100 past tasks) — target: ≤ 1.15× at 100`,
);

// The two parts that read the whole history, each against its old way, on the long history.
const projectDir = join(longHome, 'projects', readdirSync(join(longHome, 'projects'))[0] as string);
const logPath = join(projectDir, 'events.log');
const key = openReceiptKey({ CRUSTCORE_HOME: longHome });
if (key._tag === 'Left') throw new Error('no receipt key');
const rebuilt = rebuildKernel(logPath, kernelReplay(), { key: key.right });
const prefix = rebuilt.checkedPrefix;
if (prefix === undefined) throw new Error('the history has no trusted snapshot');
const check = (scope: { resume: typeof prefix } | { fromSnapshot: number }) => () => {
  const report = inspectLog({
    logPath,
    artifactsDir: join(projectDir, 'artifacts'),
    key: key.right,
    kernel: kernelReplay(),
    replay: true,
    ...scope,
  });
  if (!report.ok) throw new Error(`check failed: ${report.failure?.reason}`);
};
// The tail a run's check reads: from the newest snapshot's covered frame (≤ ~256 frames of the CLI's) on.
const tail = rebuilt.lastSeq - prefix.after.seq;
const [resumed, scoped] = await runCases(
  `a run's closing ledger check (${rebuilt.frames} frames, ${tail} after the open's prefix)`,
  [
    { name: 'resumed where the open left off', fn: check({ resume: prefix }) },
    {
      name: 'scoped from the snapshot, every frame chain-checked again (before)',
      fn: check({ fromSnapshot: prefix.snapshotSeq }),
    },
  ],
);
if (resumed !== undefined && scoped !== undefined) ratio('closing check, resumed vs scoped', resumed, scoped);

const rebuildWith = (restoreEverySnapshot: boolean) => () => {
  const again = rebuildKernel(logPath, kernelReplay(), { key: key.right, restoreEverySnapshot });
  if (again.failure !== undefined || again.resumedAtSnapshot !== rebuilt.resumedAtSnapshot)
    throw new Error('the rebuild did not resume from the newest snapshot');
};
const [deferredOpen, eagerOpen] = await runCases(
  `the open's rebuild (${rebuilt.frames} frames, a snapshot ending each run)`,
  [
    { name: 'restoring only the snapshot it resumes from', fn: rebuildWith(false) },
    { name: 'restoring every snapshot it meets (before)', fn: rebuildWith(true) },
  ],
);
if (deferredOpen !== undefined && eagerOpen !== undefined)
  ratio('open rebuild, one restore vs every snapshot', deferredOpen, eagerOpen);

const journalRoot = join(longHome, 'journal');
const [marked, all] = await runCases(`start-up journal recovery (${HISTORY + ROUNDS} journals)`, [
  { name: 'journals marked ended skipped', fn: () => recoverJournals({ journalRoot }) },
  { name: 'every journal read (before)', fn: () => recoverJournals({ journalRoot, includeEnded: true }) },
]);
if (marked !== undefined && all !== undefined) ratio('journal recovery, marked vs every journal', marked, all);
rmSync(scratch, { recursive: true, force: true });
