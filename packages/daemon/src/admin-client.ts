/**
 * Client side of the admin socket: one request, one reply, with a deadline.
 * Failures to connect are values that say what to do (start the daemon, or
 * pass the right --state-dir).
 */
import { createConnection } from 'node:net';
import { ADMIN_LIMITS, type AdminReply, decodeAdminReply } from './admin-protocol.js';

export type AdminCallError =
  | { readonly _tag: 'NoDaemon'; readonly socketPath: string; readonly message: string }
  | { readonly _tag: 'AdminTimeout'; readonly socketPath: string; readonly message: string }
  | { readonly _tag: 'BadReply'; readonly socketPath: string; readonly message: string };

export type AdminCallResult =
  | { readonly _tag: 'Right'; readonly right: AdminReply }
  | { readonly _tag: 'Left'; readonly left: AdminCallError };

export function callAdmin(
  socketPath: string,
  request: Readonly<Record<string, unknown>>,
  options: { readonly timeoutMs?: number } = {},
): Promise<AdminCallResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve) => {
    let settled = false;
    let buffer = '';
    const socket = createConnection(socketPath);
    const finish = (result: AdminCallResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () =>
        finish({
          _tag: 'Left',
          left: { _tag: 'AdminTimeout', socketPath, message: `no reply from ${socketPath} within ${timeoutMs} ms` },
        }),
      timeoutMs,
    );
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > ADMIN_LIMITS.maxReplyBytes + 1) {
        finish({ _tag: 'Left', left: { _tag: 'BadReply', socketPath, message: 'the reply is too large' } });
        return;
      }
      const newline = buffer.indexOf('\n');
      if (newline === -1) return;
      const reply = decodeAdminReply(buffer.slice(0, newline));
      finish(
        reply === null
          ? { _tag: 'Left', left: { _tag: 'BadReply', socketPath, message: 'the reply is not an admin reply' } }
          : { _tag: 'Right', right: reply },
      );
    });
    socket.once('error', (error: NodeJS.ErrnoException) =>
      finish({
        _tag: 'Left',
        left: {
          _tag: 'NoDaemon',
          socketPath,
          message:
            error.code === 'ENOENT' || error.code === 'ECONNREFUSED'
              ? `nothing is listening on ${socketPath}; start it with "crustcore daemon" (or pass the --state-dir it uses)`
              : `cannot reach ${socketPath}: ${error.code ?? error.message}`,
        },
      }),
    );
    socket.once('end', () =>
      finish({ _tag: 'Left', left: { _tag: 'BadReply', socketPath, message: 'the server closed without replying' } }),
    );
  });
}
