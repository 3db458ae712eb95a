/**
 * Start-up loads nothing it does not need (issue #17): `--help`, `--version`,
 * `help <command>`, every `<command> --help` and a mistyped name are answered
 * by the built CLI from its own entry files and the terminal guard
 * (@crustcore/safe-text) alone — no command module, no verifier, runtime or
 * pack. Every module the process resolves is recorded by a module hook
 * (registered with --import), so a command that pulled a package at start-up
 * would show in the list. Controls: the same hook sees the verifier load when
 * `gc` runs and the daemon client load when `status` runs.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI, makeRepo, mapBounded, REPO_ROOT, type Sandbox } from './cli-harness.js';

let box: Sandbox;
beforeAll(() => {
  buildCli();
  box = makeRepo({ 'a.txt': 'a\n' });
}, 60_000);

const HOOKS = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith('file:')) appendFileSync(process.env.LOAD_TRACE, resolved.url + '\\n');
  return resolved;
}`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

interface Traced {
  readonly status: number | null;
  readonly stdout: string;
  /** Every file the process loaded, relative to the repository, with chunk hashes cut. */
  readonly loaded: readonly string[];
}

async function traced(args: readonly string[]): Promise<Traced> {
  const trace = join(mkdtempSync(join(box.root, 'trace-')), 'loads.txt');
  writeFileSync(trace, '');
  const argv = ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, CLI, ...args];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, CRUSTCORE_HOME: box.home, NO_COLOR: '1' };
  const { status, stdout } = await new Promise<{ status: number | null; stdout: string }>((done) => {
    const child = execFile(
      process.execPath,
      argv,
      { cwd: box.repo, encoding: 'utf8', env: { ...env, LOAD_TRACE: trace }, timeout: 120_000 },
      (_error, out) => done({ status: child.exitCode, stdout: out }),
    );
    child.stdin?.end();
  });
  const loaded = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((url) => relative(REPO_ROOT, new URL(url).pathname).replace(/-[A-Z0-9]{8}\.js$/, '.js'));
  return { status, stdout, loaded: [...new Set(loaded)] };
}

/** What start-up may load: the CLI's entry and chunks, and the terminal guard. */
const allowedAtStartUp = (path: string): boolean =>
  path.startsWith('packages/crustcore/dist/') || path === 'packages/safe-text/dist/index.js';

const NO_COMMAND_MODULE =
  /\/chunks\/(demo|run|inspect|export|diff|recover|gc|doctor|chat|secret|models|daemon|status|tasks|control|mcp)\.js$/;

describe('start-up loads only the entry and the terminal guard', () => {
  it('--help, --version, -v, help <command> and a mistyped name', async () => {
    const cases = [['--help'], ['--version'], ['-v'], ['help', 'run'], ['rnu'], []];
    for (const [args, run] of await mapBounded(cases, 2, async (args) => [args, await traced(args)] as const)) {
      expect(run.status, args.join(' ')).toBe(args[0] === 'rnu' ? 2 : 0);
      expect(
        run.loaded.filter((p) => !allowedAtStartUp(p)),
        args.join(' '),
      ).toEqual([]);
      expect(
        run.loaded.filter((p) => NO_COMMAND_MODULE.test(p)),
        args.join(' '),
      ).toEqual([]);
      expect(run.loaded).toContain('packages/safe-text/dist/index.js');
    }
  });

  it('every command answering --help loads neither its module nor a package', async () => {
    const names = [...(await traced(['--help'])).stdout.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1] as string);
    expect(names.length).toBeGreaterThan(10);
    const runs = await mapBounded(names, 2, async (name) => [name, await traced([name, '--help'])] as const);
    for (const [name, run] of runs) {
      expect(run.status, name).toBe(0);
      expect(run.stdout, name).toContain(`Usage: crustcore ${name}`);
      expect(
        run.loaded.filter((p) => !allowedAtStartUp(p) || NO_COMMAND_MODULE.test(p)),
        name,
      ).toEqual([]);
    }
  }, 600_000);

  it('control: the hook sees what a running command loads (gc loads the verifier, status the daemon client)', async () => {
    const gc = await traced(['gc', '--json']);
    expect(gc.status).toBe(0);
    expect(gc.loaded).toContain('packages/verify/dist/index.js');
    expect(gc.loaded.some((p) => p.endsWith('/chunks/gc.js'))).toBe(true);
    const status = await traced(['status', '--json']);
    expect(status.loaded).toContain('packages/daemon/dist/index.js');
  });
});
