/**
 * Helpers for the daemon and MCP golden tests: the built CLI (the `crustcore`
 * bin users run; built once here unless `npm test` already built everything),
 * long-running daemons whose JSON log lines can be awaited, and a raw client
 * for the admin socket.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, CLI, REPO_ROOT } from './cli-harness.js';

// The bin, not the TypeScript sources through tsx: a tsx start costs ~10× the CPU of the built
// CLI's, and these suites start the CLI hundreds of times.
buildCli();
export const CLI_ARGS: readonly string[] = [CLI];

export const tempDir = (prefix: string): string => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

export function baseEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CRUSTCORE_HOME: home, NO_COLOR: '1' };
}

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly json: Record<string, unknown> | null;
}

export function cli(
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  options: { readonly cwd?: string } = {},
): CliResult {
  const result = spawnSync(process.execPath, [...CLI_ARGS, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, json: lastJsonLine(result.stdout) };
}

/**
 * `cli` without blocking this process: for runs that talk to a server the
 * test itself serves (a scripted model on 127.0.0.1), which a blocked event
 * loop could never answer.
 */
export function cliAsync(
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  options: { readonly cwd?: string; readonly timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const limitMs = options.timeoutMs ?? 180_000;
    // A process that finished its work but never exits (a handle left open) fails with a reason, not a bare null status.
    const timer = setTimeout(() => {
      stderr += `\n[harness] killed: the CLI had not exited after ${limitMs} ms`;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, json: lastJsonLine(stdout) });
    });
  });
}

function lastJsonLine(stdout: string): Record<string, unknown> | null {
  const last = stdout.trim().split('\n').pop() ?? '';
  try {
    return last.startsWith('{') ? (JSON.parse(last) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export interface LogLine {
  readonly event: string;
  readonly [key: string]: unknown;
}

/** A `crustcore daemon --json` process and its parsed log. */
export class DaemonProcess {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  stderr = '';
  #waiters: { readonly test: (line: LogLine) => boolean; readonly resolve: (line: LogLine) => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor(env: NodeJS.ProcessEnv, args: readonly string[]) {
    this.child = spawn(process.execPath, [...CLI_ARGS, 'daemon', '--json', ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf('\n');
      while (newline !== -1) {
        const text = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
        try {
          const line = JSON.parse(text) as LogLine;
          this.lines.push(line);
          this.#waiters = this.#waiters.filter((waiter) => {
            if (!waiter.test(line)) return true;
            waiter.resolve(line);
            return false;
          });
        } catch {
          // Not a log line (should not happen with --json).
        }
      }
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    // 'close', not 'exit': only then has every log line been read from the pipes.
    this.exited = new Promise((resolve) => this.child.once('close', (code) => resolve(code)));
  }

  /** Resolves with the first log line (past or future) that passes `test`. */
  waitFor(test: (line: LogLine) => boolean, timeoutMs: number, what: string): Promise<LogLine> {
    const seen = this.lines.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${what}; log:\n${JSON.stringify(this.lines.slice(-20), null, 1)}\nstderr:\n${this.stderr.slice(-3000)}`,
            ),
          ),
        timeoutMs,
      );
      this.#waiters.push({
        test,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  events(event: string): LogLine[] {
    return this.lines.filter((line) => line.event === event);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** Sends raw lines to a socket and collects `expected` reply lines. */
export function rawAdmin(socketPath: string, payload: string, expected: number, timeoutMs = 10_000): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`only got ${JSON.stringify(buffer)} from ${socketPath}`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n').filter((line) => line !== '');
      if (lines.length >= expected) {
        clearTimeout(timer);
        socket.destroy();
        resolve(lines);
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value other than null. */
export async function eventually<T>(
  probe: () => T | null | Promise<T | null>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}
