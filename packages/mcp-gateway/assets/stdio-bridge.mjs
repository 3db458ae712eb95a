#!/usr/bin/env node
/**
 * CrustCore MCP stdio bridge. Runs INSIDE the MCP server's sandbox. It
 * connects to the gateway's control socket (in a directory bound into the
 * sandbox), reads one start frame — a JSON line `{"env": {...}}` with the
 * server's variables and the credentials the gateway resolved from the vault
 * — then listens on `data.sock` beside it and says `ready`; the gateway
 * connects, and the bridge starts the MCP server with that very socket as
 * its stdin and stdout (and the variables added). stderr stays the
 * sandbox's. Closing the control connection kills the server.
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
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';

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

/**
 * The data connection: the bridge listens with `pauseOnConnect`, so it never
 * reads a byte of it, and hands the accepted socket to the server as its
 * stdin and stdout — no copying hop per message.
 */
function serveData(command, extraEnv, control) {
  const data = createServer({ pauseOnConnect: true }, (socket) => {
    data.close();
    const child = spawn(command[0], command.slice(1), {
      env: { ...process.env, ...extraEnv },
      stdio: [socket, socket, 'inherit'],
    });
    child.on('error', (error) => fail(`cannot start ${command[0]}: ${error.message}`, EXIT_NOT_STARTED));
    control.on('close', () => child.kill('SIGKILL'));
    child.on('exit', (code, signal) => {
      socket.destroy();
      control.end();
      process.exit(code ?? (signal === null ? 1 : 128 + 9));
    });
  });
  data.on('error', (error) => fail(`data socket: ${error.message}`, EXIT_NOT_STARTED));
  data.listen(join(dirname(control.socketPath), 'data.sock'), () => control.write('ready\n'));
}

function main() {
  const { socketPath, command } = parseArguments(process.argv.slice(2));
  const control = connect(socketPath);
  control.socketPath = socketPath;
  control.on('error', (error) => fail(`gateway socket: ${error.message}`, EXIT_NOT_STARTED));
  let pending = Buffer.alloc(0);
  const onData = (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    const newline = pending.indexOf(10);
    if (newline < 0) {
      if (pending.length > MAX_FRAME_BYTES) fail('start frame too large', EXIT_USAGE);
      return;
    }
    control.off('data', onData);
    let frame;
    try {
      frame = JSON.parse(pending.subarray(0, newline).toString('utf8'));
    } catch {
      fail('bad start frame', EXIT_USAGE);
    }
    const env = frame !== null && typeof frame === 'object' && typeof frame.env === 'object' ? frame.env : {};
    serveData(command, env, control);
  };
  control.on('data', onData);
}

main();
