#!/usr/bin/env node
/**
 * CrustCore MCP bridge. Runs INSIDE the worker sandbox as the stdio MCP server a worker CLI
 * (Codex, Claude Code) starts: it joins the CLI's stdin and stdout to one of CrustCore's MCP
 * endpoints, a Unix socket bound into the sandbox. Behind the socket is CrustCore's gateway, not
 * the user's server: every call is a kernel tool call there, and the server's credentials never
 * come here.
 *
 *   node mcp-bridge.mjs /crustcore/mcp/NAME.sock
 *
 * Plain JavaScript with node: builtins only, because it runs in a sandbox that sees no workspace.
 */
import { connect } from 'node:net';

const EXIT_USAGE = 64;
const socketPath = process.argv[2];
if (socketPath === undefined || process.argv.length !== 3) {
  process.stderr.write('usage: mcp-bridge.mjs SOCKET\n');
  process.exit(EXIT_USAGE);
}
const socket = connect(socketPath);
process.stdin.pipe(socket);
socket.pipe(process.stdout);
socket.on('error', (error) => {
  process.stderr.write(`crustcore-mcp-bridge: ${error.message}\n`);
  process.exit(1);
});
// The CLI closed its end (it is done with the server) or CrustCore closed the endpoint.
process.stdin.on('end', () => socket.end());
socket.on('close', () => process.exit(0));
