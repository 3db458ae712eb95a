/**
 * MCP gateway (issue #14).
 *
 * 1. Overhead per call: the same fixture server's `greet` tool called by the
 *    official SDK Client directly (StdioClientTransport, the server a plain
 *    child on the host) vs through the gateway (plan → argument bound → pin
 *    check → the sandboxed server over the in-sandbox bridge → redaction,
 *    cut, untrusted wrapper). The kernel's ToolGate is not included: it is
 *    the same for every tool. Target ≤ 1.2×.
 * 2. Context cost with 10 registered, approved, unused servers: the tool
 *    definitions the model is sent, in tokens (CHARS_PER_TOKEN), against a
 *    gateway with no servers. Target: 0 beyond the two meta-tools.
 *
 *   node --conditions=source --import tsx benches/mcp-gateway.bench.ts
 */
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CHARS_PER_TOKEN, wrapUntrusted } from '@crustcore/agent';
import { approveTools, McpGateway, type RegistryFile, type ServerRecord, ServerSession } from '@crustcore/mcp-gateway';
import { Redactor } from '@crustcore/secrets';
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
  // A shared 2-core machine drifts more than the overhead: rounds in alternating order, median ratio.
  const ratios: number[] = [];
  for (let round = 0; round < 4; round += 1) {
    const cases = round % 2 === 0 ? [directCase, gatewayCase] : [gatewayCase, directCase];
    const rows = await runCases(`MCP call, round ${round + 1}: SDK client direct vs through the gateway`, cases, 1_500);
    const [first, second] = rows as [BenchRow, BenchRow];
    const [directRow, gatewayRow] = round % 2 === 0 ? [first, second] : [second, first];
    ratio(`round ${round + 1} gateway / direct`, gatewayRow, directRow);
    ratios.push(gatewayRow.perItemP50Us / directRow.perItemP50Us);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = ((sorted[1] as number) + (sorted[2] as number)) / 2;
  report('gateway / direct per call (median of 4 rounds)', `${median.toFixed(2)}×`, '≤ 1.2×');
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
