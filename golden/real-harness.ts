/**
 * Realistic projects for the real-* golden tests: built by the test itself,
 * dependencies installed from the npm registry at test time with one npm
 * cache per test file, kept between runs (so a package is downloaded once), committed
 * with their lockfile, node_modules gitignored as in any real project.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI, type CliRun, type Sandbox } from './cli-harness.js';

/** `crustcore ARGS` as cli-harness runs it, with extra environment variables. */
export function crustcoreWith(box: Sandbox, args: readonly string[], env: Readonly<Record<string, string>>): CliRun {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: box.repo,
    input: '',
    encoding: 'utf8',
    timeout: 300_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, CRUSTCORE_HOME: box.home, NO_COLOR: '1', ...env },
  });
  const last = result.stdout.trim().split('\n').pop() ?? '';
  let json: Record<string, unknown> | null = null;
  try {
    json = last.startsWith('{') ? (JSON.parse(last) as Record<string, unknown>) : null;
  } catch {
    json = null;
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, json };
}

export function writeFiles(root: string, files: Readonly<Record<string, string>>): void {
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
}

export function git(box: Sandbox, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: box.repo,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: box.root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
}

/** `npm ARGS` in `cwd` with the file's shared cache; registry as the user's own config says. */
export function npm(cwd: string, cache: string, args: readonly string[]): string {
  return execFileSync(
    'npm',
    [
      ...args,
      '--cache',
      cache,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
      '--loglevel=error',
    ],
    {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' },
    },
  );
}

export function commitAll(box: Sandbox, message: string): void {
  git(box, 'add', '-A');
  git(box, 'commit', '-q', '--allow-empty', '-m', message);
}

/** The risks recorded with the task's saved patch (`$CRUSTCORE_HOME/patches/<task>/record.json`). */
export function recordedRisks(home: string): string[] {
  const dir = join(home, 'patches');
  const kinds: string[] = [];
  for (const task of readdirSync(dir)) {
    const record = JSON.parse(readFileSync(join(dir, task, 'record.json'), 'utf8')) as { risks: { kind: string }[] };
    kinds.push(...record.risks.map((risk) => risk.kind));
  }
  return kinds;
}

/** Every file name below `dir` (for marker searches). */
export function allNames(dir: string, out: string[] = []): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    out.push(entry.name);
    if (entry.isDirectory()) allNames(join(dir, entry.name), out);
  }
  return out;
}
