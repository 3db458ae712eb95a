/**
 * Helpers for the attack tests on repository config (config-trust-*.test.ts):
 * the built CLI run in a fresh repository whose HOME (and so ~/.config) is
 * inside the test's own directory, and the two config files.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, type Sandbox } from '../golden/cli-harness.js';

export const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";
export const USAGE = 2;

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const envOf = (box: Sandbox): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: box.root,
  CRUSTCORE_HOME: box.home,
  NO_COLOR: '1',
});

/** The built CLI in the repository, with HOME (and so ~/.config) inside the test's own directory. */
export function cli(box: Sandbox, args: readonly string[]): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: box.repo,
    input: '',
    encoding: 'utf8',
    timeout: 120_000,
    env: envOf(box),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, as a promise: an attack and its control can run side by side. */
export function cliAsync(box: Sandbox, args: readonly string[]): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: box.repo, encoding: 'utf8', timeout: 120_000, env: envOf(box) },
      (_error, stdout, stderr) => done({ status: child.exitCode, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

export const userFile = (box: Sandbox): string => join(box.root, '.config', 'crustcore', 'config.json');

export function writeUser(box: Sandbox, text: string): void {
  mkdirSync(join(box.root, '.config', 'crustcore'), { recursive: true });
  writeFileSync(userFile(box), text);
}

export function writeProject(box: Sandbox, text: string): void {
  mkdirSync(join(box.repo, '.crustcore'), { recursive: true });
  writeFileSync(join(box.repo, '.crustcore', 'config.json'), text);
}

export interface Listed {
  readonly key: string;
  readonly value: unknown;
  readonly source: string;
  readonly ignored?: { readonly value: unknown };
}

export interface ListedRun {
  readonly run: Run;
  readonly settings: ReadonlyMap<string, Listed>;
}

function settingsOf(run: Run): ListedRun {
  if (run.status !== 0) return { run, settings: new Map() };
  const parsed = JSON.parse(run.stdout) as { settings: Listed[] };
  return { run, settings: new Map(parsed.settings.map((s) => [s.key, s])) };
}

/** `config list --json`: the value in force for each key, from the resolver `run` and `chat` use. */
export const listed = (box: Sandbox): ListedRun => settingsOf(cli(box, ['config', 'list', '--json']));
export const listedAsync = async (box: Sandbox): Promise<ListedRun> =>
  settingsOf(await cliAsync(box, ['config', 'list', '--json']));

export const runFix = (box: Sandbox, extra: readonly string[] = []): Run =>
  cli(box, ['run', '--goal', 'fix add', '--worker', `sh -c "${FIX_ADD}"`, '--json', ...extra]);

export const fixed = (box: Sandbox): boolean => readFileSync(join(box.repo, 'src/math.js'), 'utf8').includes('a + b');
