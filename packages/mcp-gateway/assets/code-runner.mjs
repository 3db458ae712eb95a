#!/usr/bin/env node
/**
 * CrustCore code-mode runner. Runs INSIDE a sandbox of its own (no network, no worktree, no home):
 * it connects to the code-mode endpoint — a Unix socket bound read-only into the sandbox, served by
 * CrustCore's gateway — does the MCP handshake (newline-delimited JSON-RPC: initialize, then
 * tools/list), builds the global `tools` object from the list (`tools.SERVER.TOOL(args)` sends one
 * tools/call) and imports the model's script as an ES module. What the script prints is the result.
 *
 *   node code-runner.mjs /crustcore/mcp/code.sock /crustcore/code/script.mjs
 *
 * Behind the socket every call is planned by the gateway and decided by the kernel; nothing here is
 * trusted, and nothing here holds a credential. Plain JavaScript with only node: builtins, because
 * it is copied into a sandbox that sees no workspace.
 */
import { connect } from 'node:net';
import { pathToFileURL } from 'node:url';

const EXIT_USAGE = 64;
const EXIT_NO_ENDPOINT = 69;
/** A line from CrustCore is bounded there (results are cut at 16 000 characters); this is a backstop. */
const MAX_BUFFER_CHARS = 16 * 1024 * 1024;

function fail(message, code) {
  process.stderr.write(`crustcore-code-runner: ${message}\n`);
  process.exit(code);
}

const [socketPath, scriptPath] = process.argv.slice(2);
if (socketPath === undefined || scriptPath === undefined || process.argv.length !== 4)
  fail('usage: code-runner.mjs SOCKET SCRIPT', EXIT_USAGE);

const socket = connect(socketPath);
const pending = new Map();
let nextId = 0;
let buffered = '';

function settle(line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const waiter = pending.get(message?.id);
  if (waiter === undefined) return; // a notification, or an answer to nothing we asked
  pending.delete(message.id);
  if (message.error !== undefined) waiter.reject(new Error(String(message.error?.message ?? 'error')));
  else waiter.resolve(message.result);
}

socket.setEncoding('utf8');
socket.on('data', (chunk) => {
  buffered += chunk;
  if (buffered.length > MAX_BUFFER_CHARS) fail('an answer over the size bound', EXIT_NO_ENDPOINT);
  for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (line.trim() !== '') settle(line);
  }
});
socket.on('close', () => {
  for (const waiter of pending.values()) waiter.reject(new Error('CrustCore closed the tool connection'));
  pending.clear();
});

function send(message) {
  socket.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

function request(method, params) {
  nextId += 1;
  const id = nextId;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });
}

/** A tool result as the script sees it: its text; an error result (or a refusal) throws. */
function resultText(result) {
  const items = Array.isArray(result?.content) ? result.content : [];
  const text = items
    .filter((item) => item?.type === 'text' && typeof item.text === 'string')
    .map((item) => item.text)
    .join('\n');
  if (result?.isError === true) throw new Error(text === '' ? 'the tool call failed' : text);
  return text;
}

/** `tools.SERVER.TOOL`, from the endpoint's list (names are `SERVER.TOOL`, both plain identifiers). */
function toolsFrom(listed) {
  const tools = Object.create(null);
  for (const { name } of Array.isArray(listed?.tools) ? listed.tools : []) {
    const dot = typeof name === 'string' ? name.indexOf('.') : -1;
    if (dot <= 0) continue;
    const server = name.slice(0, dot);
    tools[server] ??= Object.create(null);
    tools[server][name.slice(dot + 1)] = async (args = {}) =>
      resultText(await request('tools/call', { name, arguments: args }));
  }
  for (const server of Object.keys(tools)) Object.freeze(tools[server]);
  return Object.freeze(tools);
}

await new Promise((resolve) => {
  socket.once('connect', resolve);
  socket.once('error', (error) => fail(`no tool endpoint: ${error.message}`, EXIT_NO_ENDPOINT));
});
await request('initialize', {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'crustcore-code-runner', version: '1.0.0' },
});
send({ method: 'notifications/initialized' });
globalThis.tools = toolsFrom(await request('tools/list', {}));

try {
  await import(pathToFileURL(scriptPath).href);
} catch (error) {
  process.stderr.write(
    `the script failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
}
// Whatever the script left running (a timer, a call it did not await) ends with it.
socket.end();
process.exit();
