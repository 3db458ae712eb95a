/**
 * An MCP server of CrustCore's own on a 0600 Unix socket, for a process in a sandbox (a worker CLI
 * through its stdio bridge, a code-mode script through its runner). What it lists and how a call
 * runs are the caller's (`EndpointTools`): this module only serves them, bounded per connection, so
 * whatever is on the other side cannot grow this process's buffers or calls without end.
 */
import { chmodSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { Transform, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** What an endpoint offers: its tool list and how one call runs (after the SDK decoded the request). */
export interface EndpointTools {
  /** The MCP server name the other side sees. */
  readonly name: string;
  list(): Tool[];
  call(name: string, args: unknown): Promise<CallToolResult>;
}

export type CutOffReason = 'message-too-long' | 'unread-answers';

export interface ToolEndpointOptions {
  readonly tools: EndpointTools;
  /** Told when a connection is cut off for passing a bound (diagnostics; tests wait on it). */
  readonly onCutOff?: (reason: CutOffReason) => void;
}

export interface ToolEndpoint {
  /** Closes every connection and the listener (the socket file goes with it). */
  close(): Promise<void>;
}

/** One client opens one connection; a few more are a misbehaving client, refused. */
const MAX_CONNECTIONS = 4;
/**
 * One JSON-RPC message (a line) may be large — arguments are bounded later, at 64 KiB, by the
 * plan — but never unbounded: a client that sends a longer line loses the connection instead of
 * growing this process's buffer without end.
 */
export const MAX_WORKER_MESSAGE_BYTES = 1024 * 1024;
/** Answers a client has not read, at most: one that sends requests and never reads is cut off. */
export const MAX_UNREAD_ANSWER_BYTES = 4 * 1024 * 1024;
/** Tool calls one connection may have running at once (each holds a kernel call and a server call). */
export const MAX_CALLS_IN_FLIGHT = 8;

export const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * The answers' way to the socket: a client that does not read them loses the connection once more
 * than the bound waits, checked on every answer (not only when the client sends again).
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
function boundedLines(socket: Socket, cutOff: (reason: CutOffReason) => void): Transform {
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

function serveConnection(socket: Socket, options: ToolEndpointOptions): Server {
  const { tools } = options;
  const server = new Server({ name: tools.name, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.list() }));
  let inFlight = 0;
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (inFlight >= MAX_CALLS_IN_FLIGHT)
      return errorResult(`more than ${MAX_CALLS_IN_FLIGHT} calls at once; wait for one to finish`);
    inFlight += 1;
    try {
      return await tools.call(request.params.name, request.params.arguments ?? {});
    } finally {
      inFlight -= 1;
    }
  });
  const cutOff = (reason: CutOffReason): void => {
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
export async function serveToolEndpoint(socketPath: string, options: ToolEndpointOptions): Promise<ToolEndpoint> {
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
