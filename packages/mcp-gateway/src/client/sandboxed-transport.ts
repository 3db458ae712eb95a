/**
 * An MCP transport to a stdio server that runs in a sandbox. The sandbox
 * runner (the only spawner) starts the in-sandbox bridge, which connects back
 * to a Unix socket of ours and runs the server as its child; JSON-RPC lines
 * then flow over that socket. Credentials travel in the bridge's start frame,
 * never through argv, the sandbox's environment or the ledger.
 *
 * `close()` aborts the run: the runner kills the whole process group (and
 * bubblewrap's pid namespace), so a hanging server cannot outlive it.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintSandboxExecCap, runSandboxed, type SandboxedResult } from '@crustcore/sandbox';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { STDIO_BRIDGE_PATH } from '../bridge-script.js';

const LAYOUT = Object.freeze({
  bridge: '/crustcore/mcp-bridge.mjs',
  socketDirectory: '/crustcore/mcp',
  socket: '/crustcore/mcp/gateway.sock',
});
const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface SandboxedServerSpec {
  readonly command: string;
  readonly args: readonly string[];
  /** Variables of the sandbox itself (sanitized by the sandbox: the profile's names only). */
  readonly env: Readonly<Record<string, string>>;
  /** Variables the bridge adds for the server alone (the record's env, resolved credentials). */
  readonly serverEnv: Readonly<Record<string, string>>;
  /** The server's working directory: the task's worktree (or a scratch directory), or the user's checkout. */
  readonly worktree: string;
  /** Read-only for a server whose code is the repository's (it runs on the user's checkout). */
  readonly worktreeAccess: 'read-write' | 'read-only';
  /** Host directories bound read-only at the same path (the server's code). */
  readonly readPaths: readonly string[];
}

/** How the sandboxed run ended, for diagnostics (the stderr tail, never stdout). */
export interface ServerExit {
  readonly result: SandboxedResult | null;
  readonly refusal: string | null;
}

export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #spec: SandboxedServerSpec;
  readonly #stop = new AbortController();
  readonly #buffer = new ReadBuffer();
  #directory: string | null = null;
  #server: Server | null = null;
  #socket: Socket | null = null;
  #control: Socket | null = null;
  #exited: Promise<ServerExit> | null = null;
  #closed = false;

  constructor(spec: SandboxedServerSpec) {
    this.#spec = spec;
  }

  /** Resolves when the sandboxed run is over (after `close()`, or when the server exits). */
  exited(): Promise<ServerExit> {
    return this.#exited ?? Promise.resolve({ result: null, refusal: 'never started' });
  }

  async start(): Promise<void> {
    const directory = mkdtempSync(join(tmpdir(), 'crustcore-mcp-'));
    this.#directory = directory;
    const server = createServer();
    this.#server = server;
    const connected = new Promise<Socket>((resolve) => server.once('connection', resolve));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(join(directory, 'gateway.sock'), resolve);
    });
    this.#exited = this.#run(directory);
    const control = await Promise.race([connected, this.#exited]);
    if (!('write' in control)) {
      await this.close();
      throw new Error(`the MCP server did not start: ${describeExit(control)}`);
    }
    this.#control = control;
    control.on('close', () => this.#onExit());
    const ready = await this.#handshake(control, join(directory, 'data.sock'));
    if (ready === null) {
      await this.close();
      throw new Error(`the MCP server did not start: ${describeExit(await this.exited())}`);
    }
    this.#attach(ready);
  }

  /** Sends the start frame; after the bridge's `ready`, connects the data socket (the server's stdio). */
  async #handshake(control: Socket, dataPath: string): Promise<Socket | null> {
    const ready = new Promise<boolean>((resolve) => {
      let seen = '';
      control.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        if (seen.includes('ready\n')) resolve(true);
      });
      control.once('close', () => resolve(false));
    });
    control.write(`${JSON.stringify({ env: this.#spec.serverEnv })}\n`);
    if (!(await Promise.race([ready, this.exited().then(() => false)]))) return null;
    return new Promise<Socket | null>((resolve) => {
      const data = connect(dataPath, () => resolve(data));
      data.once('error', () => resolve(null));
    });
  }

  async #run(directory: string): Promise<ServerExit> {
    const minted = mintSandboxExecCap('worker', {
      backend: 'bubblewrap',
      extraBinds: [
        // Read-write: the bridge creates its data socket here (the directory is ours, 0700, empty).
        { source: directory, target: LAYOUT.socketDirectory, mode: 'read-write' },
        { source: STDIO_BRIDGE_PATH, target: LAYOUT.bridge, mode: 'read-only' },
        ...this.#spec.readPaths.map((path) => ({ source: path, mode: 'read-only' as const })),
      ],
    });
    if (minted._tag === 'Left') return { result: null, refusal: minted.left.message };
    const run = await runSandboxed(minted.right, {
      argv: [
        realpathSync(process.execPath),
        LAYOUT.bridge,
        '--socket',
        LAYOUT.socket,
        '--',
        this.#spec.command,
        ...this.#spec.args,
      ],
      worktreeRoot: this.#spec.worktree,
      worktreeAccess: this.#spec.worktreeAccess,
      cwd: this.#spec.worktree,
      env: this.#spec.env,
      signal: this.#stop.signal,
      timeoutMs: minted.right.profile.maxTimeoutMs,
      maxOutputBytes: 1024 * 1024,
    });
    this.#onExit();
    return run._tag === 'Left' ? { result: null, refusal: run.left.message } : { result: run.right, refusal: null };
  }

  #attach(socket: Socket): void {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      try {
        this.#buffer.append(chunk);
      } catch (error) {
        // A message over the read buffer's bound (a huge result): that call fails and the server is
        // stopped. Thrown from a socket handler, it would have ended the whole process.
        this.onerror?.(new Error(`the server sent a message over the size bound: ${(error as Error).message}`));
        void this.close();
        return;
      }
      this.#drain();
    });
    socket.on('error', (error) => this.onerror?.(error));
    socket.on('close', () => this.#onExit());
  }

  #drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) break;
      this.onmessage?.(message);
    }
  }

  /**
   * Resolves once the line is handed to the socket (after `drain` when its buffer is full), like the
   * SDK's own stdio transport: a write that fails later errors and closes the socket, and closing
   * rejects every pending request. Waiting for each write's callback would add a callback, a promise
   * and a tick to every call.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    const socket = this.#socket;
    if (socket === null || socket.destroyed) throw new Error('the MCP server is not running');
    const line = serializeMessage(message);
    // UTF-8 takes at most three bytes per UTF-16 unit: only a long line needs counting.
    if (line.length * 3 > MAX_LINE_BYTES && Buffer.byteLength(line) > MAX_LINE_BYTES)
      throw new Error('message too large');
    if (!socket.write(line)) await drained(socket);
  }

  #onExit(): void {
    if (this.#closed) return;
    void this.close();
  }

  /** Stops the server (the runner kills its process group) and waits until it is gone. */
  async close(): Promise<void> {
    const first = !this.#closed;
    this.#closed = true;
    this.#stop.abort();
    this.#socket?.destroy();
    this.#control?.destroy();
    this.#server?.close();
    if (this.#exited !== null) await this.#exited;
    if (this.#directory !== null) rmSync(this.#directory, { recursive: true, force: true });
    this.#directory = null;
    if (first) this.onclose?.();
  }
}

/** Resolves when the socket takes writes again, or is gone (its close rejects the pending requests). */
function drained(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.once('drain', done);
    socket.once('close', done);
  });
}

function describeExit(exit: ServerExit): string {
  if (exit.refusal !== null) return `the sandbox refused it (${exit.refusal})`;
  const result = exit.result;
  if (result === null) return 'unknown';
  const tail = result.stderr.text.slice(-400).trim();
  return `exit ${result.exitCode ?? result.signal ?? '?'}${tail === '' ? '' : `: ${tail}`}`;
}
