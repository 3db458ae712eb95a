/**
 * Helpers for golden tests that drive the built `crustcore` CLI as a user
 * would: a fresh git repository per test, a private CRUSTCORE_HOME, and the
 * real binary (built once per test file).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { trackTempRoot } from './temp-roots.js';

export const REPO_ROOT = resolve(import.meta.dirname, '..');
/**
 * The `crustcore` bin (package.json): answers help and the version itself, hands commands to the CLI
 * bundle (dist/crustcore-cli.cjs, compiled from its V8 code cache), or to CLI_ESM with CRUSTCORE_CODE_CACHE=0.
 */
export const CLI = join(REPO_ROOT, 'packages/crustcore/dist/crustcore.cjs');
/** The ES module CLI (what the bin hands over to without its code cache). */
export const CLI_ESM = join(REPO_ROOT, 'packages/crustcore/dist/crustcore.js');

export function buildCli(): void {
  // `npm test` builds everything once before vitest starts and says so: rebuilding here then would
  // rewrite the CLI's chunk files while other test files run them (an import can read a chunk
  // mid-write). Run alone, a golden file still builds the CLI from the current sources.
  if (process.env.CRUSTCORE_CLI_BUILT === '1') return;
  execFileSync(process.execPath, ['build.mjs'], { cwd: join(REPO_ROOT, 'packages/crustcore'), stdio: 'pipe' });
}

export interface Sandbox {
  readonly root: string;
  readonly repo: string;
  readonly home: string;
}

export function makeRepo(files: Readonly<Record<string, string>>): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-golden-')));
  trackTempRoot(root);
  const repo = join(root, 'repo');
  const home = join(root, 'home');
  for (const [path, text] of Object.entries(files)) {
    const full = join(repo, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: repo,
      stdio: 'pipe',
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: root,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  return { root, repo, home };
}

export interface CliRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly json: Record<string, unknown> | null;
}

/** The environment a golden test runs the CLI in: its box's HOME and CRUSTCORE_HOME, no colours, plus `extra`. */
export function cliEnv(box: Sandbox, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: box.root,
    CRUSTCORE_HOME: box.home,
    NO_COLOR: '1',
    ...extra,
  };
}

export function crustcore(box: Sandbox, args: readonly string[], options: { readonly input?: string } = {}): CliRun {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: box.repo,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 120_000,
    env: cliEnv(box),
  });
  let json: Record<string, unknown> | null = null;
  const last = result.stdout.trim().split('\n').pop() ?? '';
  if (last.startsWith('{')) {
    try {
      json = JSON.parse(last) as Record<string, unknown>;
    } catch {
      json = null;
    }
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, json };
}

/** The Node sample: add() is wrong, one test fails. */
export const NODE_REPO: Readonly<Record<string, string>> = {
  'package.json': '{ "name": "golden", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n',
  'src/math.js': 'export function add(a, b) {\n  return a - b;\n}\n',
  'test/math.test.js':
    "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { add } from '../src/math.js';\n\ntest('adds', () => {\n  assert.equal(add(2, 3), 5);\n});\n\ntest('adds negatives', () => {\n  assert.equal(add(-2, -3), -5);\n});\n",
  'README.md': '# golden\n',
};

/**
 * `fn` over every item with at most `limit` running at once, results in the items' order. For
 * tests that spawn the CLI many times: two at a time keeps both cores busy without the spawns
 * starving each other (each still has its own timeout; nothing here depends on timing).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
