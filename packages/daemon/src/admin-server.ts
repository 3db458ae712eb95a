/**
 * The local admin socket: a Unix socket under the state directory, mode 0600
 * in a 0700 directory, so only the user who runs the daemon can talk to it.
 * Never a TCP port: a network bind would hand control of the queue (and of
 * approvals) to anything that can reach the port.
 *
 * Line-delimited JSON (see admin-protocol.ts). Every bound is enforced here:
 * request line length, concurrent connections, idle time. A handler that
 * throws produces an `internal` error reply; the server keeps serving.
 */
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import {
  ADMIN_LIMITS,
  type AdminReply,
  type AdminRequest,
  adminError,
  decodeAdminRequest,
  encodeAdminReply,
} from './admin-protocol.js';

/** sun_path is 108 bytes on Linux, including the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

export type AdminHandler = (request: AdminRequest) => Promise<AdminReply>;

export interface AdminServer {
  readonly socketPath: string;
  close(): Promise<void>;
}

export class AdminSocketError extends Error {
  override readonly name = 'AdminSocketError';
}

/** True when something answers on `socketPath` (a live daemon), false for a stale file. */
function socketIsLive(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(socketPath);
    const done = (live: boolean): void => {
      probe.destroy();
      resolve(live);
    };
    probe.once('connect', () => done(true));
    probe.once('error', () => done(false));
    probe.setTimeout(1_000, () => done(false));
  });
}

async function clearStaleSocket(socketPath: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(socketPath).isSocket();
  } catch {
    return;
  }
  if (!isSocket)
    throw new AdminSocketError(`${socketPath} exists and is not a socket; remove it or pick another --state-dir`);
  if (await socketIsLive(socketPath)) {
    throw new AdminSocketError(
      `another process is serving ${socketPath} (a daemon already runs with this --state-dir)`,
    );
  }
  unlinkSync(socketPath);
}

function serveConnection(socket: Socket, handle: AdminHandler): void {
  socket.setEncoding('utf8');
  socket.setTimeout(ADMIN_LIMITS.idleTimeoutMs, () => socket.destroy());
  let buffer = '';
  let discarding = false;
  // Replies go out in request order even when handlers finish out of order.
  let chain: Promise<void> = Promise.resolve();
  const reply = (work: () => Promise<AdminReply>): void => {
    const result = work().catch(
      (error: unknown): AdminReply =>
        adminError('internal', error instanceof Error ? error.message.slice(0, 2_000) : 'internal error'),
    );
    chain = chain.then(async () => {
      const line = encodeAdminReply(await result);
      if (!socket.destroyed) socket.write(line);
    });
  };
  const onLine = (line: string): void => {
    if (line.trim() === '') return;
    const decoded = decodeAdminRequest(line);
    if (decoded._tag === 'Left') {
      const refused = decoded.left;
      reply(async () => refused);
      return;
    }
    const request = decoded.right;
    const echo = request.requestId === undefined ? {} : { requestId: request.requestId };
    reply(async () => ({ ...(await handle(request)), ...echo }));
  };
  socket.on('data', (chunk: string) => {
    let text = chunk;
    while (text.length > 0) {
      const newline = text.indexOf('\n');
      const piece = newline === -1 ? text : text.slice(0, newline);
      text = newline === -1 ? '' : text.slice(newline + 1);
      if (!discarding) buffer += piece;
      if (Buffer.byteLength(buffer, 'utf8') > ADMIN_LIMITS.maxRequestBytes) {
        // Too long: answer once, then skip the rest of this line.
        if (!discarding) {
          reply(async () =>
            adminError('too-large', `a request line may be at most ${ADMIN_LIMITS.maxRequestBytes} bytes`),
          );
        }
        discarding = true;
        buffer = '';
      }
      if (newline !== -1) {
        if (!discarding) onLine(buffer.replace(/\r$/, ''));
        buffer = '';
        discarding = false;
      }
    }
  });
  socket.on('error', () => socket.destroy());
}

/**
 * Listens on `socketPath`. The parent directory is created 0700; the socket
 * is bound under a 0177 umask (so it is born 0600) and chmodded again after.
 */
export async function startAdminServer(socketPath: string, handle: AdminHandler): Promise<AdminServer> {
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new AdminSocketError(
      `the admin socket path ${socketPath} is longer than ${MAX_SOCKET_PATH_BYTES} bytes; use a shorter --state-dir`,
    );
  }
  mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
  chmodSync(dirname(socketPath), 0o700);
  await clearStaleSocket(socketPath);
  const connections = new Set<Socket>();
  const server: Server = createServer((socket) => {
    if (connections.size >= ADMIN_LIMITS.maxConnections) {
      socket.end(encodeAdminReply(adminError('refused', 'too many admin connections')));
      return;
    }
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    serveConnection(socket, handle);
  });
  server.maxConnections = ADMIN_LIMITS.maxConnections + 1;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const previous = process.umask(0o177);
    try {
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
  chmodSync(socketPath, 0o600);
  let closed = false;
  return {
    socketPath,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const socket of connections) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      try {
        unlinkSync(socketPath);
      } catch {
        // Already gone (server.close removes it on some platforms).
      }
    },
  };
}
