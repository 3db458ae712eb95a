#!/usr/bin/env node
/**
 * CrustCore setup bridge. Runs INSIDE the setup sandbox, whose network
 * namespace has only loopback. Package managers speak TCP to a proxy, so
 * this script listens on 127.0.0.1:PORT inside and pipes each connection to
 * the host's registry proxy through a Unix socket bound into the sandbox.
 * The proxy, not this script, decides where a connection may go. Then it
 * starts the setup command as its child and exits with its status.
 *
 *   node setup-bridge.mjs PORT SOCKET -- program arg…
 *
 * Plain JavaScript with node: builtins only: the sandbox sees no workspace.
 * It lives outside `src/` because it is sandboxed code (the rule that only
 * the sandbox runner may spawn processes is about host code).
 */
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

const [portText, socketPath, separator, program, ...args] = process.argv.slice(2);
const port = Number(portText);
if (
  !Number.isInteger(port) ||
  port < 1 ||
  port > 65535 ||
  !socketPath?.startsWith('/') ||
  separator !== '--' ||
  !program
) {
  process.stderr.write('crustcore-setup-bridge: usage: PORT SOCKET -- program…\n');
  process.exit(64);
}

const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
});
server.maxConnections = 64;
server.on('error', (error) => {
  process.stderr.write(`crustcore-setup-bridge: cannot listen: ${error.message}\n`);
  process.exit(127);
});
server.listen(port, '127.0.0.1', () => {
  const child = spawn(program, args, { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`crustcore-setup-bridge: cannot start ${program}: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    server.close();
    process.exit(code ?? (signal === 'SIGKILL' ? 137 : 143));
  });
});
