/**
 * The endpoint a worker CLI reaches (worker-endpoint.ts), driven by the official SDK client through
 * the real in-sandbox bridge (packages/workers/assets/mcp-bridge.mjs), in front of our fixture
 * server behind the real gateway. The gate here is a recording stand-in for the task's kernel (the
 * golden test golden/workers-mcp.test.ts runs the real one): what matters is that every call is
 * handed to it, and that nothing runs when it refuses.
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MCP_BRIDGE_SCRIPT_PATH } from '../../workers/src/bridge-script.js';
import {
  MAX_UNREAD_ANSWER_BYTES,
  MAX_WORKER_MESSAGE_BYTES,
  serveWorkerEndpoint,
  type WorkerEndpoint,
} from '../src/gateway/worker-endpoint.js';
import { registryPath, workerMcpServers, writeRegistry } from '../src/index.js';
import {
  approveAll,
  copyServerScript,
  FIXTURE_SERVER,
  makeGateway,
  makeWorktree,
  recordingGate,
  stdioRecord,
} from './gateway-harness.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function endpoint(refuse: string | null = null) {
  const worktree = makeWorktree();
  const base = stdioRecord('fixture', [FIXTURE_SERVER]);
  const approved = await approveAll(base, worktree, (tool) => (tool === 'hang' ? 'deny' : 'allow'));
  const { gateway } = makeGateway([approved], worktree);
  const { gate, calls } = recordingGate(refuse);
  const socket = join(realpathSync(mkdtempSync(join(tmpdir(), 'mcp-ep-'))), 'fixture.sock');
  const served: WorkerEndpoint = await serveWorkerEndpoint(socket, { gateway, server: 'fixture', gate });
  closing.push(async () => {
    await served.close();
    await gateway.close();
  });
  return { socket, calls };
}

/** The SDK client as a worker CLI runs it: the bridge is its stdio server. */
async function client(socket: string): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [MCP_BRIDGE_SCRIPT_PATH, socket] });
  const sdk = new Client({ name: 'worker-cli', version: '1.0.0' });
  await sdk.connect(transport);
  closing.push(() => sdk.close());
  return sdk;
}

describe('the endpoint a worker reaches', () => {
  it('lists the approved tools from the pins (the denied one is not offered) and hands each call to the gate', async () => {
    const { socket, calls } = await endpoint();
    const sdk = await client(socket);
    const names = (await sdk.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toContain('greet');
    expect(names).not.toContain('hang');
    const result = await sdk.callTool({ name: 'greet', arguments: { name: 'ada' } });
    expect(JSON.stringify(result.content)).toContain('hello ada');
    expect(JSON.stringify(result.content)).toContain('untrusted-data');
    expect(calls.map((call) => [call.tool, call.operation])).toEqual([
      [
        'mcp__fixture__greet',
        { op: 'exec', argv: ['mcp', 'fixture', 'greet'], cwd: '.', profile: 'mcp', recognizedRunner: false },
      ],
    ]);
    // A denied tool is refused by the plan before the gate is asked.
    const denied = await sdk.callTool({ name: 'hang', arguments: {} });
    expect(denied.isError).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it('a refusal of the gate comes back as an error result, and the tool never runs', async () => {
    const { socket, calls } = await endpoint('supervised profile: ask exec; no one can be asked, so denied');
    const sdk = await client(socket);
    const result = await sdk.callTool({ name: 'greet', arguments: { name: 'ada' } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('CrustCore refused this call: supervised profile');
    expect(JSON.stringify(result.content)).not.toContain('hello ada');
    expect(calls).toHaveLength(1);
  });

  it('a worker that sends requests and never reads the answers is cut off; CONTROL: a new connection works', async () => {
    const { socket } = await endpoint();
    const raw = connect(socket);
    const closed = new Promise<void>((resolve) => raw.on('close', () => resolve()));
    raw.on('error', () => undefined);
    raw.pause(); // never reads: the answers pile up on CrustCore's side
    const request = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`;
    // Enough requests that their answers pass the bound many times over, sent in batches as the socket drains.
    const answerBytes = 200;
    const total = Math.ceil((4 * MAX_UNREAD_ANSWER_BYTES) / answerBytes);
    for (let id = 0; id < total && !raw.destroyed; id += 1000) {
      const batch = Array.from({ length: 1000 }, (_, k) => request(id + k)).join('');
      if (!raw.write(batch))
        await new Promise<void>((resolve) => raw.once('drain', () => resolve()).once('close', () => resolve()));
    }
    await closed;
    const sdk = await client(socket);
    expect((await sdk.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('a line over the bound closes that connection; CONTROL: a new connection still works', async () => {
    const { socket } = await endpoint();
    const raw = connect(socket);
    const closed = new Promise<void>((resolve) => raw.on('close', () => resolve()));
    raw.on('error', () => undefined);
    raw.write(Buffer.alloc(MAX_WORKER_MESSAGE_BYTES + 64 * 1024, 0x61));
    await closed;
    const sdk = await client(socket);
    expect((await sdk.listTools()).tools.length).toBeGreaterThan(0);
  });
});

describe('a worker cannot swap the server its endpoint stands for', () => {
  const serverScript = (copy: string): string => copyServerScript(copy);

  /** A repository whose own server (a relative script, started in the worktree) is registered and approved. */
  async function plantable() {
    const worktree = makeWorktree({ 'srv.mjs': serverScript('original') });
    const approved = await approveAll(stdioRecord('local', ['srv.mjs']), worktree);
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-home-')));
    const written = writeRegistry(registryPath(home), { version: 1, servers: [approved] });
    if (written._tag === 'Left') throw new Error(written.left.message);
    return { worktree, home, approved };
  }

  it('the server started before the worker wrote its copy: a call after the swap still reaches the original', async () => {
    const { worktree, home } = await plantable();
    const { gate } = recordingGate();
    const served = await workerMcpServers({ home, env: {}, repository: worktree, names: ['local'], gate });
    if ('problem' in served) throw new Error(served.problem);
    const socket = join(realpathSync(mkdtempSync(join(tmpdir(), 'mcp-ep-'))), '0.sock');
    const server = served.servers[0] as (typeof served.servers)[number];
    const endpoint = await server.serve(socket, worktree);
    closing.push(() => endpoint.close(), server.release);
    writeFileSync(join(worktree, 'srv.mjs'), serverScript('planted by the worker'));
    const sdk = await client(socket);
    const result = JSON.stringify((await sdk.callTool({ name: 'whoami', arguments: {} })).content);
    expect(result).toContain('original');
    expect(result).not.toContain('planted');
  });

  it('a later attempt (a new endpoint on the same worktree) still reaches the server started before the first', async () => {
    const { worktree, home } = await plantable();
    const { gate } = recordingGate();
    const served = await workerMcpServers({ home, env: {}, repository: worktree, names: ['local'], gate });
    if ('problem' in served) throw new Error(served.problem);
    const server = served.servers[0] as (typeof served.servers)[number];
    const first = await server.serve(join(realpathSync(mkdtempSync(join(tmpdir(), 'mcp-ep-'))), '0.sock'), worktree);
    await first.close();
    // Attempt 1's worker swapped the server; attempt 2 gets a new endpoint on the same worktree.
    writeFileSync(join(worktree, 'srv.mjs'), serverScript('planted by the worker'));
    const socket = join(realpathSync(mkdtempSync(join(tmpdir(), 'mcp-ep-'))), '0.sock');
    const second = await server.serve(socket, worktree);
    closing.push(() => second.close(), server.release);
    const sdk = await client(socket);
    const result = JSON.stringify((await sdk.callTool({ name: 'whoami', arguments: {} })).content);
    expect(result).toContain('original');
    expect(result).not.toContain('planted');
  });

  it('CONTROL: a server started lazily, after the swap, runs the planted copy', async () => {
    const { worktree, approved } = await plantable();
    writeFileSync(join(worktree, 'srv.mjs'), serverScript('planted by the worker'));
    const { gateway } = makeGateway([approved], worktree);
    closing.push(() => gateway.close());
    const described = gateway.plan('mcp_describe', { server: 'local', tool: 'whoami' });
    if (described?.kind !== 'plan') throw new Error('describe');
    await described.plan.execute(new AbortController().signal);
    const planned = gateway.plan('mcp__local__whoami', {});
    if (planned?.kind !== 'plan') throw new Error('plan');
    expect((await planned.plan.execute(new AbortController().signal)).text).toContain('planted by the worker');
  });

  /** Live processes whose command line names `text` (the sandbox names the worktree it binds). */
  const processesNaming = (text: string): number =>
    readdirSync('/proc').filter((entry) => {
      if (!/^\d+$/.test(entry)) return false;
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // ended while listed
      }
    }).length;

  it("release (the task's end) stops the servers kept across attempts; a serve after it starts nothing", async () => {
    const { worktree, home } = await plantable();
    const { gate } = recordingGate();
    const served = await workerMcpServers({ home, env: {}, repository: worktree, names: ['local'], gate });
    if ('problem' in served) throw new Error(served.problem);
    const server = served.servers[0] as (typeof served.servers)[number];
    const endpoint = await server.serve(join(realpathSync(mkdtempSync(join(tmpdir(), 'mcp-ep-'))), '0.sock'), worktree);
    await endpoint.close();
    // CONTROL: the attempt's endpoint is closed, yet the server is kept for the next attempt.
    expect(processesNaming(worktree)).toBeGreaterThan(0);
    await server.release();
    expect(processesNaming(worktree)).toBe(0);
    await expect(
      server.serve(join(realpathSync(mkdtempSync(join(tmpdir(), 'mcp-ep-'))), '0.sock'), worktree),
    ).rejects.toThrow(/after its task ended/);
    expect(processesNaming(worktree)).toBe(0);
  });
});
