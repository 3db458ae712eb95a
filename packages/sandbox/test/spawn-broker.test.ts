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
import { describe, expect, it } from 'vitest';
import { BrokerRun } from '../src/runner/broker-run.js';
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
  const pending = (): Promise<'pending'> =>
    new Promise((resume) => setTimeout(() => resume('pending'), DRAIN_AFTER_EXIT_MS + 3_000));

  /** A process group standing for the child's (the exit report SIGKILLs it, as it would the child's leftovers). */
  const group = (): number => {
    const stand = spawn('/bin/sleep', ['30'], { detached: true, stdio: 'ignore' });
    return stand.pid ?? 0;
  };

  it('settles at once with how the child ended, when it died before exec (no C report, no stream)', async () => {
    const run = new BrokerRun({ ...base, argv: ['/bin/true'] }, () => {});
    run.started(group());
    run.exited(null, 15);
    const result = await Promise.race([run.result, pending()]);
    expect(result).not.toBe('pending');
    expect(result === 'pending' ? null : result.signal).toBe('SIGTERM');
  });

  it('settles after the drain when a stream it connected never arrived (CONTROL: both arrived and closed, at once)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'broker-run-'));
    const accepted: Socket[] = [];
    const server = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resume) => server.listen(join(directory, 's.sock'), resume));
    const pair = async (): Promise<Socket> => {
      const client = connect(join(directory, 's.sock'));
      while (accepted.length === 0) await new Promise((resume) => setTimeout(resume, 5));
      client.end('out');
      return accepted.shift() as Socket;
    };
    const half = new BrokerRun({ ...base, argv: ['/bin/true'] }, () => {});
    expect(half.attach('1', await pair(), Buffer.alloc(0))).toBe(true);
    half.started(group());
    half.execing();
    half.exited(0, null);
    const halfResult = await Promise.race([half.result, pending()]);
    expect(halfResult === 'pending' ? null : halfResult.exitCode).toBe(0);
    const whole = new BrokerRun({ ...base, argv: ['/bin/true'] }, () => {});
    whole.attach('1', await pair(), Buffer.alloc(0));
    whole.attach('2', await pair(), Buffer.alloc(0));
    whole.started(group());
    whole.execing();
    whole.exited(0, null);
    const started = performance.now();
    expect((await whole.result).stdout.text).toBe('out');
    expect(performance.now() - started).toBeLessThan(DRAIN_AFTER_EXIT_MS);
    server.close();
  });
});
