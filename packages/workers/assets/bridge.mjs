#!/usr/bin/env node
/**
 * CrustCore model bridge. Runs INSIDE the worker sandbox, which has no
 * network: only loopback in its own network namespace. Agent CLIs speak TCP
 * to their model endpoint, so this script listens on 127.0.0.1:PORT inside
 * the sandbox and pipes every connection, byte for byte, to the host's model
 * proxy through a Unix socket bound into the sandbox. It then starts the CLI
 * as its child (same stdin, stdout, stderr, environment) and exits with the
 * child's status.
 *
 *   node bridge.mjs --listen 127.0.0.1:PORT --socket /path/model.sock -- program arg…
 *
 * It holds no credential and cannot add one: the host proxy injects the key
 * on its side of the socket. Plain JavaScript with no imports outside
 * node: builtins, because it is copied into a sandbox that sees no workspace.
 * It lives outside `src/` on purpose: CrustCore's rule that only the sandbox
 * runner may import node:child_process is about host code, and this file is
 * sandboxed code that the runner starts.
 */
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

const MAX_CONNECTIONS = 64;
const EXIT_USAGE = 64;
const EXIT_NOT_STARTED = 127;
const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

function fail(message, code) {
  process.stderr.write(`crustcore-bridge: ${message}\n`);
  process.exit(code);
}

function parseArguments(argv) {
  const separator = argv.indexOf('--');
  if (separator < 0 || separator === argv.length - 1)
    fail('usage: --listen HOST:PORT --socket PATH -- program…', EXIT_USAGE);
  const options = argv.slice(0, separator);
  const command = argv.slice(separator + 1);
  let listen = null;
  let socketPath = null;
  for (let index = 0; index < options.length; index += 2) {
    const name = options[index];
    const value = options[index + 1];
    if (value === undefined) fail(`missing value for ${name}`, EXIT_USAGE);
    if (name === '--listen') listen = value;
    else if (name === '--socket') socketPath = value;
    else fail(`unknown option ${name}`, EXIT_USAGE);
  }
  const match = /^(127\.0\.0\.1):([0-9]{1,5})$/.exec(listen ?? '');
  // Loopback only: the bridge must never accept connections from outside the sandbox's namespace.
  if (match === null) fail('--listen must be 127.0.0.1:PORT', EXIT_USAGE);
  const port = Number(match[2]);
  if (port < 1 || port > 65535) fail('port out of range', EXIT_USAGE);
  if (socketPath === null || !socketPath.startsWith('/')) fail('--socket must be an absolute path', EXIT_USAGE);
  return { host: match[1], port, socketPath, command };
}

const { host, port, socketPath, command } = parseArguments(process.argv.slice(2));

const server = createServer({ allowHalfOpen: true }, (client) => {
  const upstream = connect(socketPath);
  // Either side failing ends both: a half-dead pair would leave the CLI waiting forever.
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
});
server.maxConnections = MAX_CONNECTIONS;
server.on('error', (error) => fail(`cannot listen on ${host}:${port}: ${error.message}`, EXIT_NOT_STARTED));

server.listen(port, host, () => {
  const [program, ...args] = command;
  const child = spawn(program, args, { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('error', (error) => fail(`cannot start ${program}: ${error.message}`, EXIT_NOT_STARTED));
  child.on('exit', (code, signal) => {
    server.close();
    process.exit(code ?? 128 + (SIGNAL_NUMBERS[signal] ?? 0));
  });
});
