/**
 * Attacks on two start-up shortcuts.
 *
 * 1. A sandboxed run's launcher shell joins its pids and memory cgroups by writing `0` to their
 *    `tasks` files: that moves only the writing THREAD. Were the launcher ever more than one thread
 *    (or the thread that execs not the one that wrote), the process after exec — and everything it
 *    starts — would be outside both groups: no fork limit, no memory cap, not found by the kill
 *    that reads cgroup.procs. CONTROL: a two-threaded process that joins this way and execs from
 *    its other thread leaves the group entirely; the old `cgroup.procs` write moves it whole. The
 *    defence holds when every task of a real run (threads, forks, a setsid'd double-forked daemon)
 *    is in both groups, threads are counted against pids.max, and both groups are gone afterwards.
 *
 * 2. Until the spawn broker says `R`, trusted host commands are started by Node itself. A CLI's
 *    first command therefore takes the other path: it must get no inherited descriptor, exactly
 *    its environment and its own process group, exactly as one the broker starts (CONTROLS: the
 *    holder's plain exec and bare bwrap do see the planted descriptors). A broker killed with a
 *    request in flight must neither run the command twice nor swallow later runs.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { runTrustedHostCommand, type SandboxCapOptions, type SandboxRunSpec } from '@crustcore/sandbox';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SpawnBroker } from '../packages/sandbox/src/runner/spawn-broker.js';
import {
  descendantsOf,
  expectControlsLeak,
  expectNoneReached,
  HOLDER,
  holderReport,
  PROBE,
  parseProbe,
  shellQuote,
  tagged,
} from './descriptor-harness.js';
import { sandboxedIn } from './sandbox-harness.js';

const repoRoot = resolve(import.meta.dirname, '..');
const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-start-'));
const scratch = mkdtempSync(join(tmpdir(), 'crustcore-redteam-start-scratch-'));
afterAll(() => {
  rmSync(worktree, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

const PIDS = '/sys/fs/cgroup/pids';
const MEMORY = '/sys/fs/cgroup/memory';
const isRoot = process.getuid?.() === 0 && existsSync(`${PIDS}/tasks`);
const pause = (ms: number) => new Promise((resume) => setTimeout(resume, ms));

const sandboxed = (spec: Omit<SandboxRunSpec, 'worktreeRoot' | 'cwd'>, options: SandboxCapOptions = {}) =>
  sandboxedIn(worktree, 'build', spec, options);

/** The `<controller>:/path` line of a task's /proc cgroup file. */
function cgroupOf(procPath: string, controller: 'pids' | 'memory'): string {
  const text = readFileSync(`${procPath}/cgroup`, 'utf8');
  return new RegExp(`^\\d+:${controller}:(.*)$`, 'm').exec(text)?.[1] ?? '?';
}

/** This process's per-run groups (named `<our pid>-<hex>`) in a hierarchy. */
const ourGroups = (hierarchy: string): string[] =>
  readdirSync(`${hierarchy}/crustcore`).filter((name) => name.startsWith(`${process.pid}-`));

/** A process's live threads (a zombie has left its cgroups already). */
const tidsOf = (pid: number): number[] =>
  readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .filter((tid) => !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')));

/** Waits for `predicate` by re-reading state (a handshake: only the test timeout bounds it). */
async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await pause(20);
}

/** A two-threaded python that joins `tasks` from its main thread, prints both tids, and on a line execs sleep from the other. */
const HALF_JOIN = `
import os, sys, threading
go = threading.Event()
def other():
    go.wait()
    os.execv('/bin/sleep', ['sleep', '100000'])
t = threading.Thread(target=other)
t.start()
with open(sys.argv[1], 'w') as f:
    f.write('0')
print(threading.get_native_id(), t.native_id, flush=True)
sys.stdin.readline()
go.set()
t.join()
`;

describe.skipIf(!isRoot)('redteam: the launcher joins its cgroups through their tasks files', () => {
  it('CONTROL: a tasks-file join moves one thread, and an exec from another thread leaves the group; cgroup.procs moves it whole', async () => {
    const group = `${PIDS}/crustcore/${process.pid}-redteam${randomBytes(4).toString('hex')}`;
    mkdirSync(group, { recursive: true });
    const child: ChildProcessWithoutNullStreams = spawn('/usr/bin/python3', ['-c', HALF_JOIN, `${group}/tasks`]);
    const pid = child.pid ?? -1;
    try {
      const [main, other] = (await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next()).value
        .split(' ')
        .map(Number);
      const inside = group.slice(PIDS.length);
      expect(cgroupOf(`/proc/${pid}/task/${main}`, 'pids')).toBe(inside);
      expect(cgroupOf(`/proc/${pid}/task/${other}`, 'pids')).not.toBe(inside);
      // The thread that did not join execs: the process that goes on is wholly outside the group.
      child.stdin.write('\n');
      await until(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep'));
      expect(tidsOf(pid)).toEqual([pid]);
      expect(cgroupOf(`/proc/${pid}`, 'pids')).not.toBe(inside);
      expect(readFileSync(`${group}/tasks`, 'utf8')).toBe('');
      // The old join (a pid into cgroup.procs) moves the process whatever its threads.
      writeFileSync(`${group}/cgroup.procs`, String(pid));
      expect(cgroupOf(`/proc/${pid}`, 'pids')).toBe(inside);
    } finally {
      child.kill('SIGKILL');
      await new Promise((done) => child.once('close', done));
      rmdirSync(group);
    }
  });

  it('every task of a run — threads, forks, a setsid double-forked daemon — is in both groups, and both go afterwards', async () => {
    const marker = `start-attack-${process.pid}-${Date.now()}`;
    const program = `
import os, sys, threading, time
def sleeper(): time.sleep(100000)
for _ in range(3): threading.Thread(target=sleeper, daemon=True).start()
if os.fork() == 0:
    threading.Thread(target=sleeper, daemon=True).start()
    open('child-up', 'w').close()
    sleeper()
middle = os.fork()
if middle == 0:
    os.setsid()
    if os.fork() == 0:
        open('daemon-up', 'w').close()
        sleeper()
    os._exit(0)
# Every task the test counts exists, and the double fork's middle one is gone (reaped), before 'ready'.
os.waitpid(middle, 0)
while not (os.path.exists('daemon-up') and os.path.exists('child-up')): time.sleep(0.01)
open('ready', 'w').close()
sleeper()
`;
    for (const name of ['ready', 'daemon-up', 'child-up']) rmSync(join(worktree, name), { force: true });
    const stop = new AbortController();
    const pending = sandboxed({ argv: ['python3', '-c', program, marker], timeoutMs: 600_000, signal: stop.signal });
    await until(() => existsSync(join(worktree, 'ready')));
    // The run's processes on the host: the bwrap this process started, and all below it.
    const runPids = descendantsOf(process.pid).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    });
    const outer = runPids.filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bwrap')[0];
    expect(outer).toBeDefined();
    const everyTask = [outer ?? -1, ...descendantsOf(outer ?? -1)].flatMap(tidsOf).sort((a, b) => a - b);
    // 1 + 4 + 2 python threads at least, plus bwrap's own processes.
    expect(everyTask.length).toBeGreaterThanOrEqual(8);
    for (const hierarchy of [PIDS, MEMORY]) {
      const [name, ...more] = ourGroups(hierarchy);
      expect(more).toEqual([]);
      const members = readFileSync(`${hierarchy}/crustcore/${name}/tasks`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(Number);
      expect(members.sort((a, b) => a - b)).toEqual(everyTask);
    }
    stop.abort();
    const result = await pending;
    expect(result.cancelled).toBe(true);
    expect(result.processLimit).toBe('pids-cgroup');
    expect(result.memoryLimit).toBe('memory-cgroup');
    for (const hierarchy of [PIDS, MEMORY]) expect(ourGroups(hierarchy)).toEqual([]);
    for (const tid of everyTask)
      expect(existsSync(`/proc/${tid}/cmdline`) && readFileSync(`/proc/${tid}/cmdline`, 'utf8').includes(marker)).toBe(
        false,
      );
  });

  it('threads count against pids.max (they are born in the group; CONTROL: a larger limit lets them all start)', async () => {
    const program = `
import threading, time
started = 0
try:
    for _ in range(40):
        threading.Thread(target=lambda: time.sleep(100000), daemon=True).start()
        started += 1
except RuntimeError:
    pass
print('STARTED', started, flush=True)
`;
    const limited = await sandboxed(
      { argv: ['python3', '-c', program], timeoutMs: 60_000 },
      { limits: { processes: 16 } },
    );
    const started = Number(/STARTED (\d+)/.exec(limited.stdout.text)?.[1]);
    expect(started).toBeLessThan(16);
    expect(limited.forkRefusals).toBeGreaterThan(0);
    const control = await sandboxed(
      { argv: ['python3', '-c', program], timeoutMs: 60_000 },
      { limits: { processes: 256 } },
    );
    expect(control.stdout.text).toContain('STARTED 40');
    expect(control.forkRefusals).toBe(0);
  });
});

/** Prints who started it (its parent's name), its process group and session, its environment; then execs the probe. */
const WHO = `
import json, os, sys
ppid = os.getppid()
print('WHO ' + json.dumps({'pid': os.getpid(), 'ppid': ppid, 'parent': open('/proc/%d/comm' % ppid).read().strip(),
    'pgid': os.getpgid(0), 'sid': os.getsid(0), 'env': dict(os.environ)}), flush=True)
os.execv(sys.executable, [sys.executable] + sys.argv[1:])
`;

/** In the holder's exec'd Node process: the CLI's very first host command, then one after the broker is up. */
const DRIVER = `
const { runTrustedHostCommand } = await import(${JSON.stringify(join(repoRoot, 'packages/sandbox/src/index.ts'))});
const spec = { argv: ['/usr/bin/python3', ${JSON.stringify(join(scratch, 'who.py'))}, ${JSON.stringify(join(scratch, 'probe.py'))}, process.env.CRUSTCORE_PLANTED],
  cwd: '/', env: { PATH: '/usr/bin:/bin', LC_ALL: 'C.UTF-8', ONLY: 'this' }, timeoutMs: 60000, maxOutputBytes: 1 << 20 };
const early = await runTrustedHostCommand(spec);
console.log('EARLY ' + JSON.stringify({ driver: process.pid, out: early.stdout.text, code: early.exitCode }));
for (let i = 0; ; i++) {
  const r = await runTrustedHostCommand({ ...spec, argv: ['/bin/sh', '-c', 'cat /proc/$PPID/comm'] });
  if (r.stdout.text.trim() === 'perl') break;
  if (i > 2000) throw new Error('no broker');
  await new Promise((resume) => setTimeout(resume, 5));
}
const late = await runTrustedHostCommand(spec);
console.log('LATE ' + JSON.stringify({ driver: process.pid, out: late.stdout.text, code: late.exitCode }));
`;

interface Who {
  readonly pid: number;
  readonly ppid: number;
  readonly parent: string;
  readonly pgid: number;
  readonly sid: number;
  readonly env: Record<string, string>;
}

describe('redteam: host commands before the spawn broker is up', () => {
  it('the first command of a CLI holding inheritable descriptors gets none of them, exactly its env and its own group (CONTROLS leak)', async () => {
    writeFileSync(join(scratch, 'probe.py'), PROBE);
    writeFileSync(join(scratch, 'who.py'), WHO);
    writeFileSync(join(scratch, 'holder.py'), HOLDER);
    const secretFile = join(scratch, 'secret.txt');
    writeFileSync(secretFile, `host-secret-${process.pid}`);
    writeFileSync(join(scratch, 'victim.txt'), 'untouched');
    const driverFile = join(scratch, 'driver.sh');
    const node = `exec ${JSON.stringify(process.execPath)} --conditions=source --import tsx --input-type=module -e ${shellQuote(DRIVER)}`;
    writeFileSync(driverFile, `#!/bin/sh\n${node}\n`, { mode: 0o755 });
    const run = await runTrustedHostCommand({
      argv: [
        '/usr/bin/python3',
        join(scratch, 'holder.py'),
        join(scratch, 'probe.py'),
        secretFile,
        join(scratch, 'victim.txt'),
        driverFile,
      ],
      cwd: repoRoot,
      env: { PATH: '/usr/bin:/bin', HOME: '/root' },
      timeoutMs: 170_000,
      maxOutputBytes: 8 << 20,
    });
    expect(run.exitCode, run.stderr.text).toBe(0);
    const lines = run.stdout.text.split('\n');
    const report = holderReport(lines);
    expectControlsLeak(report, `host-secret-${process.pid}`);
    const seen: Record<string, Who> = {};
    for (const tag of ['EARLY', 'LATE'] as const) {
      const line = JSON.parse(tagged(lines, tag)[0] ?? 'null') as { driver: number; out: string; code: number } | null;
      expect(line, run.stderr.text).not.toBeNull();
      expect(line?.code).toBe(0);
      const outLines = (line?.out ?? '').split('\n');
      const who = JSON.parse(tagged(outLines, 'WHO')[0] ?? 'null') as Who;
      seen[tag] = who;
      expectNoneReached(parseProbe(line?.out ?? ''), report.numbers, tag);
      expect(who.env).toEqual({ PATH: '/usr/bin:/bin', LC_ALL: 'C.UTF-8', ONLY: 'this' });
      // Its own process group, whichever way it started.
      expect(who.pgid).toBe(who.pid);
      if (tag === 'EARLY') expect(who.ppid).toBe(line?.driver); // Node started it: the broker was not up yet
    }
    expect(seen.LATE?.parent).toBe('perl');
  });

  it('a run asked before readiness is killed with its whole group on timeout, with its exit and output kept', async () => {
    vi.resetModules();
    const fresh = (await import('../packages/sandbox/src/runner/host-command.js')) as {
      runTrustedHostCommand: typeof runTrustedHostCommand;
    };
    const marker = `31536000.${process.pid}${Date.now() % 100_000}7`;
    const result = await fresh.runTrustedHostCommand({
      argv: ['/bin/sh', '-c', `echo parent $PPID; echo oops >&2; sleep ${marker} & wait`],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 1_000,
      maxOutputBytes: 1 << 20,
    });
    // Started by this process (the broker of the fresh module had not said R).
    expect(result.stdout.text).toBe(`parent ${process.pid}\n`);
    expect(result.stderr.text).toBe('oops\n');
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGTERM');
    const sleepers = (): number[] =>
      readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((entry) => {
          try {
            return (
              readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker) &&
              !/State:\s+Z/.test(readFileSync(`/proc/${entry}/status`, 'utf8'))
            );
          } catch {
            return false;
          }
        })
        .map(Number);
    await until(() => sleepers().length === 0);
  });

  it('a broker killed with a request in flight runs it never, not twice, and later runs still run', async () => {
    const broker = SpawnBroker.start();
    if (broker === null) return;
    await until(() => broker.ready);
    const tally = join(scratch, `tally-${Date.now()}`);
    const spec = {
      argv: ['/bin/sh', '-c', `echo x >> ${tally}`] as [string, ...string[]],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 10_000,
      maxOutputBytes: 1024,
    };
    process.kill(broker.pid ?? -1, 'SIGSTOP');
    const pending = broker.run(spec, '/bin/sh');
    process.kill(broker.pid ?? -1, 'SIGKILL');
    const lost = await pending;
    expect(lost?.startError?.reason).toBe('SpawnFailed');
    expect(existsSync(tally)).toBe(false);
    expect(broker.ready).toBe(false);
    // The process-wide path: a dead broker is not asked again; its runs start from Node, once each.
    const later = await runTrustedHostCommand(spec);
    expect(later.exitCode).toBe(0);
    expect(readFileSync(tally, 'utf8')).toBe('x\n');
  });
});
