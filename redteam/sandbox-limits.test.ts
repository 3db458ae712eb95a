/**
 * Attacks on resources and lifetime: a fork bomb, 256 MiB of output, a
 * process that sleeps forever with a `setsid` grandchild, a runaway CPU loop
 * and an oversized file. Each must end within its bound and leave nothing
 * running; the machine must survive (the fork bomb gets a small pids limit).
 */
import { createHash } from 'node:crypto';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  runTrustedHostCommand,
  type SandboxBackendKind,
  type SandboxCapOptions,
  type SandboxedResult,
  type SandboxProfileName,
  type SandboxRunSpec,
} from '@crustcore/sandbox';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxedIn } from './sandbox-harness.js';

const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-limits-'));
afterAll(() => rmSync(worktree, { recursive: true, force: true }));

async function attack(
  profile: SandboxProfileName,
  spec: Omit<SandboxRunSpec, 'worktreeRoot' | 'cwd'>,
  options: SandboxCapOptions = {},
): Promise<SandboxedResult> {
  const result = await sandboxedIn(worktree, profile, spec, options);
  expect(result.backend).toBe(options.backend ?? 'bubblewrap');
  return result;
}

/** Host pids whose command line contains `marker` (a zombie counts as gone). */
function pidsWithMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker) && isRunning(Number(entry)))
        found.push(Number(entry));
    } catch {
      // Exited while scanning.
    }
  }
  return found;
}

/** Host pids of a live `sleep <marker>` (not the launcher or shell whose arguments mention it). */
function sleepersWithMarker(marker: string): number[] {
  return pidsWithMarker(marker).filter((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv[0]?.endsWith('sleep') === true && argv[1] === marker;
    } catch {
      return false;
    }
  });
}

function isRunning(pid: number): boolean {
  try {
    const state = /State:\s+(\S)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return state !== undefined && state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function sessionOf(pid: number): number | null {
  try {
    // Fields after the parenthesized command: state ppid pgrp session …
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[3]);
  } catch {
    return null;
  }
}

/**
 * Waits until no live process carries `marker`. SIGKILL is asynchronous, so a
 * run's result can arrive a moment before its killed processes vanish; the
 * handshake is the process table itself, and only the test timeout bounds it.
 */
async function waitForNone(marker: string): Promise<number[]> {
  let left = pidsWithMarker(marker);
  while (left.length > 0) {
    await pause(50);
    left = pidsWithMarker(marker);
  }
  return left;
}

const pause = (ms: number) => new Promise((resume) => setTimeout(resume, ms));

describe('redteam: sandbox limits', () => {
  it('contains a fork bomb with a small pids limit and leaves nothing behind', async () => {
    const marker = `crustcore-bomb-${process.pid}-${Date.now()}`;
    const result = await attack(
      'hostile',
      // By construction the run lasts until its timeout: the sleep starts before the bomb and holds a
      // slot, and the bomb runs in a subshell, so the shell that waits never forks once slots run out
      // (dash exits when a fork fails: a sleep after the bomb, or the bomb's first pipeline, could).
      { argv: ['sh', '-c', `# ${marker}\nsleep 100 & bomb() { bomb | bomb & }; (bomb) & wait`], timeoutMs: 3_000 },
      { limits: { processes: 32 } },
    );
    expect(result.timedOut).toBe(true);
    if (result.processLimit === 'pids-cgroup') expect(result.forkRefusals).toBeGreaterThan(0);
    else expect(result.processLimit).toBe('rlimit-nproc');
    expect(await waitForNone(marker)).toEqual([]);
    // The machine still starts processes.
    const after = await runTrustedHostCommand({
      argv: ['/bin/true'],
      cwd: '/',
      env: {},
      timeoutMs: 5_000,
      maxOutputBytes: 1024,
    });
    expect(after.exitCode).toBe(0);
  });

  it('bounds 256 MiB of output without deadlock, keeping head and tail and hashing every byte', async () => {
    // 4,096 times the capture budget: enough to prove the capture is bounded and every byte is
    // hashed. The wall-clock limit sits far above what pushing it takes however loaded the
    // machine is (the claim is "no deadlock, bounded memory", not a speed).
    const mib = 1024 * 1024;
    const total = 256 * mib;
    const result = await attack('build', {
      argv: ['sh', '-c', 'printf HEAD; head -c 256M /dev/zero; printf TAIL'],
      timeoutMs: 1_200_000,
      maxOutputBytes: 65_536,
    });
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.totalBytes).toBe(total + 8);
    expect(result.stdout.truncated).toBe(true);
    expect(result.stdout.text.startsWith('HEAD\u0000')).toBe(true);
    expect(result.stdout.text.endsWith('\u0000TAIL')).toBe(true);
    expect(result.stdout.text).toContain(`[crustcore: ${total + 8 - 65_536} bytes dropped]`);
    expect(result.stdout.text.length).toBeLessThan(65_536 + 100);
    const hash = createHash('sha256').update('HEAD');
    const zeros = Buffer.alloc(mib);
    for (let i = 0; i < 256; i++) hash.update(zeros);
    expect(result.stdout.sha256).toBe(hash.update('TAIL').digest('hex'));
  }, 1_300_000);

  it('as an unprivileged user, RLIMIT_NPROC contains a fork bomb (no cgroup needed)', async () => {
    const unprivileged = mkdtempSync(join(tmpdir(), 'crustcore-redteam-nobody-'));
    chownSync(unprivileged, 65534, 65534);
    const marker = `crustcore-nobody-bomb-${process.pid}-${Date.now()}`;
    const repoRoot = resolve(import.meta.dirname, '..');
    const driver = `
      const { mintSandboxExecCap, runSandboxed } = await import(${JSON.stringify(join(repoRoot, 'packages/sandbox/src/index.ts'))});
      const cap = mintSandboxExecCap('hostile', { limits: { processes: 16 } });
      const r = await runSandboxed(cap.right, { argv: ['sh', '-c', ${JSON.stringify(`# ${marker}
sleep 100 & bomb() { bomb | bomb & }; (bomb) & wait`)}], worktreeRoot: ${JSON.stringify(unprivileged)}, cwd: ${JSON.stringify(unprivileged)}, timeoutMs: 3000 });
      console.log('RESULT ' + JSON.stringify(r._tag === 'Right' ? { processLimit: r.right.processLimit, timedOut: r.right.timedOut, backend: r.right.backend, stderr: r.right.stderr.text.slice(0, 2000) } : r.left));
    `;
    try {
      const run = await runTrustedHostCommand({
        argv: [
          '/usr/bin/setpriv',
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          process.execPath,
          '--conditions=source',
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          driver,
        ],
        cwd: repoRoot,
        env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent' },
        timeoutMs: 40_000,
        maxOutputBytes: 1 << 20,
      });
      const line = run.stdout.text.split('\n').find((text) => text.startsWith('RESULT ')) ?? '';
      expect(line, run.stderr.text).not.toBe('');
      const result = JSON.parse(line.slice('RESULT '.length)) as {
        processLimit: string;
        timedOut: boolean;
        backend: string;
        stderr: string;
      };
      // Lasts until the timeout by construction, as in the test above (sleep first, bomb in a subshell).
      expect(result).toMatchObject({ processLimit: 'rlimit-nproc', timedOut: true, backend: 'bubblewrap' });
      expect(result.stderr).toContain('Cannot fork');
      expect(await waitForNone(marker)).toEqual([]);
    } finally {
      rmSync(unprivileged, { recursive: true, force: true });
    }
  });

  for (const backend of ['bubblewrap', 'process-jail'] as const satisfies readonly SandboxBackendKind[]) {
    it(`a timeout ends a run that sleeps forever, and nothing of it is left (${backend})`, async () => {
      const marker = `31536000.${process.pid}${Date.now() % 100_000}0`;
      const result = await attack('build', { argv: ['sleep', marker], timeoutMs: 1_000 }, { backend });
      expect(result.timedOut).toBe(true);
      expect(result.exitCode === 0).toBe(false);
      expect(await waitForNone(marker)).toEqual([]);
    });

    it(`stopping a run kills its setsid grandchild too (${backend})`, async () => {
      const tag = `${process.pid}${Date.now() % 100_000}`;
      const childMarker = `31536000.${tag}1`;
      const grandchildMarker = `31536000.${tag}2`;
      const stopRun = new AbortController();
      const pending = attack(
        'build',
        {
          argv: ['sh', '-c', `setsid sleep ${grandchildMarker} & exec sleep ${childMarker}`],
          timeoutMs: 600_000,
          signal: stopRun.signal,
        },
        { backend },
      );
      // Handshake: both processes are live on the host, in different sessions
      // (setsid really escaped the child's session), before the run is stopped.
      let sessions: { child: number | null; grandchild: number | null } = { child: null, grandchild: null };
      // `setsid` starts in the child's session and moves out, so the loop waits
      // for the move; if it never happened the test times out rather than pass.
      while (sessions.child === null || sessions.grandchild === null || sessions.child === sessions.grandchild) {
        await pause(50);
        const child = sleepersWithMarker(childMarker)[0];
        const grandchild = sleepersWithMarker(grandchildMarker)[0];
        sessions = {
          child: child === undefined ? null : sessionOf(child),
          grandchild: grandchild === undefined ? null : sessionOf(grandchild),
        };
      }
      stopRun.abort();
      const result = await pending;
      expect(result.cancelled).toBe(true);
      expect(await waitForNone(childMarker)).toEqual([]);
      expect(await waitForNone(grandchildMarker)).toEqual([]);
    });
  }

  it('stops a CPU-bound loop at the CPU limit', async () => {
    // The wall-clock timeout sits far above the 1 s CPU limit, so only the
    // CPU limit can end the loop however loaded the machine is.
    const result = await attack(
      'hostile',
      { argv: ['sh', '-c', 'while :; do :; done'], timeoutMs: 240_000 },
      { limits: { cpuSeconds: 1 } },
    );
    expect(result.timedOut).toBe(false);
    expect(result.exitCode === 0).toBe(false);
    // SIGXCPU (24) killed the shell; bubblewrap reports it as 128 + 24.
    expect(result.exitCode === 152 || result.signal === 'SIGXCPU').toBe(true);
  }, 300_000);

  it('cannot write a file larger than the file size limit', async () => {
    const result = await attack(
      'hostile',
      { argv: ['sh', '-c', 'head -c 4M /dev/zero > big.bin; echo "rc=$?"; wc -c < big.bin'], timeoutMs: 10_000 },
      { limits: { fileSizeBytes: 1024 * 1024 } },
    );
    expect(result.stdout.text).not.toContain('rc=0');
    expect(result.stdout.text.trim().endsWith('1048576')).toBe(true);
  });
});
