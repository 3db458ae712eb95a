/** Shared set-up for the gateway tests: real servers from node_modules, our fixture, a real redactor. */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type ToolCallRequest, type ToolGate, wrapUntrusted } from '@crustcore/agent';
import { mintSandboxExecCap } from '@crustcore/sandbox';
import { Redactor } from '@crustcore/secrets';
import {
  approveTools,
  type GatewayOptions,
  McpGateway,
  type RegistryFile,
  type ServerRecord,
  ServerSession,
  type ToolPolicy,
} from '../src/index.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
export const NODE_MODULES = join(REPO_ROOT, 'node_modules');
export const FIXTURES = join(import.meta.dirname, 'fixtures');
export const FIXTURE_SERVER = join(FIXTURES, 'fixture-server.mjs');
export const serverScript = (name: string): string =>
  join(NODE_MODULES, '@modelcontextprotocol', name, 'dist', 'index.js');

/**
 * An MCP server (an ES module, runnable as a script) whose one tool, `whoami`, says which copy runs —
 * for the attacks that swap or plant a server's code. With `dataFile`, the answer also carries that
 * file's text, read from the working directory at call time.
 */
export function copyServerScript(copy: string, dataFile?: string): string {
  const answer =
    dataFile === undefined
      ? JSON.stringify(copy)
      : `${JSON.stringify(`${copy} `)} + readFileSync(${JSON.stringify(dataFile)}, 'utf8')`;
  return [
    '#!/usr/bin/env node',
    "import { readFileSync } from 'node:fs';",
    `import { McpServer } from ${JSON.stringify(`${NODE_MODULES}/@modelcontextprotocol/sdk/dist/esm/server/mcp.js`)};`,
    `import { StdioServerTransport } from ${JSON.stringify(`${NODE_MODULES}/@modelcontextprotocol/sdk/dist/esm/server/stdio.js`)};`,
    "const server = new McpServer({ name: 'copy', version: '1.0.0' });",
    `server.registerTool('whoami', { description: 'Says which copy runs.' }, async () => ({ content: [{ type: 'text', text: ${answer} }] }));`,
    'await server.connect(new StdioServerTransport());',
  ].join('\n');
}

/** A task worktree: a real directory under /tmp. */
export function makeWorktree(files: Readonly<Record<string, string>> = {}): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-gw-')));
  const worktree = join(root, 'repo');
  mkdirSync(worktree);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(worktree, path), content);
  return worktree;
}

export function stdioRecord(name: string, args: readonly string[], extra: Partial<ServerRecord> = {}): ServerRecord {
  return {
    name,
    transport: { kind: 'stdio', command: 'node', args: [...args], env: {} },
    trust: 'trusted',
    repositories: ['*'],
    defaultPolicy: 'allow',
    tools: {},
    network: false,
    timeoutMs: 20_000,
    source: 'test',
    readPaths: [NODE_MODULES, FIXTURES],
    ...extra,
  };
}

/** What a person does with `crustcore mcp approve`: start the server once, pin every tool it lists. */
export async function approveAll(
  record: ServerRecord,
  worktree: string,
  policy: (tool: string) => ToolPolicy = () => 'allow',
  credential: string | null = null,
): Promise<ServerRecord> {
  const opened = await ServerSession.open({ record, credential, worktree });
  if (opened._tag === 'Left') throw new Error(opened.left.message);
  try {
    return approveTools(
      record,
      opened.right.tools().map((checked) => checked.tool),
      (tool) => policy(tool.name),
    );
  } finally {
    await opened.right.close();
  }
}

export interface TestGateway {
  readonly gateway: McpGateway;
  readonly starts: string[];
  readonly registry: { current: RegistryFile };
  readonly redactor: Redactor;
}

export function makeGateway(
  records: readonly ServerRecord[],
  worktree: string,
  extra: Partial<GatewayOptions> = {},
): TestGateway {
  const registry = { current: { version: 1 as const, servers: [...records] } };
  const starts: string[] = [];
  const redactor = new Redactor();
  const gateway = new McpGateway({
    registry: () => registry.current,
    repository: worktree,
    worktree,
    secrets: null,
    redactor,
    wrap: wrapUntrusted,
    onStart: (server) => starts.push(server),
    ...extra,
  });
  return { gateway, starts, registry, redactor };
}

/** Plans and runs one call the way the runtime does once the kernel allowed it. */
export async function run(
  gateway: McpGateway,
  name: string,
  args: unknown,
): Promise<{ text: string; ok: boolean; artifacts: readonly Uint8Array[] }> {
  const planned = gateway.plan(name, args);
  if (planned === null) throw new Error(`${name} is not a gateway tool`);
  if (planned.kind === 'invalid') return { text: planned.message, ok: false, artifacts: [] };
  const done = await planned.plan.execute(new AbortController().signal);
  return { text: done.text, ok: done.ok, artifacts: done.artifacts ?? [] };
}

/**
 * A stand-in for the task's kernel gate that records each call and allows it (or refuses every
 * call with `refuse`). The golden tests run the real one; here what matters is that every call is
 * handed to it, and that nothing runs when it refuses.
 */
export function recordingGate(refuse: string | null = null): { gate: ToolGate; calls: ToolCallRequest[] } {
  const calls: ToolCallRequest[] = [];
  const gate = {
    call: async (request: ToolCallRequest) => {
      calls.push(request);
      if (refuse !== null) return { kind: 'denied' as const, reason: refuse };
      const ran = await request.execute(new AbortController().signal);
      return { kind: 'result' as const, output: { text: ran.text } as never };
    },
  } as unknown as ToolGate;
  return { gate, calls };
}

/** The worker capability a task hands the gateway (bubblewrap, the worker profile). */
export function workerCap() {
  const minted = mintSandboxExecCap('worker');
  if (minted._tag === 'Left') throw new Error(minted.left.message);
  return minted.right;
}
