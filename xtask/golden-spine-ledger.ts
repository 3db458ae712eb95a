/**
 * Generates golden/ledger/spine-v1/: a repository ledger written by the
 * production path — the built `crustcore run`, twice in one repository (real
 * git, real sandboxed worker and verification, LedgerSpine, one kernel). CI
 * replays it (golden/ledger-spine.test.ts), so an old log written by the
 * runtime keeps replaying whatever later code and defaults do. Never
 * regenerate spine-v1: a new format gets a new directory.
 *
 *   node packages/crustcore/build.mjs && node --conditions=source --import tsx xtask/golden-spine-ledger.ts [outDir]
 *
 * The receipt key is the throwaway one this run's CRUSTCORE_HOME created: a TEST
 * key, committed next to the log; it protects nothing.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspectLog, kernelReplay, loadReceiptKey, stateDirLayout } from '@crustcore/ledger';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'packages/crustcore/dist/crustcore.js');
const out = resolve(process.argv[2] ?? join(ROOT, 'golden/ledger/spine-v1'));

const FILES: Record<string, string> = {
  'package.json': '{ "name": "golden", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n',
  'src/math.js': 'export function add(a, b) {\n  return a - b;\n}\n',
  'test/math.test.js':
    "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { add } from '../src/math.js';\n\ntest('adds', () => {\n  assert.equal(add(2, 3), 5);\n});\n",
};

const root = realpathSync(mkdtempSync(join(tmpdir(), 'golden-spine-')));
const repo = join(root, 'repo');
const home = join(root, 'home');
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, CRUSTCORE_HOME: home, NO_COLOR: '1' };
for (const [path, text] of Object.entries(FILES)) {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), text);
}
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo, env, stdio: 'pipe' });
git('init', '-q', '-b', 'main');
git('add', '-A');
git('commit', '-q', '-m', 'base');

const run = (goal: string, worker: string): Record<string, unknown> => {
  const text = execFileSync(
    process.execPath,
    [CLI, 'run', '--goal', goal, '--worker', worker, '--approve', 'auto', '--json'],
    { cwd: repo, env, encoding: 'utf8' },
  );
  return JSON.parse(text.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
};
const first = run('fix add', `sh -c "sed -i 's/a - b/a + b/' src/math.js"`);
git('commit', '-q', '-am', 'fix add');
const second = run('add notes', 'sh -c "echo notes > NOTES.md"');
if (first.outcome !== 'completed' || second.outcome !== 'completed')
  throw new Error(`a task did not complete: ${JSON.stringify([first, second])}`);

const stateDir = String(first.stateDir);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const name of readdirSync(stateDir)) {
  if (name === 'events.log' || name === 'events.head' || name === 'artifacts')
    cpSync(join(stateDir, name), join(out, name), { recursive: true });
}
cpSync(join(home, 'receipt.key'), join(out, 'receipt.key'));
const key = loadReceiptKey(join(home, 'receipt.key'));
if (key._tag === 'Left') throw new Error(JSON.stringify(key.left));
const report = inspectLog({ ...stateDirLayout(out), key: key.right, kernel: kernelReplay(), replay: true });
if (!report.ok) throw new Error(`the generated log does not replay: ${JSON.stringify(report.failure)}`);
const expected = {
  frames: report.chain.frames,
  lastHash: report.chain.lastHash,
  tasks: report.tasks.length,
  kernelEvents: report.replay?.events,
  finalStateHash: report.replay?.finalStateHash,
};
writeFileSync(join(out, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`);
rmSync(root, { recursive: true, force: true });
console.log(`wrote ${out}: ${JSON.stringify(expected)}`);
