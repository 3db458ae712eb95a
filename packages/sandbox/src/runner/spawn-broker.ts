/**
 * Trusted host commands (git, find) started by a small perl process instead of by Node itself
 * (broker-script.ts says why: Node's fork copies this process's page tables, ~2.5 ms of blocked
 * main thread per child). The child's stdin, stdout and stderr are Unix-socket connections back to
 * this process, each claimed with a 128-bit token that is new for every run; the socket lives in a
 * 0700 directory of its own. Everything else is `runProcess`'s contract: exactly the given
 * environment, its own process group, bounded captures, timeout and abort kill the group (SIGTERM,
 * SIGKILL after the grace), leftovers die with it, expected failures come back as values.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findHostTool } from '../mount/host-layout.js';
import { BrokerRun } from './broker-run.js';
import { BROKER_SCRIPT } from './broker-script.js';
import type { ProcessResult, ProcessSpec, ProcessStartFailure } from './process-runner.js';

/** close_range(2): the same number on x86-64 and arm64. */
const CLOSE_RANGE = 436;
const SUPPORTED_ARCHES = new Set(['x64', 'arm64']);
/** sun_path holds 108 bytes with its NUL. */
const MAX_SOCKET_PATH_BYTES = 107;
/** A stream's claim: 32 hex digits, a tab, one digit, a newline. */
const MAX_CLAIM_BYTES = 64;

const errnoName = (value: string): string | null =>
  Object.entries(constants.errno).find(([, number]) => String(number) === value)?.[0] ?? null;

export class SpawnBroker {
  readonly #child: ChildProcess;
  /** Where children connect their streams (diagnostics and tests). */
  readonly socketPath: string;
  readonly #server: Server;
  readonly #listening: Promise<boolean>;
  readonly #runs = new Map<string, BrokerRun>();
  readonly #claims = new Map<string, BrokerRun>();
  #nextId = 0;
  #control = '';
  #dead = false;
  #ready = false;

  private constructor(child: ChildProcess, server: Server, socketPath: string) {
    this.#child = child;
    this.#server = server;
    this.socketPath = socketPath;
    this.#listening = new Promise((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(socketPath, () => resolve(true));
    });
    server.on('connection', (socket) => this.#claim(socket));
    child.stdout?.setEncoding('latin1').on('data', (text: string) => this.#onControl(text));
    child.once('exit', () => this.#die('the spawn broker stopped'));
    child.on('error', () => this.#die('the spawn broker could not start'));
    child.stdin?.on('error', () => this.#die('the spawn broker stopped'));
    // Idle, none of it keeps the process alive; a run's own timer does while it runs.
    child.unref();
    server.unref();
    (child.stdin as unknown as Socket | null)?.unref();
    (child.stdout as unknown as Socket | null)?.unref();
  }

  /** A broker for this process, or null where it cannot run (no perl, an unknown architecture). */
  static start(): SpawnBroker | null {
    const perl = findHostTool('perl');
    if (perl === null || !SUPPORTED_ARCHES.has(process.arch)) return null;
    const directory = mkdtempSync(join(tmpdir(), 'crustcore-spawn-'));
    const socketPath = join(directory, 'broker.sock');
    const remove = (): void => rmSync(directory, { recursive: true, force: true });
    if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
      remove();
      return null;
    }
    process.once('exit', remove);
    const child = spawn(perl, ['-t', '-e', BROKER_SCRIPT, String(CLOSE_RANGE), socketPath], {
      env: { PATH: '/usr/bin:/bin' },
      // Its own session: a Ctrl+C meant for the CLI must not take the broker down mid-run.
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    return new SpawnBroker(child, createServer(), socketPath);
  }

  /** The perl process's pid (diagnostics and tests); undefined when it did not start. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** The perl process is up and reads requests (it said so); until then a caller may spawn itself. */
  get ready(): boolean {
    return this.#ready && !this.#dead;
  }

  /** Runs a spec whose program is already resolved to `programPath`; null when the broker cannot (the caller spawns itself). */
  async run(spec: ProcessSpec, programPath: string): Promise<ProcessResult | null> {
    if (this.#dead || !(await this.#listening) || this.#dead) return null;
    const id = String(++this.#nextId);
    const token = randomBytes(16).toString('hex');
    const run = new BrokerRun(spec, () => {
      this.#runs.delete(id);
      this.#claims.delete(token);
    });
    this.#runs.set(id, run);
    this.#claims.set(token, run);
    const env = Object.entries(spec.env).map(([name, value]) => `${name}=${value}`);
    const stdinFlag = spec.stdin === undefined ? '0' : '1';
    const payload = [id, token, spec.cwd, programPath, spec.argv.length, ...spec.argv, env.length, ...env, stdinFlag];
    const bytes = Buffer.from(payload.join('\u0000'), 'utf8');
    this.#child.stdin?.write(Buffer.concat([Buffer.from(`${bytes.length}\n`), bytes]));
    return run.result;
  }

  /** A connection from a child: its first line names the run (token) and the stream. */
  #claim(socket: Socket): void {
    socket.on('error', () => {});
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(0x0a);
      if (end < 0) {
        if (head.length > MAX_CLAIM_BYTES) socket.destroy();
        return;
      }
      socket.off('data', onData);
      const [token = '', stream = ''] = head.subarray(0, end).toString('latin1').split('\t');
      const run = this.#claims.get(token);
      if (run === undefined || !run.attach(stream, socket, head.subarray(end + 1))) socket.destroy();
    };
    socket.on('data', onData);
  }

  #onControl(text: string): void {
    this.#control += text;
    for (let end = this.#control.indexOf('\n'); end >= 0; end = this.#control.indexOf('\n')) {
      const [kind, id = '', first = '', second = ''] = this.#control.slice(0, end).split('\t');
      this.#control = this.#control.slice(end + 1);
      if (kind === 'R') this.#ready = true;
      const run = this.#runs.get(id);
      if (run === undefined) continue;
      if (kind === 'S') run.started(Number(first));
      else if (kind === 'C') run.execing();
      else if (kind === 'X') run.exited(first === '' ? null : Number(first), second === '' ? null : Number(second));
      else if (kind === 'E') run.failedBeforeExec(startFailureOf(first, errnoName(second)), errnoName(second), first);
      else if (kind === 'F') run.neverStarted('SpawnFailed', errnoName(first), `fork failed: ${errnoName(first)}`);
    }
  }

  #die(why: string): void {
    if (this.#dead) return;
    this.#dead = true;
    for (const run of [...this.#runs.values()]) run.brokerLost(why);
    this.#server.close();
  }
}

/** What a failure before exec means for the caller. */
function startFailureOf(stage: string, code: string | null): ProcessStartFailure {
  if (stage === 'cwd') return 'CwdNotFound';
  if (stage === 'exec' && code === 'ENOENT') return 'NotFound';
  if (stage === 'exec' && (code === 'EACCES' || code === 'EPERM')) return 'PermissionDenied';
  return 'SpawnFailed';
}
