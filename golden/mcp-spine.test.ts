/**
 * MCP on the one spine: a `crustcore run` task, then an MCP task (official
 * SDK client over stdio), then another `run`, all in one repository, write
 * one ledger through one kernel — `crustcore inspect --replay` exits 0 and
 * lists all three tasks. The MCP server stays up while the last `run` works:
 * it holds the ledger only during a tool call, so a run is never told "busy"
 * by an idle IDE session.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, crustcore, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';
import { framesOf, inspectReplay, type McpSession, mintToken, startMcp } from './mcp-harness.js';

const box = makeRepo(NODE_REPO);
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, CRUSTCORE_HOME: box.home, NO_COLOR: '1' };
const stateDir = join(box.root, 'mcp-state');
let mcp: McpSession | null = null;

beforeAll(() => buildCli(), 60_000);
afterAll(async () => {
  await mcp?.client.close();
  rmSync(box.root, { recursive: true, force: true });
});

function commitAll(sandbox: Sandbox, message: string): void {
  const gitEnv = { PATH: env.PATH, HOME: sandbox.root, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: sandbox.repo, stdio: 'pipe', env: gitEnv });
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', message);
}

const runWorker = (goal: string, script: string) =>
  crustcore(box, ['run', '--goal', goal, '--worker', `sh -c "${script}"`, '--approve', 'auto', '--json']);

async function mcpTask(session: McpSession): Promise<string> {
  const created = await session.call('create_task', { goal: 'add a note over MCP' });
  expect(created.isError, created.text).toBe(false);
  const taskId = String(created.json?.task_id);
  const diff = '--- /dev/null\n+++ b/MCP.md\n@@ -0,0 +1 @@\n+from mcp\n';
  expect((await session.call('stage_diff', { task_id: taskId, diff })).isError).toBe(false);
  const verified = await session.call('verify', { task_id: taskId });
  expect(verified.json, `${verified.text}\n${session.stderr()}`).toMatchObject({ passed: true });
  const minted = mintToken(env, taskId, stateDir);
  expect(minted.status, minted.stderr).toBe(0);
  expect((await session.call('approve', { task_id: taskId, token: String(minted.json?.token) })).isError).toBe(false);
  const applied = await session.call('apply', { task_id: taskId });
  expect(applied.json, applied.text).toMatchObject({ applied: true });
  return taskId;
}

describe('MCP tasks share the repository ledger with run', () => {
  it('run, then an MCP task, then run: one log, inspect --replay exit 0', async () => {
    const first = runWorker('fix add', "sed -i 's/a - b/a + b/' src/math.js");
    expect(first.status, first.stdout + first.stderr).toBe(0);
    commitAll(box, 'fix add');
    const ledger = String(first.json?.stateDir);

    mcp = await startMcp(env, ['--dir', box.repo, '--verify', 'node --test', '--ephemeral', '--state-dir', stateDir]);
    const taskId = await mcpTask(mcp);
    expect(readFileSync(join(box.repo, 'MCP.md'), 'utf8')).toBe('from mcp\n');
    commitAll(box, 'mcp note');

    // The MCP server is still running: between tool calls it does not hold the ledger.
    const third = runWorker('note', 'echo three > NOTE3.md');
    expect(third.status, third.stdout + third.stderr).toBe(0);
    expect(third.json?.inspect).toMatchObject({ ok: true });

    const inspect = inspectReplay(env, ledger);
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
    const report = inspect.json as { tasks?: unknown[] } | null;
    expect(report?.tasks?.length).toBe(3);
    expect(inspect.stdout).toContain(taskId);
    const frames = framesOf(ledger);
    // One kernel.open frame: the MCP calls and both runs continued one kernel.
    expect(frames.filter((f) => f.kind === 'kernel.open')).toHaveLength(1);
    const created = frames.filter((f) => f.kind === 'TaskCreated');
    expect(created).toHaveLength(3);
    expect((created[1]?.payload as { taskId?: string } | undefined)?.taskId).toBe(taskId);
  }, 400_000);
});
