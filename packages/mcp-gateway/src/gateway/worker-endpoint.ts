/**
 * One of the user's MCP servers as a worker CLI (Codex, Claude Code) sees it: an MCP server on a
 * Unix socket that the worker's sandbox reaches through a small stdio bridge. It is not the user's
 * server: it lists the tools a person approved (the pinned definitions, so listing starts
 * nothing), and every call is planned by the gateway (arguments bounded, the live definition
 * checked against its pin, the result redacted, bounded and wrapped) and goes through the kernel's
 * tool gate (policy, approval, receipt) before it runs. The server's credentials stay here, in the
 * gateway: the worker gets results, never the server or its secrets.
 */
import { chmodSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { Transform, Writable } from 'node:stream';
import type { ToolGate } from '@crustcore/agent';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { callPlan } from './call-plan.js';
import type { GatewayCore } from './gateway-core.js';
import { gatewayToolName } from './tool-names.js';

export interface WorkerEndpointOptions {
  readonly gateway: GatewayCore;
  /** The registered server this endpoint stands for. */
  readonly server: string;
  /** The kernel's gate for the task the worker runs in. */
  readonly gate: ToolGate;
  /** Told when a connection is cut off for passing a bound (diagnostics; tests wait on it). */
  readonly onCutOff?: (reason: 'message-too-long' | 'unread-answers') => void;
}

export interface WorkerEndpoint {
  close(): Promise<void>;
}

/** A worker CLI opens one connection per server; a few more are a misbehaving worker, refused. */
const MAX_CONNECTIONS = 4;
/**
 * One JSON-RPC message (a line) may be large — arguments are bounded later, at 64 KiB, by the
 * plan — but never unbounded: a worker that sends a longer line loses the connection instead of
 * growing this process's buffer without end.
 */
export const MAX_WORKER_MESSAGE_BYTES = 1024 * 1024;

/** Answers a worker has not read, at most: one that sends requests and never reads is cut off. */
export const MAX_UNREAD_ANSWER_BYTES = 4 * 1024 * 1024;
/** Tool calls one connection may have running at once (each holds a kernel call and a server call). */
export const MAX_CALLS_IN_FLIGHT = 8;

/**
 * The answers' way to the socket: a worker that does not read them loses the connection once more
 * than the bound waits, checked on every answer (not only when the worker sends again).
 */
function boundedAnswers(socket: Socket, cutOff: (reason: 'unread-answers') => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!socket.destroyed) {
        socket.write(chunk);
        if (socket.writableLength > MAX_UNREAD_ANSWER_BYTES) cutOff('unread-answers');
      }
      done();
    },
  });
}

/** The socket's bytes, cut off (and the socket closed) at the first line over the bound. */
function boundedLines(socket: Socket, cutOff: (reason: 'message-too-long' | 'unread-answers') => void): Transform {
  let pending = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (socket.writableLength > MAX_UNREAD_ANSWER_BYTES) {
        cutOff('unread-answers');
        done();
        return;
      }
      let start = 0;
      for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, newline + 1)) {
        if (pending + newline - start > MAX_WORKER_MESSAGE_BYTES) break;
        pending = 0;
        start = newline + 1;
      }
      pending += chunk.length - start;
      if (pending > MAX_WORKER_MESSAGE_BYTES) {
        cutOff('message-too-long');
        done();
        return;
      }
      done(null, chunk);
    },
  });
}

const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** The approved tools of `server`, as their pins recorded them (a denied tool is not offered). */
export function approvedTools(gateway: GatewayCore, server: string): Tool[] {
  const record = gateway.record(server);
  if (record === undefined) return [];
  const tools: Tool[] = [];
  for (const [name, pin] of Object.entries(record.tools)) {
    if (pin.policy === 'deny') continue;
    const definition = pin.definition as { description?: unknown; inputSchema?: unknown } | null;
    const schema = definition?.inputSchema;
    const inputSchema =
      typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object'
        ? (schema as Tool['inputSchema'])
        : { type: 'object' as const };
    // Redacted like everything else of the server's the other side sees (a pinned description may hold a secret).
    const text = typeof definition?.description === 'string' ? definition.description.slice(0, 2_000) : '';
    const description = gateway.options.redactor.redactText(text);
    tools.push({ name, description, inputSchema });
  }
  return tools;
}

/** One call: planned by the gateway, decided by the kernel, run only when it says so. */
export async function callThroughGate(
  options: WorkerEndpointOptions,
  tool: string,
  args: unknown,
): Promise<CallToolResult> {
  const object =
    typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const planned = callPlan(options.gateway, options.server, tool, object);
  if (planned.kind === 'invalid') return errorResult(planned.message);
  const outcome = await options.gate.call({
    tool: gatewayToolName(options.server, tool),
    args: JSON.parse(JSON.stringify(object)),
    operation: planned.plan.operation,
    actor: 'agent',
    execute: planned.plan.execute,
  });
  if (outcome.kind === 'result') return { content: [{ type: 'text', text: outcome.output.text }] };
  return errorResult(`CrustCore refused this call: ${outcome.reason}`);
}

function serveConnection(socket: Socket, options: WorkerEndpointOptions): Server {
  const server = new Server({ name: options.server, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: approvedTools(options.gateway, options.server),
  }));
  let inFlight = 0;
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (inFlight >= MAX_CALLS_IN_FLIGHT)
      return errorResult(`more than ${MAX_CALLS_IN_FLIGHT} calls at once; wait for one to finish`);
    inFlight += 1;
    try {
      return await callThroughGate(options, request.params.name, request.params.arguments ?? {});
    } finally {
      inFlight -= 1;
    }
  });
  const cutOff = (reason: 'message-too-long' | 'unread-answers'): void => {
    if (socket.destroyed) return;
    socket.destroy();
    options.onCutOff?.(reason);
  };
  const input = boundedLines(socket, cutOff);
  socket.pipe(input);
  void server.connect(new StdioServerTransport(input, boundedAnswers(socket, cutOff))).catch(() => socket.destroy());
  socket.on('close', () => void server.close().catch(() => undefined));
  socket.on('error', () => socket.destroy());
  return server;
}

/** Listens on `socketPath` (0600) until closed. */
export async function serveWorkerEndpoint(socketPath: string, options: WorkerEndpointOptions): Promise<WorkerEndpoint> {
  const open = new Set<Socket>();
  const listener: NetServer = createServer((socket) => {
    if (open.size >= MAX_CONNECTIONS) {
      socket.destroy();
      return;
    }
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    serveConnection(socket, options);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(socketPath, () => resolve());
  });
  try {
    chmodSync(socketPath, 0o600);
  } catch (error) {
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    throw error;
  }
  return {
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
