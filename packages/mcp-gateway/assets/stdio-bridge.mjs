#!/usr/bin/env node
/**
 * CrustCore MCP stdio bridge. Runs INSIDE the MCP server's sandbox. It
 * connects to the gateway's Unix socket (bound into the sandbox), reads one
 * start frame — a JSON line `{"env": {...}}` with the variables the gateway
 * resolved from the vault — then starts the MCP server as its child with
 * those variables added, and pipes the socket to the child's stdin and the
 * child's stdout to the socket, byte for byte. stderr stays the sandbox's.
 *
 *   node stdio-bridge.mjs --socket /crustcore/mcp/gateway.sock -- program arg…
 *
 * Why a bridge: the sandbox runner hands its children fixed stdin bytes, and
 * credentials never go through the sandbox's environment sanitizer (which
 * rightly drops them); the bridge is the last hop before the one process
 * that needs them. Plain JavaScript with only node: builtins, because it is
 * copied into a sandbox that sees no workspace. It lives outside `src/` on
 * purpose (like the workers' bridge): the rule that only the sandbox runner
 * imports node:child_process is about host code.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';

const EXIT_USAGE = 64;
const EXIT_NOT_STARTED = 127;
const MAX_FRAME_BYTES = 256 * 1024;

function fail(message, code) {
  process.stderr.write(`crustcore-mcp-bridge: ${message}\n`);
  process.exit(code);
}

function parseArguments(argv) {
  const separator = argv.indexOf('--');
  if (separator !== 2 || argv[0] !== '--socket' || separator === argv.length - 1)
    fail('usage: --socket PATH -- program…', EXIT_USAGE);
  return { socketPath: argv[1], command: argv.slice(separator + 1) };
}

function startServer(command, extraEnv, socket) {
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, ...extraEnv },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.on('error', (error) => fail(`cannot start ${command[0]}: ${error.message}`, EXIT_NOT_STARTED));
  socket.pipe(child.stdin);
  child.stdout.pipe(socket);
  child.stdin.on('error', () => {});
  socket.on('close', () => child.kill('SIGKILL'));
  child.on('exit', (code, signal) => {
    socket.end();
    process.exit(code ?? (signal === null ? 1 : 128 + 9));
  });
}

function main() {
  const { socketPath, command } = parseArguments(process.argv.slice(2));
  const socket = connect(socketPath);
  socket.on('error', (error) => fail(`gateway socket: ${error.message}`, EXIT_NOT_STARTED));
  let pending = Buffer.alloc(0);
  const onData = (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    const newline = pending.indexOf(10);
    if (newline < 0) {
      if (pending.length > MAX_FRAME_BYTES) fail('start frame too large', EXIT_USAGE);
      return;
    }
    socket.off('data', onData);
    socket.pause();
    let frame;
    try {
      frame = JSON.parse(pending.subarray(0, newline).toString('utf8'));
    } catch {
      fail('bad start frame', EXIT_USAGE);
    }
    const rest = pending.subarray(newline + 1);
    if (rest.length > 0) socket.unshift(rest);
    const env = frame !== null && typeof frame === 'object' && typeof frame.env === 'object' ? frame.env : {};
    startServer(command, env, socket);
    socket.resume();
  };
  socket.on('data', onData);
}

main();
