/**
 * What only the spawn broker has (runner.test.ts holds it to runProcess's contract): the socket its
 * children connect their streams to, claimed with a per-run token, and what happens when the broker
 * itself dies.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrokerRun } from '../src/runner/broker-run.js';
import { BROKER_SCRIPT } from '../src/runner/broker-script.js';
import { DRAIN_AFTER_EXIT_MS } from '../src/runner/process-runner.js';
import { SpawnBroker } from '../src/runner/spawn-broker.js';
import { waitUntilGone } from './process-state.js';

const base = { cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, timeoutMs: 30_000, maxOutputBytes: 1 << 20 } as const;

function startBroker(): SpawnBroker {
  const broker = SpawnBroker.start();
  if (broker === null) throw new Error('perl is needed for the spawn broker');
  return broker;
}

/** Resolves once the file exists: the child's own handshake. */
async function appeared(path: string): Promise<void> {
  while (!existsSync(path)) await new Promise((resume) => setTimeout(resume, 10));
}

describe('the spawn broker', () => {
  it('says when it is up, and a run asked before then still runs through it', async () => {
    const broker = startBroker();
    // Asked at once: the request waits in perl's stdin until the broker reads it.
    const early = await broker.run({ ...base, argv: ['/bin/sh', '-c', 'echo $PPID'] }, '/bin/sh');
    expect(early?.exitCode).toBe(0);
    // The broker forked it: its parent is the perl process, not this one.
    expect(Number(early?.stdout.text.trim())).toBe(broker.pid);
    // It said it was up before it forked anything (its first line), so it is ready by now.
    expect(broker.ready).toBe(true);
  });

  it('keeps its socket in a directory only this user can enter', () => {
    const broker = startBroker();
    expect(statSync(dirname(broker.socketPath)).mode & 0o777).toBe(0o700);
  });

  it("drops a connection that claims a made-up token; the run's output is only its child's", async () => {
    const broker = startBroker();
    const ready = join(mkdtempSync(join(tmpdir(), 'broker-claim-')), 'ready');
    const gate = join(dirname(ready), 'go');
    const script = `echo mine; : > '${ready}'; while [ ! -e '${gate}' ]; do sleep 0.01; done; echo end`;
    const pending = broker.run({ ...base, argv: ['/bin/sh', '-c', script] }, '/bin/sh');
    await appeared(ready);
    // An impostor on the socket, with a well-formed claim for stdout under a token it made up.
    const impostor = connect(broker.socketPath);
    impostor.on('error', () => {});
    const closed = new Promise<void>((resume) => impostor.once('close', () => resume()));
    impostor.write(`${'0'.repeat(32)}\t1\nINJECTED\n`);
    await closed;
    writeFileSync(gate, '');
    const result = await pending;
    expect(result?.exitCode).toBe(0);
    expect(result?.stdout.text).toBe('mine\nend\n');
  });

  it('a broker that dies fails its runs and kills their children', async () => {
    const broker = startBroker();
    const ready = join(mkdtempSync(join(tmpdir(), 'broker-dies-')), 'ready');
    const pending = broker.run(
      { ...base, argv: ['/bin/sh', '-c', `echo $$ > '${ready}.tmp'; mv '${ready}.tmp' '${ready}'; exec sleep 60`] },
      '/bin/sh',
    );
    await appeared(ready);
    const child = Number(readFileSync(ready, 'utf8').trim());
    process.kill(broker.pid ?? 0, 'SIGKILL');
    const result = await pending;
    expect(result?.startError?.reason).toBe('SpawnFailed');
    expect(result?.exitCode).toBeNull();
    expect(await waitUntilGone(child, 5_000)).toBe(true);
    expect(broker.dead).toBe(true);
    // CONTROL: a dead broker takes no run (the caller spawns it itself).
    expect(await broker.run({ ...base, argv: ['/bin/true'] }, '/bin/true')).toBeNull();
  });
});

describe('the spawn broker after its process is killed', () => {
  /** Live processes whose command line names `text` (the broker's names its socket). */
  const processesNaming = (text: string): number[] =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text);
        } catch {
          return false; // ended while listed
        }
      })
      .map(Number);

  it('leaves no socket directory behind: the broker removes it when its CLI is gone (CONTROL: it was there)', async () => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'broker-killed-')));
    const dist = join(import.meta.dirname, '../dist/index.js');
    const script = `const s = await import(${JSON.stringify(dist)}); const r = await s.runTrustedHostCommand({ argv: ['/bin/true'], cwd: '/tmp', env: {}, timeoutMs: 10000, maxOutputBytes: 1024 }); console.log('ran', r.exitCode); setInterval(() => {}, 1000);`;
    const holder = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: '/usr/bin:/bin', TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resume) =>
      holder.stdout.once('data', (chunk: Buffer) => resume(String(chunk))),
    );
    expect(line.trim()).toBe('ran 0');
    expect(readdirSync(tmp).filter((name) => name.startsWith('crustcore-spawn-'))).toHaveLength(1);
    const brokers = processesNaming(tmp);
    expect(brokers.length).toBeGreaterThan(0);
    holder.kill('SIGKILL');
    for (const pid of brokers) expect(await waitUntilGone(pid, 10_000)).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
  });

  // Red team: a CLI killed with a request in the pipe. The broker then forks and reports the start
  // to a reader that is gone; SIGPIPE used to kill it there, before it saw the end of its input,
  // and the directory stayed. Stopping the broker while the holder asks and dies makes the order exact.
  it('leaves no socket directory when its CLI dies with a run just asked for', async () => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'broker-pipe-')));
    const dist = join(import.meta.dirname, '../dist/index.js');
    const script = `const s = await import(${JSON.stringify(dist)}); const run = () => s.runTrustedHostCommand({ argv: ['/bin/true'], cwd: '/tmp', env: {}, timeoutMs: 10000, maxOutputBytes: 1024 }); await run(); console.log('ran'); process.stdin.once('data', () => { void run(); setTimeout(() => process.kill(process.pid, 'SIGKILL'), 50); });`;
    const holder = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: '/usr/bin:/bin', TMPDIR: tmp },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    await new Promise((resume) => holder.stdout.once('data', resume));
    const brokers = processesNaming(tmp);
    expect(brokers.length).toBeGreaterThan(0);
    for (const pid of brokers) process.kill(pid, 'SIGSTOP');
    const gone = new Promise((resume) => holder.once('exit', resume));
    holder.stdin.write('go\n');
    await gone;
    for (const pid of brokers) process.kill(pid, 'SIGCONT');
    for (const pid of brokers) expect(await waitUntilGone(pid, 10_000)).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('leaves no socket directory when the broker itself is told to stop (SIGTERM)', async () => {
    const broker = startBroker();
    expect(await broker.run({ ...base, argv: ['/bin/true'] }, '/bin/true')).toMatchObject({ exitCode: 0 });
    process.kill(broker.pid ?? 0, 'SIGTERM');
    expect(await waitUntilGone(broker.pid ?? 0, 10_000)).toBe(true);
    expect(existsSync(dirname(broker.socketPath))).toBe(false);
  });
});

/**
 * Red team: a child that dies between fork and its stream connects (an abort or a timeout right at
 * the start kills its group; the OOM killer) is reaped with no stream ever opened. With the real
 * broker, aborting each of 300 runs as it started left 3 of them pending for good; here the
 * broker's reports are replayed to one run, so the order is exact.
 */
describe('a run whose child died before connecting its streams', () => {
  // The clock is faked for the run's own timers (its timeout and the drain after the exit): whether a
  // run settles at once or only after the drain is then decided by the code path, never by load.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A process group standing for the child's (the exit report SIGKILLs it, as it would the child's leftovers). */
  const group = (): number => {
    const stand = spawn('/bin/sleep', ['30'], { detached: true, stdio: 'ignore' });
    return stand.pid ?? 0;
  };

  /** The run's result once it settled; null while it has not (microtasks flushed, no time passes). */
  async function settledNow(run: BrokerRun): Promise<Awaited<BrokerRun['result']> | null> {
    let result: Awaited<BrokerRun['result']> | null = null;
    void run.result.then((value) => {
      result = value;
    });
    await vi.advanceTimersByTimeAsync(0);
    return result;
  }

  it('settles at once with how the child ended, when it died before exec (no C report, no stream)', async () => {
    const run = new BrokerRun({ ...base, argv: ['/bin/true'] }, () => {});
    run.started(group());
    run.exited(null, 15);
    expect((await settledNow(run))?.signal).toBe('SIGTERM');
  });

  it('settles after the drain when a stream it connected never arrived (CONTROL: both arrived and closed, at once)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'broker-run-'));
    const server = createServer();
    await new Promise<void>((resume) => server.listen(join(directory, 's.sock'), resume));
    /** One connected pair: the client writes `out` and ends; the server's side is what a run attaches. */
    const pair = async (): Promise<Socket> => {
      const accepted = new Promise<Socket>((resume) => server.once('connection', resume));
      connect(join(directory, 's.sock')).end('out');
      return accepted;
    };
    const half = new BrokerRun({ ...base, argv: ['/bin/true'] }, () => {});
    expect(half.attach('1', await pair(), Buffer.alloc(0))).toBe(true);
    half.started(group());
    half.execing();
    half.exited(0, null);
    expect(await settledNow(half)).toBeNull();
    await vi.advanceTimersByTimeAsync(DRAIN_AFTER_EXIT_MS);
    expect((await settledNow(half))?.exitCode).toBe(0);
    // CONTROL: with both streams there and closed, it settles without the drain (no time passes).
    const whole = new BrokerRun({ ...base, argv: ['/bin/true'] }, () => {});
    whole.attach('1', await pair(), Buffer.alloc(0));
    whole.attach('2', await pair(), Buffer.alloc(0));
    whole.started(group());
    whole.execing();
    whole.exited(0, null);
    expect((await whole.result).stdout.text).toBe('out');
    server.close();
  });
});

/**
 * Red team: the broker's reports under load. Perl's handlers are installed without SA_RESTART, so a
 * SIGCHLD that lands while the broker is blocked writing a report to a full control socket makes the
 * write fail with EINTR. The report was then lost (a run that never hears S cannot be stopped; one
 * that never hears X never ends). Here the broker runs raw with a small send buffer, its reader
 * paused until runs pile up, and SIGCHLD is sent to it while it is blocked.
 */
describe('the broker under a full control socket', () => {
  it('loses no report when a signal interrupts a blocked write (each run: S, C and X)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'broker-load-'));
    const socketPath = join(directory, 'b.sock');
    const server = createServer((socket) => socket.resume());
    await new Promise<void>((resume) => server.listen(socketPath, resume));
    const wrapper =
      'use Socket; setsockopt(STDOUT, SOL_SOCKET, SO_SNDBUF, 2048) or die; exec {"/usr/bin/perl"} "perl", "-t", "-e", $ENV{BROKER}, @ARGV';
    const broker = spawn('/usr/bin/perl', ['-e', wrapper, '436', socketPath], {
      env: { BROKER: BROKER_SCRIPT, PATH: '/usr/bin:/bin' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let control = '';
    broker.stdout.setEncoding('latin1').on('data', (text: string) => {
      control += text;
    });
    broker.stdout.pause();
    const runs = 150;
    for (let id = 1; id <= runs; id += 1) {
      const payload = [String(id), 'f'.repeat(32), '/tmp', '/bin/true', '1', 'true', '0', '0'].join('\u0000');
      broker.stdin.write(`${Buffer.byteLength(payload)}\n${payload}`);
    }
    // The socket fills; the broker blocks in a write. Interrupt it, again and again.
    for (let round = 0; round < 20; round += 1) {
      await new Promise((resume) => setTimeout(resume, 25));
      process.kill(broker.pid ?? 0, 'SIGCHLD');
    }
    broker.stdout.resume();
    const lines = (): string[] => control.split('\n').filter((line) => line !== '');
    const deadline = Date.now() + 20_000;
    while (lines().filter((line) => line.startsWith('X\t')).length < runs && Date.now() < deadline)
      await new Promise((resume) => setTimeout(resume, 20));
    broker.stdin.end();
    server.close();
    for (const kind of ['S', 'C', 'X']) {
      const ids = new Set(
        lines()
          .filter((line) => line.startsWith(`${kind}\t`))
          .map((line) => line.split('\t')[1]),
      );
      expect(ids.size, `${kind} reports`).toBe(runs);
    }
  });
});
