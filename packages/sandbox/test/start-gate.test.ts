/**
 * A sandboxed run set up ahead of its go (SandboxRunSpec.startGate): bubblewrap
 * makes its namespaces and mounts, then blocks on descriptor 4 until the gate
 * opens. What must hold: nothing of the program runs before the go; a withdrawn
 * run never runs it; the go re-checks the worktree (a symlink planted meanwhile
 * is refused); the program inherits no gate descriptor. Each test waits for the
 * sandbox to be blocked at its gate (read of descriptor 4, seen in /proc) before
 * it acts, so the order is made by a handshake, not by time.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mintSandboxExecCap, runSandboxed, type SandboxExecCap } from '../src/index.js';
import { makeWorktree, type TestWorktree } from './worktree.js';

const worktrees: TestWorktree[] = [];
afterEach(() => {
  for (const worktree of worktrees.splice(0)) worktree.remove();
});

function worktree(files: Record<string, string> = {}): TestWorktree {
  const made = makeWorktree(files);
  worktrees.push(made);
  return made;
}

function workerCap(backend?: 'process-jail'): SandboxExecCap {
  const minted = mintSandboxExecCap('worker', backend === undefined ? {} : { backend });
  if (minted._tag === 'Left') throw new Error(minted.left.message);
  return minted.right;
}

/** A gate the test opens or shuts by hand. */
function handGate(): { open: Promise<boolean>; decide: (go: boolean) => void } {
  let decide: (go: boolean) => void = () => {};
  const open = new Promise<boolean>((resolve) => {
    decide = resolve;
  });
  return { open, decide };
}

/** Pids of processes whose command line mentions `marker` and that are blocked reading descriptor 4. */
function blockedAtGate(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      // The syscall file: number, then arguments; read is 0 on x86-64 and 63 on arm64.
      const syscall = readFileSync(`/proc/${entry}/syscall`, 'latin1').split(' ');
      if (cmdline.includes(marker) && (syscall[0] === '0' || syscall[0] === '63') && syscall[1] === '0x4')
        found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Waits (a handshake: polled, not timed) until a sandbox for `marker` is blocked at its gate. */
async function untilBlocked(marker: string): Promise<void> {
  for (let i = 0; i < 6_000; i++) {
    if (blockedAtGate(marker).length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no sandbox for ${marker} reached its gate`);
}

describe('a sandboxed run held at its start gate', () => {
  it('runs only at the go, and sees what was written to the worktree while it waited', async () => {
    const wt = worktree();
    const gate = handGate();
    const running = runSandboxed(workerCap(), {
      argv: ['sh', '-c', 'cat late.txt; echo ran > ran.txt'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      timeoutMs: 60_000,
      startGate: gate.open,
    });
    await untilBlocked(wt.root);
    // Set up and waiting: nothing of the program has run.
    expect(existsSync(join(wt.root, 'ran.txt'))).toBe(false);
    writeFileSync(join(wt.root, 'late.txt'), 'written after the sandbox was made\n');
    gate.decide(true);
    const result = await running;
    if (result._tag === 'Left') throw new Error(result.left.message);
    expect(result.right.exitCode).toBe(0);
    expect(result.right.stdout.text).toBe('written after the sandbox was made\n');
    expect(readFileSync(join(wt.root, 'ran.txt'), 'utf8')).toBe('ran\n');
  });

  it('never runs a withdrawn program; CONTROL: the same run with a go does', async () => {
    for (const go of [false, true]) {
      const wt = worktree();
      const gate = handGate();
      const running = runSandboxed(workerCap(), {
        argv: ['sh', '-c', 'echo ran > ran.txt'],
        worktreeRoot: wt.root,
        cwd: wt.root,
        timeoutMs: 60_000,
        startGate: gate.open,
      });
      await untilBlocked(wt.root);
      gate.decide(go);
      const result = await running;
      if (result._tag === 'Left') throw new Error(result.left.message);
      // Every process of the run is gone by now (the runner waited for the exit and the streams).
      expect(blockedAtGate(wt.root)).toEqual([]);
      expect(existsSync(join(wt.root, 'ran.txt'))).toBe(go);
      expect(result.right.exitCode === 0).toBe(go);
    }
  });

  it('refuses at the go a working directory that became a symlink; CONTROL: left alone it runs', async () => {
    const outside = worktree({ 'secret.txt': 'outside the worktree\n' });
    for (const plant of [true, false]) {
      const wt = worktree({ 'sub/file.txt': 'inside\n' });
      const gate = handGate();
      const running = runSandboxed(workerCap(), {
        argv: ['sh', '-c', 'cat *.txt'],
        worktreeRoot: wt.root,
        cwd: join(wt.root, 'sub'),
        timeoutMs: 60_000,
        startGate: gate.open,
      });
      await untilBlocked(wt.root);
      if (plant) {
        renameSync(join(wt.root, 'sub'), join(wt.root, 'moved'));
        symlinkSync(outside.root, join(wt.root, 'sub'));
      }
      gate.decide(true);
      const result = await running;
      if (plant) {
        expect(result._tag).toBe('Left');
        if (result._tag === 'Left') expect(result.left).toMatchObject({ reason: 'BadWorktree' });
      } else {
        expect(result._tag === 'Right' && result.right.stdout.text).toBe('inside\n');
      }
    }
  });

  it('hands the program no descriptor beyond its stdio', async () => {
    const wt = worktree();
    const gate = handGate();
    const running = runSandboxed(workerCap(), {
      // The shell's own glob: no other program's descriptors are counted.
      argv: ['sh', '-c', 'cd /proc/self/fd && echo *'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      timeoutMs: 60_000,
      startGate: gate.open,
    });
    await untilBlocked(wt.root);
    gate.decide(true);
    const result = await running;
    if (result._tag === 'Left') throw new Error(result.left.message);
    const descriptors = result.right.stdout.text.trim().split(' ').map(Number);
    // 0-2, and at most the one the shell opened to list the directory; never the gate's 4.
    expect(descriptors.filter((fd) => fd > 2).length).toBeLessThanOrEqual(1);
    expect(descriptors).not.toContain(4);
  });

  it('stops a waiting run when its signal aborts, before the program ever ran', async () => {
    const wt = worktree();
    const gate = handGate();
    const abort = new AbortController();
    const running = runSandboxed(workerCap(), {
      argv: ['sh', '-c', 'echo ran > ran.txt'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      timeoutMs: 60_000,
      signal: abort.signal,
      startGate: gate.open,
    });
    await untilBlocked(wt.root);
    abort.abort();
    const result = await running;
    gate.decide(true);
    if (result._tag === 'Left') throw new Error(result.left.message);
    expect(result.right.cancelled).toBe(true);
    expect(existsSync(join(wt.root, 'ran.txt'))).toBe(false);
  });

  it('under the process jail (no descriptor to block on) the spawn itself waits for the go', async () => {
    for (const go of [false, true]) {
      const wt = worktree();
      mkdirSync(join(wt.root, 'out'));
      const gate = handGate();
      const running = runSandboxed(workerCap('process-jail'), {
        argv: ['sh', '-c', 'echo ran > out/ran.txt'],
        worktreeRoot: wt.root,
        cwd: wt.root,
        timeoutMs: 60_000,
        startGate: gate.open,
      });
      gate.decide(go);
      const result = await running;
      if (result._tag === 'Left') throw new Error(result.left.message);
      expect(existsSync(join(wt.root, 'out/ran.txt'))).toBe(go);
      expect(result.right.startError === null).toBe(go);
    }
  });
});
