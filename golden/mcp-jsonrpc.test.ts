/**
 * The built `crustcore mcp` answers what a real client gets wrong with the
 * JSON-RPC errors the MCP spec (2025-11-25) documents, and keeps serving:
 *
 *   raw bytes on stdin:   not JSON → -32700; JSON that is not a JSON-RPC 2.0
 *                         message, or a batch → -32600; a line over the
 *                         message bound → -32600; an unknown method → -32601
 *   official SDK client:  an unknown tool → -32602; arguments that do not fit
 *                         the published schema → -32602 naming what to send;
 *                         a bound crossed inside well-typed arguments → a tool
 *                         error (`invalid-input`) the model can correct
 *
 * CONTROL: the SDK's own McpServer over its own stdio transport, fed the same
 * malformed line, answers nothing at all (the client would wait for its
 * timeout) — which is why CrustCore's guard answers it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI_ESM, makeRepo, NODE_REPO, REPO_ROOT } from './cli-harness.js';
import { baseEnv, tempDir } from './daemon-harness.js';

const home = tempDir('crustcore-mcp-jsonrpc-');
const env = baseEnv(home);
const box = makeRepo(NODE_REPO);
const children: ChildProcess[] = [];
const clients: Client[] = [];

beforeAll(() => buildCli(), 300_000);
afterAll(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
  rmSync(box.root, { recursive: true, force: true });
});

/** A process speaking newline-delimited JSON-RPC on stdio; replies are read one line at a time. */
interface RawPeer {
  send(data: string | Buffer): void;
  /** The next reply line, parsed (a handshake: resolves when the line arrives). */
  next(): Promise<Record<string, unknown>>;
}

function rawPeer(command: string, args: readonly string[]): RawPeer {
  const child = spawn(command, [...args], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const wake = waiting.shift();
      if (wake === undefined) lines.push(line);
      else wake(line);
    }
  });
  child.stderr?.resume();
  return {
    send: (data) => child.stdin?.write(data),
    next: () =>
      new Promise((resolve, reject) => {
        const take = (line: string): void => {
          try {
            resolve(JSON.parse(line) as Record<string, unknown>);
          } catch (error) {
            reject(error);
          }
        };
        const ready = lines.shift();
        if (ready === undefined) waiting.push(take);
        else take(ready);
      }),
  };
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})}\n`;
const TOOLS_LIST = (id: number): string => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`;
const errorCode = (reply: Record<string, unknown>): unknown => (reply.error as { code?: unknown } | undefined)?.code;
const errorMessage = (reply: Record<string, unknown>): string =>
  String((reply.error as { message?: unknown } | undefined)?.message ?? '');

async function sdkClient(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_ESM, 'mcp', '--dir', box.repo, '--verify', 'node --test', '--ephemeral'],
    env: env as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'crustcore-golden', version: '1.0.0' });
  await client.connect(transport, { timeout: 120_000 });
  clients.push(client);
  return client;
}

/** The code of the JSON-RPC error a call was answered with (it must be one). */
async function rejectionOf(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the call was answered with a result, not a JSON-RPC error');
}

describe('crustcore mcp: JSON-RPC errors over raw stdio', () => {
  it('answers malformed JSON, non-messages, batches, oversized lines and unknown methods, and keeps serving', async () => {
    const peer = rawPeer(process.execPath, [CLI_ESM, 'mcp', '--dir', box.repo, '--ephemeral']);
    peer.send(INITIALIZE);
    expect((await peer.next()).id).toBe(0);
    peer.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

    // Several spellings of "not JSON": truncated, a bare word, trailing garbage, control bytes, invalid UTF-8.
    for (const bad of ['{"jsonrpc":"2.0","id":1,"method":"tools/list"', 'hello', '{"a":1} trailing', '\u0000\u0001']) {
      peer.send(`${bad}\n`);
      const reply = await peer.next();
      expect(errorCode(reply), bad).toBe(-32700);
      expect(reply.id).toBeNull();
      expect(errorMessage(reply)).toMatch(/one JSON-RPC 2\.0 message per line/);
    }
    peer.send(Buffer.from([0xff, 0xfe, 0x7b, 0x0a]));
    expect(errorCode(await peer.next())).toBe(-32700);

    // JSON, but not a JSON-RPC 2.0 message: the id is echoed when there is one.
    const invalid: [string, unknown][] = [
      [JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'tools/list' }), 7],
      [JSON.stringify({ id: 'x8', method: 'tools/list' }), 'x8'],
      [JSON.stringify({ jsonrpc: '2.0', id: 9, method: 42 }), 9],
      [JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: [1, 2] }), 10],
      [JSON.stringify('just a string'), null],
      [JSON.stringify(42), null],
    ];
    for (const [line, id] of invalid) {
      peer.send(`${line}\n`);
      const reply = await peer.next();
      expect(errorCode(reply), line).toBe(-32600);
      expect(reply.id).toBe(id);
    }
    peer.send(`${JSON.stringify([{ jsonrpc: '2.0', id: 11, method: 'tools/list' }])}\n`);
    const batch = await peer.next();
    expect(errorCode(batch)).toBe(-32600);
    expect(errorMessage(batch)).toMatch(/batches/);

    // Over the one-message bound (8 MiB): refused before it is parsed, with the request's id.
    peer.send(
      `${JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'stage_diff', arguments: { diff: 'x'.repeat(8 * 1024 * 1024 + 16) } } })}\n`,
    );
    const oversized = await peer.next();
    expect(errorCode(oversized)).toBe(-32600);
    expect(oversized.id).toBe(12);
    expect(errorMessage(oversized)).toMatch(/limit/);

    peer.send(`${JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'no/such/method', params: {} })}\n`);
    const unknownMethod = await peer.next();
    expect(errorCode(unknownMethod)).toBe(-32601);
    expect(unknownMethod.id).toBe(13);

    // After all of that the server still serves.
    peer.send(TOOLS_LIST(14));
    const listed = await peer.next();
    expect(listed.id).toBe(14);
    expect(((listed.result as { tools: unknown[] }).tools ?? []).length).toBe(8);
  }, 180_000);

  it('CONTROL: the SDK McpServer on its own stdio transport answers a malformed line with nothing', async () => {
    const script = join(home, 'bare-sdk-server.mjs');
    writeFileSync(
      script,
      [
        `import { McpServer } from ${JSON.stringify(join(REPO_ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js'))};`,
        `import { StdioServerTransport } from ${JSON.stringify(join(REPO_ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js'))};`,
        "const server = new McpServer({ name: 'bare', version: '1' }, { capabilities: { tools: {} } });",
        'await server.connect(new StdioServerTransport());',
      ].join('\n'),
    );
    const peer = rawPeer(process.execPath, [script]);
    peer.send(INITIALIZE);
    expect((await peer.next()).id).toBe(0);
    peer.send('{"jsonrpc":"2.0","id":1,"method":"tools/list"\n');
    peer.send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
    // The next line is the ping's answer: the malformed line got none.
    const reply = await peer.next();
    expect(reply.id).toBe(2);
    expect(reply.error).toBeUndefined();
  }, 60_000);
});

describe('crustcore mcp: tool-call errors through the official SDK client', () => {
  let client: Client;
  beforeAll(async () => {
    client = await sdkClient();
  }, 180_000);

  it('an unknown tool is a JSON-RPC error -32602 that lists the tools', async () => {
    for (const name of ['no_such_tool', 'Verify', 'create-task', '']) {
      const rejected = await rejectionOf(client.callTool({ name, arguments: {} }));
      expect(rejected.code, name).toBe(ErrorCode.InvalidParams);
      expect(rejected.message).toMatch(/create_task, stage_diff, verify/);
    }
  }, 60_000);

  it('arguments that do not fit the schema are -32602 saying what to send', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['approve', { task_id: 't_abc' }, /token/],
      ['verify', {}, /task_id/],
      ['create_task', { goal: 42 }, /goal/],
      ['stage_diff', { task_id: 't_abc', diff: ['not', 'text'] }, /diff/],
    ];
    for (const [name, args, names] of cases) {
      const rejected = await rejectionOf(client.callTool({ name, arguments: args }));
      expect(rejected.code, name).toBe(ErrorCode.InvalidParams);
      expect(rejected.message).toMatch(names);
      expect(rejected.message).toMatch(/input schema in tools\/list/);
    }
  }, 60_000);

  it('a bound crossed inside well-typed arguments is a tool error the model can correct', async () => {
    const result = await client.callTool({ name: 'create_task', arguments: { goal: 'g'.repeat(9 * 1024) } });
    expect(result.isError).toBe(true);
    const text = ((result.content ?? []) as { text?: string }[]).map((p) => p.text ?? '').join('');
    expect(text).toMatch(/^invalid-input: goal is 9216 bytes; the limit is 8192 bytes/);
    const badId = await client.callTool({ name: 'status', arguments: { task_id: '../../etc' } });
    expect(badId.isError).toBe(true);
  }, 60_000);
});
