/**
 * Shared by the patch red-team suites: a base repository, a task worktree
 * that an attacker writes into (the files land exactly as a worker's would;
 * the worker sandbox is not what these suites attack), the real extractor
 * and verifier, and a CONTROL: the same patch bytes applied with plain
 * `git apply` to a clone, where the attack is shown to work without CrustCore.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  createTaskWorktree,
  extractPatch,
  type RiskKind,
  runBaselineVerify,
  type UnverifiedPatch,
  type VerifyOutcome,
  verifyPatch,
} from '../packages/verify/src/index.js';
import { cap, type Fixture, git, makeRepo, repoOf } from '../packages/verify/test/git-fixture.js';

export interface Planted {
  readonly fixture: Fixture;
  readonly patch: UnverifiedPatch;
}

export type Plant =
  | { readonly file: string; readonly text: string; readonly executable?: boolean }
  | { readonly link: string; readonly target: string }
  | { readonly remove: string };

const fixtures: Fixture[] = [];
export function cleanupFixtures(): void {
  for (const fixture of fixtures.splice(0)) fixture.cleanup();
}

function plant(root: string, step: Plant): void {
  if ('remove' in step) {
    rmSync(join(root, step.remove), { recursive: true, force: true });
    return;
  }
  const path = join(root, 'file' in step ? step.file : step.link);
  mkdirSync(dirname(path), { recursive: true });
  rmSync(path, { recursive: true, force: true });
  if ('link' in step) {
    symlinkSync(step.target, path);
    return;
  }
  writeFileSync(path, step.text);
  if (step.executable === true) chmodSync(path, 0o755);
}

/** A base repository with `base` (plus `baseSteps`), a task worktree with `steps` applied, and its extracted patch. */
export async function plantPatch(
  base: Readonly<Record<string, string>>,
  steps: readonly Plant[],
  options: { readonly baseSteps?: readonly Plant[]; readonly repoConfig?: Readonly<Record<string, string>> } = {},
): Promise<Planted> {
  const fixture = makeRepo(base);
  fixtures.push(fixture);
  if (options.baseSteps !== undefined && options.baseSteps.length > 0) {
    for (const step of options.baseSteps) plant(fixture.repoDir, step);
    git(fixture.repoDir, 'add', '-A');
    git(fixture.repoDir, 'commit', '-q', '-m', 'base extras');
  }
  for (const [key, value] of Object.entries(options.repoConfig ?? {})) git(fixture.repoDir, 'config', key, value);
  const repo = await repoOf(fixture);
  const created = await createTaskWorktree({ repo, taskId: 't_attack', home: fixture.home });
  if (created._tag === 'Left') throw new Error(created.left.message);
  for (const step of steps) plant(created.right.path, step);
  const extracted = await extractPatch(created.right, { home: fixture.home });
  if (extracted._tag === 'Left') throw new Error(`extract failed: ${JSON.stringify(extracted.left)}`);
  if (extracted.right === null) throw new Error('the attack changed nothing');
  return { fixture, patch: extracted.right };
}

/** Runs the real verifier (fresh worktree, sandboxed verify profile), with a baseline on the base commit. */
export async function verifyPlanted(
  planted: Planted,
  argv: readonly [string, ...string[]],
  approvedArgvHashes: ReadonlySet<string> = new Set(),
): Promise<VerifyOutcome> {
  const repo = await repoOf(planted.fixture);
  const verifyCap = cap('verify');
  const baseline = await runBaselineVerify(verifyCap, {
    repo,
    taskId: 't_baseline',
    baseCommit: planted.patch.baseCommit,
    argv,
    approvedArgvHashes,
    home: planted.fixture.home,
  });
  const outcome = await verifyPatch(verifyCap, {
    repo,
    taskId: 't_attack_verify',
    patch: planted.patch,
    argv,
    nowMs: 1,
    baseline: baseline._tag === 'Right' ? baseline.right : null,
    approvedArgvHashes,
    home: planted.fixture.home,
  });
  if (outcome._tag === 'Left') throw new Error(`verify could not run: ${JSON.stringify(outcome.left)}`);
  return outcome.right;
}

export const riskKinds = (risks: readonly { readonly kind: RiskKind }[]): RiskKind[] => risks.map((r) => r.kind);

/** CONTROL: the patch bytes applied by plain git to a fresh clone of the base; returns the clone. */
export function applyWithoutCrustCore(planted: Planted, config: Readonly<Record<string, string>> = {}): string {
  const dir = mkdtempSync(join(planted.fixture.base, 'control-'));
  git(planted.fixture.base, 'clone', '-q', planted.fixture.repoDir, dir);
  const file = join(dir, '..', `${dir.slice(dir.lastIndexOf('/') + 1)}.diff`);
  writeFileSync(file, planted.patch.bytes);
  git(dir, 'apply', '--binary', file);
  for (const [key, value] of Object.entries(config)) git(dir, 'config', key, value);
  return dir;
}

/** Runs a host program in the control clone with a minimal environment; returns its exit code and output. */
export function runHost(
  cwd: string,
  argv: readonly [string, ...string[]],
  env: Readonly<Record<string, string>> = {},
): { status: number | null; output: string } {
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
      ...env,
    },
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

/** The host's Python with pytest (the sandbox's /usr/bin/python3 has none), for controls. */
export function hostPython(): string {
  return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

export { git };
