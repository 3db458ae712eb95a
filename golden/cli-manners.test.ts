/**
 * CLI manners a newcomer notices first: a closed pipe (`crustcore … | head -1`)
 * is a quiet exit 0 for every command, `help <command>` and "did you mean"
 * work, `-v` prints the version.
 *
 * The closed pipe is made by construction, not by racing a reader: python3
 * creates a pipe, closes its read end, then starts the CLI with the write end
 * as stdout (or stderr), so the very first write fails with EPIPE.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI, crustcore, makeRepo, mapBounded, NODE_REPO, REPO_ROOT } from './cli-harness.js';

const CONFINE = join(REPO_ROOT, 'packages/confine/dist/index.js');

beforeAll(() => buildCli(), 60_000);

const CLOSED_PIPE_RUNNER = `
import os, subprocess, sys
which = sys.argv[1]
r, w = os.pipe()
os.close(r)
out = w if which == "stdout" else subprocess.DEVNULL
err = w if which == "stderr" else subprocess.DEVNULL
child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=err, stdin=subprocess.DEVNULL)
os.close(w)
try:
    print(child.wait(timeout=90))
except subprocess.TimeoutExpired:
    child.kill()
    print("hung")
`;

/**
 * The system interpreter runs the closed-pipe runner: a `python3` found first on PATH may be
 * a version-manager shim (pyenv's is a bash script costing ~0.6 s of CPU per start here),
 * and this file starts the runner over sixty times. The interpreter is test plumbing only.
 */
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

const closedPipeArgv = (which: 'stdout' | 'stderr', args: readonly string[]): string[] => [
  '-c',
  CLOSED_PIPE_RUNNER,
  which,
  process.execPath,
  CLI,
  ...args,
];
const closedPipeEnv = (home: string) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  CRUSTCORE_HOME: home,
  NO_COLOR: '1',
});

function runWithClosedPipe(which: 'stdout' | 'stderr', args: readonly string[], home: string): string {
  const result = spawnSync(PYTHON, closedPipeArgv(which, args), { encoding: 'utf8', env: closedPipeEnv(home) });
  return (result.stdout + result.stderr).trim();
}

/** The same, without blocking: several run side by side (each is its own process and pipe). */
function runWithClosedPipeAsync(which: 'stdout' | 'stderr', args: readonly string[], home: string): Promise<string> {
  return new Promise((done) => {
    execFile(PYTHON, closedPipeArgv(which, args), { encoding: 'utf8', env: closedPipeEnv(home) }, (_e, out, err) =>
      done((out + err).trim()),
    );
  });
}

const COMMANDS_WITH_OUTPUT: readonly (readonly string[])[] = [
  ['--help'],
  ['--version'],
  ['doctor'],
  ['doctor', '--json'],
  ['models'],
  ['help', 'run'],
  ['nonexistent-command'],
  ['run', '--no-such-option'],
];

describe('a closed pipe is a quiet exit 0', () => {
  it('every command answering --help', async () => {
    const box = makeRepo({ 'a.txt': 'a\n' });
    const help = crustcore(box, ['--help']);
    const names = [...help.stdout.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1] as string);
    expect(names.length).toBeGreaterThan(10);
    // Two at a time: each spawn pays Node's start-up, and the closed pipe is per process.
    const results = await mapBounded(
      names,
      2,
      async (name) => `${name}: ${await runWithClosedPipeAsync('stdout', [name, '--help'], box.home)}`,
    );
    expect(results).toEqual(names.map((name) => `${name}: 0`));
  }, 600_000);

  it.each(COMMANDS_WITH_OUTPUT)('%s … on a closed stdout and on a closed stderr', (...args) => {
    // A stream the command writes to is closed: exit 0. A stream it does not write to is closed:
    // its own exit code. Never an internal error (70), never a hang.
    const box = makeRepo({ 'a.txt': 'a\n' });
    const open = crustcore(box, args);
    for (const which of ['stdout', 'stderr'] as const) {
      const wrote = (which === 'stdout' ? open.stdout : open.stderr).length > 0;
      expect(runWithClosedPipe(which, args, box.home), which).toBe(wrote ? '0' : String(open.status));
    }
  });

  it('control: with an open pipe the same commands write their output (the pipe was really closed above)', () => {
    const box = makeRepo({ 'a.txt': 'a\n' });
    expect(crustcore(box, ['doctor']).stdout.length).toBeGreaterThan(0);
    expect(crustcore(box, ['nonexistent-command']).stderr).toContain('unknown command');
  });
});

describe('help and names', () => {
  it('help <command> is <command> --help; -v prints the version', () => {
    const box = makeRepo({ 'a.txt': 'a\n' });
    const viaHelp = crustcore(box, ['help', 'run']);
    expect(viaHelp.status).toBe(0);
    expect(viaHelp.stdout).toBe(crustcore(box, ['run', '--help']).stdout);
    expect(viaHelp.stdout).toContain('Usage: crustcore run');
    expect(crustcore(box, ['-v']).stdout).toMatch(/^crustcore \d+\.\d+\.\d+/);
  });

  it('a misspelt command suggests the right one and exits 2 (usage)', () => {
    const box = makeRepo({ 'a.txt': 'a\n' });
    for (const [typo, meant] of [
      ['rnu', 'run'],
      ['inspekt', 'inspect'],
      ['dotor', 'doctor'],
    ] as const) {
      const run = crustcore(box, [typo]);
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`Did you mean "${meant}"`);
    }
    expect(crustcore(box, ['help', 'nope']).status).toBe(2);
  });

  // The bin answers these with synchronous writes to its descriptors (cli/sync-answer.ts), so it
  // asks the descriptor itself whether it is a terminal: `script` gives the CLI a real one.
  it('the help is coloured on a terminal only, and not with NO_COLOR (script(1) gives it a pty)', () => {
    const onTerminal = (env: Record<string, string>): string =>
      spawnSync('script', ['-qec', `${process.execPath} ${CLI} --help`, '/dev/null'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm', ...env },
      }).stdout;
    const bold = '\u001b[1mcrustcore\u001b[22m';
    expect(onTerminal({})).toContain(bold);
    expect(onTerminal({ NO_COLOR: '1' })).not.toContain('\u001b[');
    // CONTROL: piped, the same help has no escape at all, and the same words.
    const piped = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }).stdout;
    expect(piped).not.toContain('\u001b[');
    expect(
      onTerminal({})
        .replaceAll(/\u001b\[\d+m/g, '')
        .replaceAll('\r\n', '\n'),
    ).toBe(piped);
  });
});

describe('the bin on a terminal', () => {
  /** Which of node's stream modules a command loaded, run under script(1) (a pty) with a probe preloaded. */
  function loadedOnTerminal(command: string): string[] {
    const dir = mkdtempSync(join(tmpdir(), 'bin-tty-'));
    const probe = join(dir, 'probe.cjs');
    const report = join(dir, 'loaded.json');
    writeFileSync(
      probe,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (tty|net|stream)$/.test(m)))));`,
    );
    const ran = spawnSync('script', ['-qec', `${process.execPath} -r ${probe} ${command}`, '/dev/null'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm' },
    });
    expect(ran.status, ran.stdout + ran.stderr).toBe(0);
    return JSON.parse(readFileSync(report, 'utf8')) as string[];
  }

  // A terminal is told by its device number (cli/sync-answer.ts): node:tty loads net and stream.
  it('answers --help and a mistyped name without loading the tty, net or stream modules (CONTROL: isatty loads them)', () => {
    expect(loadedOnTerminal(`${CLI} --help`)).toEqual([]);
    expect(loadedOnTerminal(`${CLI} rnu; true`)).toEqual([]);
    expect(loadedOnTerminal(`-e "require('node:tty').isatty(1)"`)).toEqual(
      expect.arrayContaining(['NativeModule tty', 'NativeModule net']),
    );
  });
});

describe('temp directories', () => {
  it('a run leaves nothing in the temp directory (control: the process takes TMPDIR as its temp directory)', () => {
    const box = makeRepo(NODE_REPO);
    const tmp = mkdtempSync(join(box.root, 'tmp-'));
    const run = spawnSync(
      process.execPath,
      [
        CLI,
        'run',
        '--goal',
        'fix add',
        '--worker',
        'sh -c "sed -i \'s/a - b/a + b/\' src/math.js"',
        '--approve',
        'auto',
        '--json',
      ],
      {
        cwd: box.repo,
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: box.root,
          CRUSTCORE_HOME: box.home,
          NO_COLOR: '1',
          TMPDIR: tmp,
        },
      },
    );
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
    // Control: TMPDIR is what a process started this way takes as its temp directory, and git's
    // HOME (once a directory made there, left behind by every killed run) is now /dev/null.
    const probe = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const c = await import(${JSON.stringify(CONFINE)}); const os = await import('node:os'); console.log(os.tmpdir(), c.gitEnv().HOME)`,
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmp } },
    );
    expect(probe.stdout.trim(), probe.stderr).toBe(`${tmp} /dev/null`);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
