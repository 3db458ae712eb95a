/**
 * TIOCSTI: a sandboxed process that holds the caller's terminal as stdin
 * tries to push keystrokes into it. A host python3 wrapper gives the
 * sandbox a real pty that is the wrapper's controlling terminal, then reads
 * the pty's input queue to see whether anything was injected. A control run
 * without `--new-session` proves the attack works, so the real run's failure
 * means something.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bubblewrapArgv, mintSandboxExecCap, runSandboxed, runTrustedHostCommand } from '@crustcore/sandbox';
import { afterAll, describe, expect, it } from 'vitest';

const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-tty-'));
afterAll(() => rmSync(worktree, { recursive: true, force: true }));

/** Runs argv with a fresh pty as stdin/stdout/stderr and controlling terminal; reports output and injected bytes. */
const PTY_WRAPPER = `
import os, sys, fcntl, termios, tty, json, select
master, slave = os.openpty()
tty.setraw(slave)
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.execv(sys.argv[1], sys.argv[1:])
_, status = os.waitpid(pid, 0)
out = b''
while select.select([master], [], [], 0.3)[0]:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.set_blocking(slave, False)
try:
    injected = os.read(slave, 4096)
except BlockingIOError:
    injected = b''
print(json.dumps({"status": status, "output": out.decode(errors="replace"), "injected": injected.decode(errors="replace")}))
`;

/** Inside the sandbox: try TIOCSTI on stdin, stdout, stderr and /dev/tty. */
const PAYLOAD = `
import fcntl, os, termios
results = []
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"X")
        results.append("fd%d:INJECTED" % fd)
    except OSError as e:
        results.append("fd%d:errno%d" % (fd, e.errno))
try:
    t = os.open("/dev/tty", os.O_RDWR)
    fcntl.ioctl(t, termios.TIOCSTI, b"Y")
    results.append("tty:INJECTED")
except OSError as e:
    results.append("tty:errno%d" % e.errno)
print(" ".join(results))
`;

interface PtyReport {
  readonly status: number;
  readonly output: string;
  readonly injected: string;
}

async function underPty(argv: readonly string[], cwd = worktree): Promise<PtyReport> {
  const run = await runTrustedHostCommand({
    argv: ['/usr/bin/python3', '-c', PTY_WRAPPER, ...argv],
    cwd,
    env: { PATH: '/usr/bin:/bin' },
    timeoutMs: 60_000,
    maxOutputBytes: 1 << 20,
  });
  expect(run.exitCode, run.stderr.text).toBe(0);
  return JSON.parse(run.stdout.text) as PtyReport;
}

function sandboxArgv(newSession: boolean): string[] {
  const argv = bubblewrapArgv({
    bwrapPath: '/usr/bin/bwrap',
    worktreeRoot: worktree,
    cwd: worktree,
    network: 'none',
    extraBinds: [],
    command: ['/usr/bin/python3', '-c', PAYLOAD],
  });
  return newSession ? argv : argv.filter((arg) => arg !== '--new-session');
}

describe('redteam: TIOCSTI terminal injection', () => {
  it('control: without --new-session the sandbox can inject into the terminal', async () => {
    const report = await underPty(sandboxArgv(false));
    expect(report.output).toContain('fd0:INJECTED');
    expect(report.injected).toContain('X');
  });

  it('with the real bubblewrap options the ioctl fails with EPERM and nothing is injected', async () => {
    const report = await underPty(sandboxArgv(true));
    expect(report.output).toMatch(/fd0:errno1\b/);
    expect(report.output).not.toContain('INJECTED');
    expect(report.injected).toBe('');
  });

  it('through runSandboxed, from a caller that owns a terminal, nothing is injected', async () => {
    const repoRoot = resolve(import.meta.dirname, '..');
    const script = join(repoRoot, 'packages/sandbox/src/index.ts');
    const driver = `
      const { mintSandboxExecCap, runSandboxed } = await import(${JSON.stringify(script)});
      const cap = mintSandboxExecCap('build');
      const r = await runSandboxed(cap.right, { argv: ['python3', '-c', ${JSON.stringify(PAYLOAD)}], worktreeRoot: ${JSON.stringify(worktree)}, cwd: ${JSON.stringify(worktree)}, timeoutMs: 20000 });
      process.stdout.write('RESULT ' + JSON.stringify(r._tag === 'Right' ? { out: r.right.stdout.text, backend: r.right.backend } : r.left) + '\\n');
    `;
    const report = await underPty(
      [process.execPath, '--conditions=source', '--import', 'tsx', '--input-type=module', '-e', driver],
      repoRoot,
    );
    expect(report.output).toContain('RESULT ');
    const line = report.output.split('\n').find((text) => text.startsWith('RESULT ')) ?? '';
    const result = JSON.parse(line.slice('RESULT '.length)) as { out: string; backend: string };
    expect(result.backend).toBe('bubblewrap');
    expect(result.out).toMatch(/fd0:errno\d+ fd1:errno\d+ fd2:errno\d+ tty:errno\d+/);
    expect(result.out).not.toContain('INJECTED');
    expect(report.injected).toBe('');
  });

  it("a sandboxed run cannot open the caller's controlling terminal", async () => {
    const cap = mintSandboxExecCap('build');
    if (cap._tag === 'Left') throw new Error(cap.left.message);
    const result = await runSandboxed(cap.right, {
      argv: ['python3', '-c', PAYLOAD],
      worktreeRoot: worktree,
      cwd: worktree,
      timeoutMs: 20_000,
    });
    if (result._tag === 'Left') throw new Error(result.left.message);
    expect(result.right.stdout.text).toMatch(/tty:errno6\b/); // ENXIO: no controlling terminal
    expect(result.right.stdout.text).not.toContain('INJECTED');
  });
});
