/**
 * MCP gateway (issue #14).
 *
 * 1. Overhead per call: the same fixture server's `greet` tool called by the
 *    official SDK Client directly (StdioClientTransport, the server a plain
 *    child on the host) vs through the gateway (plan → argument bound → pin
 *    check → the sandboxed server over the in-sandbox bridge → redaction,
 *    cut, untrusted wrapper). The kernel's ToolGate is not included: it is
 *    the same for every tool. Target ≤ 1.2×.
 * 1b. The same for a worker CLI's call (`run --mcp`): the SDK client (as the
 *    CLI runs it) → the in-sandbox MCP bridge → CrustCore's worker endpoint
 *    → the gateway → the sandboxed server, against the direct call. The gate
 *    is a pass-through here for the same reason.
 * 2. Context cost with 10 registered, approved, unused servers: the tool
 *    definitions the model is sent, in tokens (CHARS_PER_TOKEN), against a
 *    gateway with no servers. Target: 0 beyond the two meta-tools.
 *
 *   node --conditions=source --import tsx benches/mcp-gateway.bench.ts
 */
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ToolGate } from '@crustcore/agent';
import { CHARS_PER_TOKEN, wrapUntrusted } from '@crustcore/agent';
import {
  approveTools,
  McpGateway,
  type RegistryFile,
  type ServerRecord,
  ServerSession,
  serveWorkerEndpoint,
} from '@crustcore/mcp-gateway';
import { Redactor } from '@crustcore/secrets';
import { MCP_BRIDGE_SCRIPT_PATH } from '@crustcore/workers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type BenchRow, ratio, report, runCases } from './harness.js';

const ROOT = resolve(import.meta.dirname, '..');
const NODE_MODULES = join(ROOT, 'node_modules');
const FIXTURES = join(ROOT, 'packages/mcp-gateway/test/fixtures');
const FIXTURE = join(FIXTURES, 'fixture-server.mjs');

const worktree = realpathSync(mkdtempSync(join(tmpdir(), 'bench-mcp-')));
const base: ServerRecord = {
  name: 'fx',
  transport: { kind: 'stdio', command: 'node', args: [FIXTURE], env: {} },
  trust: 'trusted',
  repositories: ['*'],
  defaultPolicy: 'allow',
  tools: {},
  network: false,
  timeoutMs: 30_000,
  source: 'bench',
  readPaths: [NODE_MODULES, FIXTURES],
};

async function approved(): Promise<ServerRecord> {
  const opened = await ServerSession.open({ record: base, credential: null, worktree });
  if (opened._tag === 'Left') throw new Error(opened.left.message);
  const tools = opened.right.tools().map((checked) => checked.tool);
  await opened.right.close();
  return approveTools(base, tools, () => 'allow');
}

const gatewayFor = (registry: RegistryFile): McpGateway =>
  new McpGateway({
    registry: () => registry,
    repository: worktree,
    worktree,
    secrets: null,
    redactor: new Redactor(),
    wrap: wrapUntrusted,
  });

/** Alternating rounds of two cases; the median of the per-round ratios (the machine drifts more than the overhead). */
async function medianRatio(title: string, baseline: BenchCase, subject: BenchCase): Promise<number> {
  const ratios: number[] = [];
  for (let round = 0; round < 4; round += 1) {
    const cases = round % 2 === 0 ? [baseline, subject] : [subject, baseline];
    const rows = await runCases(`${title}, round ${round + 1}`, cases, 1_500);
    const [first, second] = rows as [BenchRow, BenchRow];
    const [baseRow, subjectRow] = round % 2 === 0 ? [first, second] : [second, first];
    ratio(`round ${round + 1} ${subject.name} / ${baseline.name}`, subjectRow, baseRow);
    ratios.push(subjectRow.perItemP50Us / baseRow.perItemP50Us);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  return ((sorted[1] as number) + (sorted[2] as number)) / 2;
}

interface BenchCase {
  readonly name: string;
  readonly fn: () => Promise<unknown>;
}

/** A worker CLI's call through `run --mcp`'s endpoint (the kernel's gate a pass-through, as above). */
async function workerOverhead(record: ServerRecord, directCase: BenchCase): Promise<void> {
  const gateway = gatewayFor({ version: 1, servers: [record] });
  const gate = {
    call: async (request: { execute: (signal: AbortSignal) => Promise<{ text: string }> }) => ({
      kind: 'result',
      output: { text: (await request.execute(new AbortController().signal)).text },
    }),
  } as unknown as ToolGate;
  const socket = join(worktree, 'fx.sock');
  const endpoint = await serveWorkerEndpoint(socket, { gateway, server: 'fx', gate });
  const worker = new Client({ name: 'worker-cli', version: '1' });
  await worker.connect(new StdioClientTransport({ command: process.execPath, args: [MCP_BRIDGE_SCRIPT_PATH, socket] }));
  const workerCase = {
    name: 'worker endpoint → sandboxed server',
    fn: () => worker.callTool({ name: 'greet', arguments: { name: 'ann' } }),
  };
  const median = await medianRatio('MCP call: SDK client direct vs a worker through run --mcp', directCase, workerCase);
  report('worker endpoint / direct per call (median of 4 rounds)', `${median.toFixed(2)}×`, '≤ 1.2×');
  await worker.close();
  await endpoint.close();
  await gateway.close();
}

async function overhead(record: ServerRecord): Promise<void> {
  const direct = new Client({ name: 'bench', version: '1' });
  await direct.connect(
    new StdioClientTransport({ command: process.execPath, args: [FIXTURE], env: { PATH: process.env.PATH ?? '' } }),
  );
  const gateway = gatewayFor({ version: 1, servers: [record] });
  const described = gateway.plan('mcp_describe', { server: 'fx', tool: 'greet' });
  if (described?.kind !== 'plan') throw new Error('describe');
  await described.plan.execute(new AbortController().signal);
  const signal = new AbortController().signal;
  const directCase = {
    name: 'sdk client → server (direct)',
    fn: () => direct.callTool({ name: 'greet', arguments: { name: 'ann' } }),
  };
  const gatewayCase = {
    name: 'gateway → sandboxed server',
    fn: async () => {
      const planned = gateway.plan('mcp__fx__greet', { name: 'ann' });
      if (planned?.kind !== 'plan') throw new Error('plan');
      const done = await planned.plan.execute(signal);
      if (!done.ok) throw new Error(done.text);
    },
  };
  const median = await medianRatio('MCP call: SDK client direct vs through the gateway', directCase, gatewayCase);
  report('gateway / direct per call (median of 4 rounds)', `${median.toFixed(2)}×`, '≤ 1.2×');
  await workerOverhead(record, directCase);
  await direct.close();
  await gateway.close();
}

function contextCost(record: ServerRecord): void {
  const tokens = (gateway: McpGateway): number =>
    Math.ceil(JSON.stringify(gateway.definitions()).length / CHARS_PER_TOKEN);
  const none = gatewayFor({ version: 1, servers: [] });
  const ten = gatewayFor({
    version: 1,
    servers: Array.from({ length: 10 }, (_, i) => ({ ...record, name: `server${i}` })),
  });
  const eager = Object.values(record.tools).reduce((sum, pin) => sum + JSON.stringify(pin.definition).length, 0);
  report('context tokens, 0 servers (the two meta-tools)', String(tokens(none)));
  report('context tokens beyond the meta-tools, 10 registered unused servers', String(tokens(ten) - tokens(none)), '0');
  report(
    '(for scale: those 10 servers’ definitions loaded eagerly)',
    `${Math.ceil((10 * eager) / CHARS_PER_TOKEN)} tokens`,
  );
}

const record = await approved();
contextCost(record);
await overhead(record);
