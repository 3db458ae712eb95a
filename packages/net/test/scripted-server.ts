/**
 * Scripted model servers on 127.0.0.1 for the provider matrix. Each test
 * starts a node:http server whose handler decides, per request, what bytes
 * go out: real SSE frames of the protocol under test, an HTTP error, a cut-off
 * stream, or headers and then silence.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly json: unknown;
}

export type Handler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface ScriptedServer {
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Replaces the handler for the following requests. */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function startServer(initial: Handler): Promise<ScriptedServer> {
  let handler = initial;
  const requests: RecordedRequest[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body,
        json,
      };
      requests.push(recorded);
      open.add(response);
      response.on('close', () => open.delete(response));
      void Promise.resolve(handler(recorded, response)).catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => {
      handler = next;
    },
    close: async () => {
      for (const response of open) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ─── response scripts ─────────────────────────────────────────────────────

export interface Frame {
  readonly event?: string;
  readonly data: unknown;
}

export const encodeFrame = (frame: Frame): string =>
  `${frame.event === undefined ? '' : `event: ${frame.event}\n`}data: ${typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data)}\n\n`;

/** Sends frames as separate writes (so the client sees several chunks), then ends — or cuts off. */
export function sse(
  frames: readonly Frame[],
  options: { readonly cutAfterBytes?: number; readonly tail?: string } = {},
): Handler {
  return async (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let text = frames.map(encodeFrame).join('') + (options.tail ?? '');
    if (options.cutAfterBytes !== undefined) text = text.slice(0, options.cutAfterBytes);
    const pieces = text.match(/[\s\S]{1,97}/g) ?? [];
    for (const piece of pieces) {
      response.write(piece);
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  };
}

/** Frames minus the last `drop`, as a stream that closes cleanly: a truncated answer. */
export const truncated = (frames: readonly Frame[], drop = 1): Handler => sse(frames.slice(0, frames.length - drop));

export const httpError =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

/** Headers, then nothing, forever (until the client gives up and the test closes the server). */
export const stall: Handler = (_request, response) => {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.flushHeaders();
};

/** Runs the handlers in order, one per request; the last repeats. */
export function sequence(...handlers: Handler[]): Handler {
  let index = 0;
  return (request, response) => {
    const handler = handlers[Math.min(index, handlers.length - 1)]!;
    index += 1;
    return handler(request, response);
  };
}
