/**
 * Worker CLIs (Codex, Claude Code) using one of the user's MCP servers, through CrustCore only
 * (issue #14 item 6): `crustcore run --backend codex|claude --mcp files`. The server is the real
 * `@modelcontextprotocol/server-filesystem`, registered and approved with the CLI as a user would;
 * the worker is the real CLI from npm, driven by a scripted provider on 127.0.0.1. The worker's
 * MCP config names CrustCore's bridge, never the server: each call reaches the gateway, is a kernel
 * tool call (policy, receipt) in the task's ledger, and comes back redacted and wrapped.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { WorkerCliName } from '../packages/workers/src/index.js';
import { type ScriptStep, startScriptedModel } from '../packages/workers/test/scripted-model.js';
import { requireCli } from '../packages/workers/test/worker-harness.js';
import { makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';
import { baseEnv, cli, cliAsync } from './daemon-harness.js';
import { registerFilesServer } from './mcp-harness.js';
import { CLIS, DONE, FIX_ADD, WIRE, workerEnv } from './worker-cli-harness.js';

const TOKEN = `ghp_${'Zx81Qm'.repeat(6)}`;
const NOTES = `the fix: add, do not subtract\ndeploy token ${TOKEN}\n`;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The sample repository with notes to read. */
function repository(): Sandbox {
  const box = makeRepo({ ...NODE_REPO, 'NOTES.md': NOTES });
  roots.push(box.root);
  return box;
}

const READ_NOTES: ScriptStep = { kind: 'tool', name: 'mcp__files__read_text_file', arguments: { path: 'NOTES.md' } };

const runWorker = (name: WorkerCliName, box: Sandbox, env: NodeJS.ProcessEnv, extra: readonly string[]) =>
  cliAsync(env, [
    'run',
    '--dir',
    box.repo,
    '--goal',
    'fix add',
    '--backend',
    name,
    '--approve',
    'auto',
    '--json',
    ...extra,
  ]);

/** The task's kernel frames (export), by kind. */
function frames(env: NodeJS.ProcessEnv, stateDir: string): { kind: string; payload?: Record<string, unknown> }[] {
  const exported = cli(env, ['export', '--dir', stateDir, '--format', 'jsonl']);
  expect(exported.status, exported.stderr).toBe(0);
  return exported.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { kind: string; payload?: Record<string, unknown> });
}

const STEPS: readonly ScriptStep[] = [READ_NOTES, { kind: 'shell', command: FIX_ADD }, { kind: 'message', text: DONE }];

/** What the worker got back from the MCP call (the scripted model sees every tool output). */
const mcpOutput = (requests: readonly { readonly toolOutputs: readonly string[] }[]): string =>
  requests.flatMap((request) => request.toolOutputs).find((text) => /read_text_file|refused/.test(text)) ?? '';

/** One worker run on the sample repository with `files` registered and approved; the model closed after. */
async function withFilesRun(
  name: WorkerCliName,
  extra: readonly string[],
  check: (run: Awaited<ReturnType<typeof runWorker>>, seen: ScriptedSeen, env: NodeJS.ProcessEnv) => void,
): Promise<void> {
  requireCli(name);
  const model = await startScriptedModel(WIRE[name], STEPS);
  const box = repository();
  const env = workerEnv(name, box.home, model.origin);
  registerFilesServer(env);
  try {
    const run = await runWorker(name, box, env, extra);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    check(run, { requests: model.requests, repo: box.repo }, env);
  } finally {
    await model.close();
  }
}

interface ScriptedSeen {
  readonly requests: readonly { readonly body: string; readonly toolOutputs: readonly string[] }[];
  readonly repo: string;
}

describe.each(CLIS)('golden: crustcore run --backend %s --mcp files (the real CLI and server)', (name) => {
  it(
    'the worker reads a file through the gateway: one receipted kernel tool call, redacted, wrapped; then verified and applied',
    () =>
      // The full profile lets an `allow` tool run without asking (docs/mcp-gateway.md).
      withFilesRun(name, ['--mcp', 'files', '--profile', 'full'], (run, seen, env) => {
        expect(readFileSync(join(seen.repo, 'src/math.js'), 'utf8')).toContain('a + b');
        const read = mcpOutput(seen.requests);
        expect(read).toContain('the fix: add, do not subtract');
        expect(read).toMatch(/<untrusted-data source=\\?"mcp files\/read_text_file/);
        expect(read).not.toContain(TOKEN);
        expect(read).toMatch(/\[REDACTED/);
        const stateDir = String(run.json?.stateDir);
        const all = frames(env, stateDir);
        const requested = all.filter((frame) => frame.kind === 'ToolCallRequested');
        expect(requested.map((frame) => frame.payload?.tool)).toEqual(['mcp__files__read_text_file']);
        expect(requested[0]?.payload?.operation).toMatchObject({
          op: 'exec',
          argv: ['mcp', 'files', 'read_text_file'],
        });
        expect(all.filter((frame) => frame.kind === 'ToolCallCompleted')).toHaveLength(1);
        const inspect = cli(env, ['inspect', '--dir', stateDir, '--replay']);
        expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
        expect(JSON.stringify(all)).not.toContain(TOKEN);
      }),
    240_000,
  );

  it(
    'the kernel decides: in the supervised profile with nobody to ask, the call is denied and never runs',
    () =>
      withFilesRun(name, ['--mcp', 'files'], (run, seen, env) => {
        const answer = mcpOutput(seen.requests);
        expect(answer).toContain('CrustCore refused this call');
        expect(answer).not.toContain('the fix: add');
        const all = frames(env, String(run.json?.stateDir));
        expect(all.filter((frame) => frame.kind === 'ToolCallRequested')).toHaveLength(1);
        expect(all.filter((frame) => frame.kind === 'ToolCallCompleted')).toEqual([]);
      }),
    240_000,
  );

  it(
    'CONTROL: without --mcp the worker knows nothing of the server, and the same step reads nothing',
    () =>
      withFilesRun(name, ['--profile', 'full'], (run, seen, env) => {
        // Before the scripted call (which names it itself), no request offered or mentioned the server.
        const before = seen.requests.filter((request) => request.toolOutputs.length === 0);
        expect(before.length).toBeGreaterThan(0);
        expect(before.map((request) => request.body).join('\n')).not.toContain('mcp__files');
        expect(seen.requests.flatMap((request) => request.toolOutputs).join('\n')).not.toContain('the fix: add');
        const all = frames(env, String(run.json?.stateDir));
        expect(all.filter((frame) => frame.kind === 'ToolCallRequested')).toEqual([]);
      }),
    240_000,
  );
});

describe('golden: --mcp refuses what a person has not allowed', () => {
  it('a registered server nobody approved: exit 2 naming `crustcore mcp approve`, before any task starts', async () => {
    requireCli('codex');
    const box = repository();
    const env = workerEnv('codex', box.home, 'http://127.0.0.1:9');
    registerFilesServer(env, { approve: false });
    const run = await runWorker('codex', box, env, ['--mcp', 'files']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('crustcore mcp approve files');
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a - b');
  }, 120_000);

  it('--mcp with an external worker is a usage error', () => {
    const box = repository();
    const external = cli(baseEnv(box.home), [
      'run',
      '--dir',
      box.repo,
      '--goal',
      'x',
      '--worker',
      'true',
      '--mcp',
      'files',
    ]);
    expect(external.status).toBe(2);
    expect(external.stderr).toContain('only --backend codex|claude takes this');
  });
});
