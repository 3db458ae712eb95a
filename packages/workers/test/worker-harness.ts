/**
 * Test harness: a throwaway git repository and CRUSTCORE_HOME, a task
 * worktree, a scripted model server, and one run of a REAL worker CLI
 * through the adapter (sandbox + bridge + proxy). Shared by the package's
 * contract tests, the red-team tests and the benchmark.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mintSandboxExecCap, type SandboxExecCap } from '@crustcore/sandbox';
import { SecretMaterial } from '@crustcore/secrets';
import {
  type BackendResult,
  createTaskWorktree,
  openRepository,
  type Repository,
  removeTaskWorktree,
  type TaskWorktree,
  type WorkerInput,
} from '@crustcore/verify';
import {
  ClaudeBackend,
  CodexBackend,
  locateWorkerCli,
  type ModelRequestRecord,
  type WorkerBackendOptions,
  type WorkerCliName,
  type WorkerRunReport,
} from '../src/index.js';
import { type ScriptedModel, type ScriptStep, startScriptedModel } from './scripted-model.js';

/** The real key for this test process: random, key-shaped, and never allowed anywhere near a worker. */
export const TEST_API_KEY = `sk-crustcore-test-${randomBytes(24).toString('hex')}`;

const gitEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A Node project whose `node --test` fails: add() subtracts. */
export const FAILING_NODE_PROJECT: Readonly<Record<string, string>> = {
  'package.json': JSON.stringify({ name: 'fixture', type: 'module', scripts: { test: 'node --test' } }, null, 2),
  'src/math.js': 'export const add = (a, b) => a - b;\n',
  'test/math.test.js': [
    "import { test } from 'node:test';",
    "import assert from 'node:assert/strict';",
    "import { add } from '../src/math.js';",
    "test('adds', () => { assert.equal(add(1, 2), 3); });",
    "test('adds zero', () => { assert.equal(add(5, 0), 5); });",
    '',
  ].join('\n'),
  'README.md': '# fixture\n',
};

/** Shell command that writes the fixed math.js (no quoting traps: base64 of the file). */
export const FIX_MATH_COMMAND = `echo ${Buffer.from('export const add = (a, b) => a + b;\n').toString('base64')} | base64 -d > src/math.js`;

export interface Workspace {
  readonly base: string;
  /** CRUSTCORE_HOME for this test. */
  readonly home: string;
  readonly repoDir: string;
  readonly repo: Repository;
  readonly worktree: TaskWorktree;
  readonly cleanup: () => Promise<void>;
}

export async function makeWorkspace(taskId: string, files: Readonly<Record<string, string>>): Promise<Workspace> {
  const base = mkdtempSync(join(tmpdir(), 'cc-workers-'));
  const repoDir = join(base, 'repo');
  const home = join(base, 'home');
  mkdirSync(repoDir);
  mkdirSync(home);
  for (const [path, text] of Object.entries(files)) {
    const full = join(repoDir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  git(repoDir, 'init', '-q', '-b', 'main');
  git(repoDir, 'add', '-A');
  git(repoDir, 'commit', '-q', '-m', 'base');
  const repo = await openRepository(repoDir);
  if (repo._tag === 'Left') throw new Error(repo.left.message);
  const worktree = await createTaskWorktree({ repo: repo.right, taskId, home });
  if (worktree._tag === 'Left') throw new Error(worktree.left.message);
  return {
    base,
    home,
    repoDir,
    repo: repo.right,
    worktree: worktree.right,
    cleanup: async () => {
      await removeTaskWorktree(worktree.right);
      rmSync(base, { recursive: true, force: true });
    },
  };
}

export function capability(profile: 'verify' | 'worker'): SandboxExecCap {
  const minted = mintSandboxExecCap(profile);
  if (minted._tag === 'Left') throw new Error(minted.left.message);
  return minted.right;
}

export function workerInput(taskId: string, extra: Partial<WorkerInput> = {}): WorkerInput {
  return {
    taskId,
    goal: 'make the tests pass',
    attempt: 1,
    previousDiagnosis: null,
    allowedRoots: [],
    forbiddenPaths: [],
    maxSeconds: 120,
    maxOutputBytes: 4 * 1024 * 1024,
    ...extra,
  };
}

/** What a home directory held when the run ended (path → bytes), read before it is removed. */
export type FileImage = ReadonlyMap<string, Buffer>;

export function readTree(root: string, limitFiles = 5000): FileImage {
  const files = new Map<string, Buffer>();
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (files.size >= limitFiles) return;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size <= 64 * 1024 * 1024) files.set(path, readFileSync(path));
    }
  };
  walk(root);
  return files;
}

export interface WorkerRun {
  readonly result: BackendResult;
  readonly report: WorkerRunReport | null;
  readonly home: FileImage;
  readonly model: ScriptedModel;
  readonly proxyRecords: readonly ModelRequestRecord[];
}

/** Fails loudly (never skips) when a CLI is not installed here. */
export function requireCli(name: WorkerCliName): void {
  const located = locateWorkerCli(name);
  if (located._tag === 'Left') {
    throw new Error(`the real ${name} CLI is required for this test: ${located.left.message} (${located.left.fix})`);
  }
}

/** Runs the real CLI `name` on `workspace` against a scripted model playing `steps`. */
export async function runScriptedWorker(
  name: WorkerCliName,
  workspace: Workspace,
  steps: readonly ScriptStep[],
  input: WorkerInput,
  extra: Partial<WorkerBackendOptions> = {},
): Promise<WorkerRun> {
  requireCli(name);
  const model = await startScriptedModel(name === 'codex' ? 'openai-responses' : 'anthropic-messages', steps);
  const key = SecretMaterial.fromText(TEST_API_KEY);
  if (key._tag === 'Left') throw new Error('test key rejected');
  let report: WorkerRunReport | null = null;
  let home: FileImage = new Map();
  const proxyRecords: ModelRequestRecord[] = [];
  const options: WorkerBackendOptions = {
    workerCap: capability('worker'),
    apiKey: key.right,
    upstream: model.origin,
    onModelRequest: (record) => proxyRecords.push(record),
    onRunReport: (finished) => {
      report = finished;
      home = readTree(finished.homeDirectory);
    },
    ...extra,
  };
  const backend = name === 'codex' ? new CodexBackend(options) : new ClaudeBackend(options);
  try {
    const result = await backend.run(input, { worktree: workspace.worktree, home: workspace.home });
    return { result, report, home, model, proxyRecords };
  } catch (error) {
    await model.close();
    throw error;
  }
}

/** Where `needle` occurs in a file image (paths), for "the key is nowhere" assertions. */
export function filesContaining(image: FileImage, needle: string): string[] {
  return [...image].filter(([, bytes]) => bytes.includes(needle)).map(([path]) => path);
}
