/**
 * One running MCP server, seen through the official SDK `Client`: its tool
 * list checked against the record's pins (and re-checked whenever the server
 * announces `notifications/tools/list_changed`), and calls bounded by the
 * record's timeout. A call that passes its timeout kills the server; the
 * session is then closed and a later call starts a fresh one.
 */

import { err, ok, type Result } from '@crustcore/kernel';
import { isDangerousEnvName } from '@crustcore/sandbox';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type GatewayError, gatewayError } from '../errors.js';
import { type CheckedTool, checkTool, type LiveTool } from '../pins/pin-check.js';
import type { ServerRecord } from '../registry/server-record.js';
import { CancelWatch } from './cancel-watch.js';
import { SandboxedStdioTransport } from './sandboxed-transport.js';
import { loadsCodeFromRepository } from './server-code.js';

export interface SessionStart {
  readonly record: ServerRecord;
  /** Resolved credential, if the record has `auth` (env var for stdio, header for HTTP). */
  readonly credential: string | null;
  /** The task worktree: the server's working directory, read-write, unless its code is the repository's. */
  readonly worktree: string;
  /**
   * The user's own checkout. A server that loads code from its working directory
   * (`loadsCodeFromRepository`) runs here, read-only, never on the task worktree the model writes.
   * Absent (approving a server outside any task): the worktree as given.
   */
  readonly repository?: string;
}

/** What a call produced, or why there is nothing. */
export type CallOutcome =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | { readonly kind: 'timeout'; readonly timeoutMs: number }
  | { readonly kind: 'failed'; readonly message: string };

const CLIENT_INFO = { name: 'crustcore-gateway', version: '0.1.0' };
/** Start-up (handshake, first tools/list) may take longer than one call: a sandbox and a runtime start. */
const START_TIMEOUT_MS = 60_000;
const CANCELLED = 'the call was cancelled; the server was stopped';

async function transportFor(start: SessionStart): Promise<Result<GatewayError, Transport>> {
  const { record, credential } = start;
  const auth = record.auth;
  if (record.transport.kind === 'http') {
    const headers: Record<string, string> = {};
    if (auth !== undefined && credential !== null) headers[auth.target] = credential;
    // Loaded only for HTTP servers: stdio-only gateways never pull in the HTTP client's dependencies.
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    return ok(new StreamableHTTPClientTransport(new URL(record.transport.url), { requestInit: { headers } }));
  }
  if (record.network)
    return err(
      gatewayError(
        'Unsupported',
        `server ${record.name} asks for network; sandboxed stdio servers have none yet (run it as an HTTP server instead)`,
      ),
    );
  // The server's own variables travel in the bridge's start frame (the sandbox's sanitizer admits only
  // the profile's names); ones that change how programs load code (LD_PRELOAD, NODE_OPTIONS…) never do.
  // The server's current directory may be the task worktree: Python must not import modules from it
  // (a worker could have written one named like the server's own package).
  const serverEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.transport.env))
    if (!isDangerousEnvName(name)) serverEnv[name] = value;
  if (auth !== undefined && credential !== null) serverEnv[auth.target] = credential;
  // Set last: the record's own PYTHONSAFEPATH="" would put the working directory back on sys.path,
  // and server-code.ts counts `python -m` as installed only because this holds.
  serverEnv.PYTHONSAFEPATH = '1';
  const { command, args } = record.transport;
  const fromRepository =
    start.repository !== undefined && loadsCodeFromRepository(command, args, start.repository, record.transport.env);
  return ok(
    new SandboxedStdioTransport({
      command,
      args,
      env: {},
      serverEnv,
      worktree: fromRepository ? (start.repository as string) : start.worktree,
      worktreeAccess: fromRepository ? 'read-only' : 'read-write',
      readPaths: record.readPaths ?? [],
    }),
  );
}

export class ServerSession {
  readonly #client: Client;
  readonly #transport: Transport;
  #record: ServerRecord;
  #tools: CheckedTool[] = [];
  /** The same tools by name: a call looks its tool up once per call. */
  #byName = new Map<string, CheckedTool>();
  #closed = false;
  #refreshes = 0;
  readonly #waiters: { readonly after: number; readonly resolve: () => void }[] = [];
  readonly #cancel = new CancelWatch(() => {
    void this.close();
  });

  private constructor(record: ServerRecord, client: Client, transport: Transport) {
    this.#record = record;
    this.#client = client;
    this.#transport = transport;
  }

  static async open(start: SessionStart): Promise<Result<GatewayError, ServerSession>> {
    const transport = await transportFor(start);
    if (transport._tag === 'Left') return transport;
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session = new ServerSession(start.record, client, transport.right);
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await session.refresh();
    });
    transport.right.onclose = () => {
      session.#closed = true;
      session.#cancel.dispose();
    };
    try {
      await client.connect(transport.right, { timeout: Math.max(START_TIMEOUT_MS, start.record.timeoutMs) });
      await session.refresh(Math.max(START_TIMEOUT_MS, start.record.timeoutMs));
    } catch (error) {
      await session.close();
      return err(gatewayError('StartFailed', `server ${start.record.name} did not start: ${(error as Error).message}`));
    }
    return ok(session);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The live tools, each checked against its pin. */
  tools(): readonly CheckedTool[] {
    return this.#tools;
  }

  /** The live tool of that name, checked against its pin; undefined when the server lists none. */
  tool(name: string): CheckedTool | undefined {
    return this.#byName.get(name);
  }

  /**
   * Re-reads the tool list (after `list_changed`); a changed definition turns `changed` here. Each
   * definition is hashed here, once per listing, never per call: a call re-checks the pins against
   * the hash stored with the listing, so a new listing is what a changed definition has to pass.
   */
  async refresh(timeoutMs = this.#record.timeoutMs): Promise<void> {
    const listed = await this.#client.listTools(undefined, { timeout: timeoutMs });
    const tools = listed.tools.map((tool) => checkTool(this.#record, tool as LiveTool));
    // A server that lists a name twice: the first one counts, as tools().find would have it.
    const byName = new Map<string, CheckedTool>();
    for (const checked of tools) if (!byName.has(checked.tool.name)) byName.set(checked.tool.name, checked);
    this.#tools = tools;
    this.#byName = byName;
    this.#refreshes += 1;
    for (const waiter of this.#waiters.splice(0))
      if (this.#refreshes > waiter.after) waiter.resolve();
      else this.#waiters.push(waiter);
  }

  /** How many times the tool list was read (start-up, then each `list_changed`). */
  get refreshes(): number {
    return this.#refreshes;
  }

  /** Resolves once the tool list has been read more than `after` times: a handshake for list_changed. */
  refreshedAfter(after: number): Promise<void> {
    if (this.#refreshes > after) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ after, resolve }));
  }

  /**
   * Cancellation stops the server, as a timeout does: a cancelled call may still be working. The SDK
   * gets no signal (it would keep a listener on it for good, and a signal of our own per call — an
   * AbortController — costs more than the rest of the gateway's per-call work); the session's
   * CancelWatch closes the session instead, which rejects the pending request.
   */
  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallOutcome> {
    const timeoutMs = this.#record.timeoutMs;
    if (signal.aborted) {
      await this.close();
      return { kind: 'failed', message: CANCELLED };
    }
    this.#cancel.begin(signal);
    try {
      const result = await this.#client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
      // An answer that raced the cancellation is dropped: the server is being stopped.
      if (signal.aborted) return { kind: 'failed', message: CANCELLED };
      return { kind: 'result', result: result as Record<string, unknown> };
    } catch (error) {
      const timedOut = /timed out|timeout/i.test((error as Error).message) && !signal.aborted;
      // A server that did not answer in time, or a cancelled call, may still be working: stop it.
      await this.close();
      if (timedOut) return { kind: 'timeout', timeoutMs };
      return { kind: 'failed', message: signal.aborted ? CANCELLED : (error as Error).message };
    } finally {
      this.#cancel.end(signal);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#cancel.dispose();
    try {
      await this.#client.close();
    } finally {
      await this.#transport.close();
    }
  }
}
