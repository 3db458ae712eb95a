/**
 * The setup sandbox's only way out: an HTTP proxy on a Unix socket (bound
 * into the sandbox and reached through the in-sandbox bridge) that opens
 * connections to the allowlisted registry origins and nothing else. HTTPS
 * goes through `CONNECT host:port` (TLS stays end to end, the proxy sees no
 * content); a plain-HTTP registry through absolute-form requests
 * (`GET http://host:port/path`). Any other target gets 403 and is counted.
 */
import { rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { err, ok, type Result } from '@crustcore/kernel';

/** One allowed origin: exact host name (lower case) and port. */
export interface ProxyOrigin {
  readonly host: string;
  readonly port: number;
}

export interface RegistryProxy {
  readonly socketPath: string;
  /** Targets refused so far (`host:port`), for the setup report. */
  readonly refused: readonly string[];
  close(): Promise<void>;
}

const MAX_HEAD_BYTES = 16 * 1024;
const MAX_CONNECTIONS = 64;

/** The registry origin of a URL (`https://registry.npmjs.org/` → registry.npmjs.org:443), or null. */
export function originOf(url: string): ProxyOrigin | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return { host: parsed.hostname.toLowerCase().replace(/^\[|\]$/g, ''), port };
}

function parseTarget(head: string): { target: ProxyOrigin; rewritten: string | null } | null {
  const firstLine = head.slice(0, head.indexOf('\r\n'));
  const [method, uri, version] = firstLine.split(' ');
  if (method === undefined || uri === undefined || version === undefined) return null;
  if (method === 'CONNECT') {
    const match = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})$/.exec(uri);
    if (match === null) return null;
    return {
      target: { host: (match[1] as string).toLowerCase().replace(/^\[|\]$/g, ''), port: Number(match[2]) },
      rewritten: null,
    };
  }
  if (!uri.startsWith('http://')) return null;
  const origin = originOf(uri);
  if (origin === null) return null;
  const url = new URL(uri);
  return {
    target: origin,
    rewritten: `${method} ${url.pathname}${url.search} ${version}${head.slice(firstLine.length)}`,
  };
}

const allowed = (origins: readonly ProxyOrigin[], target: ProxyOrigin): boolean =>
  origins.some((origin) => origin.host === target.host && origin.port === target.port);

function handle(client: Socket, origins: readonly ProxyOrigin[], refused: string[]): void {
  let buffered = Buffer.alloc(0);
  client.on('error', () => client.destroy());
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf('\r\n\r\n');
    if (end < 0) {
      if (buffered.length > MAX_HEAD_BYTES) client.end('HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n');
      return;
    }
    client.off('data', onData);
    client.pause();
    const head = buffered.subarray(0, end + 4).toString('latin1');
    const rest = buffered.subarray(end + 4);
    const parsed = parseTarget(head);
    if (parsed === null || !allowed(origins, parsed.target)) {
      refused.push(parsed === null ? 'malformed request' : `${parsed.target.host}:${parsed.target.port}`);
      client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const upstream = connect(parsed.target.port, parsed.target.host);
    upstream.on('error', () => {
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.on('connect', () => {
      if (parsed.rewritten === null) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      else upstream.write(Buffer.from(parsed.rewritten, 'latin1'));
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };
  client.on('data', onData);
}

/** Starts the proxy on `socketPath` (created 0600 by umask of the directory the caller made private). */
export async function startRegistryProxy(
  socketPath: string,
  origins: readonly ProxyOrigin[],
): Promise<Result<string, RegistryProxy>> {
  const refused: string[] = [];
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    handle(client, origins, refused);
  });
  server.maxConnections = MAX_CONNECTIONS;
  const listened = await new Promise<string | null>((resolve) => {
    server.once('error', (error) => resolve(error.message));
    server.listen(socketPath, () => resolve(null));
  });
  if (listened !== null) return err(`registry proxy cannot listen on ${socketPath}: ${listened}`);
  return ok({
    socketPath,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        // Open tunnels would keep close() waiting: the setup is over, end them.
        for (const socket of open) socket.destroy();
        server.close(() => {
          rmSync(socketPath, { force: true });
          resolve();
        });
      }),
  });
}
