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
 *    gateway with no servers. Target: 0 beyond the meta-tools (two, or three
 *    with code mode).
 * 3. Code mode: one `mcp_code` script making one call (its sandbox, the
 *    runner, the MCP handshake, the call) against the same call made
 *    directly through the gateway, and the cost of each further call inside
 *    a script. The gate is a pass-through here too.
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
  type CodeModeOptions,
  McpGateway,
  type RegistryFile,
  type ServerRecord,
  ServerSession,
  serveWorkerEndpoint,
} from '@crustcore/mcp-gateway';
import { mintSandboxExecCap } from '@crustcore/sandbox';
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

/** The kernel's gate as a pass-through: it is the same for every tool call, so it is left out. */
const passThroughGate = {
  call: async (request: { execute: (signal: AbortSignal) => Promise<{ text: string }> }) => ({
    kind: 'result',
    output: { text: (await request.execute(new AbortController().signal)).text },
  }),
} as unknown as ToolGate;

const workerCap = () => {
  const minted = mintSandboxExecCap('worker');
  if (minted._tag === 'Left') throw new Error(minted.left.message);
  return minted.right;
};

const gatewayFor = (registry: RegistryFile, codeMode?: CodeModeOptions): McpGateway =>
  new McpGateway({
    registry: () => registry,
    repository: worktree,
    worktree,
    secrets: null,
    redactor: new Redactor(),
    wrap: wrapUntrusted,
    ...(codeMode === undefined ? {} : { codeMode }),
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
  const socket = join(worktree, 'fx.sock');
  const endpoint = await serveWorkerEndpoint(socket, { gateway, server: 'fx', gate: passThroughGate });
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
  const code: CodeModeOptions = { gate: passThroughGate, workerCap };
  const tenServers = {
    version: 1 as const,
    servers: Array.from({ length: 10 }, (_, i) => ({ ...record, name: `server${i}` })),
  };
  const none = gatewayFor({ version: 1, servers: [] });
  const ten = gatewayFor(tenServers);
  const noneCode = gatewayFor({ version: 1, servers: [] }, code);
  const tenCode = gatewayFor(tenServers, code);
  const eager = Object.values(record.tools).reduce((sum, pin) => sum + JSON.stringify(pin.definition).length, 0);
  report('context tokens, 0 servers (the two meta-tools)', String(tokens(none)));
  report('context tokens beyond the meta-tools, 10 registered unused servers', String(tokens(ten) - tokens(none)), '0');
  report('context tokens with code mode, 0 servers (the three meta-tools)', String(tokens(noneCode)));
  report(
    'context tokens beyond the meta-tools with code mode, 10 registered unused servers',
    String(tokens(tenCode) - tokens(noneCode)),
    '0',
  );
  report(
    '(for scale: those 10 servers’ definitions loaded eagerly)',
    `${Math.ceil((10 * eager) / CHARS_PER_TOKEN)} tokens`,
  );
}

/** 3. A script's fixed cost and its per-call cost, against the direct call through the gateway. */
async function codeModeCost(record: ServerRecord): Promise<void> {
  const gateway = gatewayFor({ version: 1, servers: [record] }, { gate: passThroughGate, workerCap });
  const signal = new AbortController().signal;
  const execute = async (name: string, args: unknown): Promise<void> => {
    const planned = gateway.plan(name, args);
    if (planned?.kind !== 'plan') throw new Error(`plan ${name}`);
    const done = await planned.plan.execute(signal);
    if (!done.ok) throw new Error(done.text);
  };
  await execute('mcp_describe', { server: 'fx', tool: 'greet' });
  const script = (calls: number) =>
    `for (let i = 0; i < ${calls}; i += 1) await tools.fx.greet({ name: 'ann' });\nconsole.log('done');`;
  const rows = await runCases(
    'Code mode: a script against the direct call through the gateway',
    [
      { name: 'gateway → sandboxed server (direct)', fn: () => execute('mcp__fx__greet', { name: 'ann' }) },
      { name: 'mcp_code, 1 call', fn: () => execute('mcp_code', { script: script(1) }) },
      { name: 'mcp_code, 11 calls', fn: () => execute('mcp_code', { script: script(11) }) },
    ],
    5_000,
  );
  const [direct, one, eleven] = rows as [BenchRow, BenchRow, BenchRow];
  report('mcp_code with one call (p50)', `${one.p50Ms.toFixed(1)} ms (direct call ${direct.p50Ms.toFixed(2)} ms)`);
  report('each further call inside a script (p50)', `${((eleven.p50Ms - one.p50Ms) / 10).toFixed(2)} ms`);
  await gateway.close();
}

const record = await approved();
contextCost(record);
await overhead(record);
await codeModeCost(record);
