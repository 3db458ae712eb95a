/**
 * `crustcore index`: the summary a person reads, the capsule a machine reads
 * (--json, decoded with the pack's own codec), the cache under the project
 * directory (not in the repository), and exit code 2 with a next step on bad
 * input.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { RepoCapsuleCodec } from '@crustcore/index';
import { afterEach, describe, expect, it } from 'vitest';
import { type Io, makeStyle } from '../src/cli/output.js';
import { indexCommand } from '../src/commands/index-command.js';

const gitEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, env: gitEnv });

let bases: string[] = [];
afterEach(() => {
  for (const base of bases) rmSync(base, { recursive: true, force: true });
  bases = [];
});

function scene(): { base: string; repo: string; home: string } {
  const base = mkdtempSync(join(tmpdir(), 'cc-index-cli-'));
  bases.push(base);
  const repo = join(base, 'repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(join(repo, 'src/app.ts'), 'export function main(): void {}\n');
  writeFileSync(join(repo, 'package.json'), JSON.stringify({ scripts: { test: 'node --test' } }));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  return { base, repo, home: join(base, 'home') };
}

function io(cwd: string, home: string): { io: Io; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += String(chunk)));
  stderr.on('data', (chunk) => (err += String(chunk)));
  const env = { CRUSTCORE_HOME: home, NO_COLOR: '1' };
  return {
    io: {
      stdout,
      stderr,
      stdin: new PassThrough(),
      env,
      cwd,
      out: makeStyle(stdout, env),
      err: makeStyle(stderr, env),
    },
    out: () => out,
    err: () => err,
  };
}

describe('crustcore index', () => {
  it('prints a short summary, then the capsule with --json; the cache is in the project directory', async () => {
    const { repo, home } = scene();
    const human = io(repo, home);
    expect(await indexCommand.run([], human.io)).toBe(0);
    expect(human.out()).toMatch(/^Indexed 2 files in .*: 2 parsed, 0 from the cache\./);
    expect(human.out()).toContain('test: npm test');
    expect(human.out().split('\n').length).toBeLessThanOrEqual(7);
    const projects = readdirSync(join(home, 'projects'));
    expect(projects).toHaveLength(1);
    expect(existsSync(join(home, 'projects', projects[0]!, 'index', 'capsule.json'))).toBe(true);
    expect(readdirSync(repo).sort()).toEqual(['.git', 'package.json', 'src']);

    const machine = io(repo, home);
    expect(await indexCommand.run(['--json', '--dir', '.'], machine.io)).toBe(0);
    const printed = JSON.parse(machine.out()) as { capsule: unknown; stats: { parsed: string[] } };
    expect(RepoCapsuleCodec.is(printed.capsule)).toBe(true);
    expect(printed.stats.parsed).toEqual([]);
  });

  it('not a repository, or a missing directory: exit 2 with what to do next', async () => {
    const { base, home } = scene();
    const plain = join(base, 'plain');
    mkdirSync(plain);
    for (const dir of [plain, join(base, 'missing')]) {
      const run = io(base, home);
      expect(await indexCommand.run(['--dir', dir], run.io)).toBe(2);
      expect(run.err()).toMatch(/^error: .*\n {2}next: /);
      expect(run.out()).toBe('');
    }
  });

  it('refuses a CRUSTCORE_HOME inside the repository (exit 2), writing nothing there', async () => {
    const { repo } = scene();
    const run = io(repo, join(repo, '.crustcore-home'));
    expect(await indexCommand.run([], run.io)).toBe(2);
    expect(run.err()).toContain('CRUSTCORE_HOME');
    expect(existsSync(join(repo, '.crustcore-home'))).toBe(false);
  });
});
