/**
 * One spine: every surface writes one repository's ledger through one kernel.
 * In one repository: `crustcore run`, an MCP task (the official SDK client
 * over stdio), a second `run` while that MCP server is still up, two
 * `crustcore chat` requests (the native agent on a scripted model server), a
 * task the daemon claims from its queue, and a third `run`. Then `crustcore
 * inspect --replay` must replay the whole log as one kernel — before one
 * kernel per ledger, the second task's first frame diverged (exit 20) — and
 * the log holds exactly one `kernel.open`: every later process, whatever its
 * surface, continued the kernel the log already had.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, registryFor, startModelServer } from './agent/model-server.js';
import { buildCli, CLI, crustcore, makeRepo, NODE_REPO } from './cli-harness.js';
import { cli, DaemonProcess } from './daemon-harness.js';
import { framesOf, inspectReplay, type McpSession, mintToken, startMcp } from './mcp-harness.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const box = makeRepo(NODE_REPO);
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, CRUSTCORE_HOME: box.home, NO_COLOR: '1' };
let server: ModelServer | null = null;
let chat: ChildProcess | null = null;
let mcp: McpSession | null = null;
let daemon: DaemonProcess | null = null;

beforeAll(() => buildCli(), 60_000);
afterAll(async () => {
  chat?.kill('SIGKILL');
  await server?.close();
  await mcp?.client.close();
  await daemon?.stop('SIGKILL');
});

function commitAll(message: string): void {
  const gitEnv = { PATH: env.PATH, HOME: box.root, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: box.repo, stdio: 'pipe', env: gitEnv });
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', message);
}

/** A `crustcore run` whose own check of the log (everything before it included) must pass. */
function runTask(goal: string, script: string): string {
  const run = crustcore(box, ['run', '--goal', goal, '--worker', `sh -c "${script}"`, '--approve', 'auto', '--json']);
  expect(run.status, run.stdout + run.stderr).toBe(0);
  expect(run.json?.inspect).toMatchObject({ ok: true });
  return String(run.json?.stateDir);
}

async function mcpTask(session: McpSession, stateDir: string): Promise<string> {
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
  expect((await session.call('apply', { task_id: taskId })).json).toMatchObject({ applied: true });
  return taskId;
}

/** Collects a child's stdout and resolves when `pattern` has appeared `count` times. */
function outputOf(child: ChildProcess): {
  text: () => string;
  until: (pattern: RegExp, count: number) => Promise<void>;
} {
  let text = '';
  const waiters: (() => void)[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  });
  const until = async (pattern: RegExp, count: number): Promise<void> => {
    const global = new RegExp(pattern.source, 'g');
    while ((text.match(global) ?? []).length < count) {
      if (child.exitCode !== null) throw new Error(`chat exited early:\n${text}`);
      await new Promise<void>((wake) => waiters.push(wake));
    }
  };
  return { text: () => text, until };
}

async function twoChatRequests(): Promise<string> {
  server = await startModelServer(
    (_request, index) =>
      [
        { text: 'Writing notes.', calls: [{ name: 'write_file', arguments: { path: 'CHAT1.md', content: 'one\n' } }] },
        { text: 'Notes written.' },
        { text: 'More notes.', calls: [{ name: 'write_file', arguments: { path: 'CHAT2.md', content: 'two\n' } }] },
        { text: 'Second notes written.' },
      ][index] ?? { text: 'done' },
  );
  const registry = join(box.root, 'models.json');
  writeFileSync(registry, registryFor(server));
  const args = ['chat', '--dir', box.repo, '--models-config', registry, '--verify', 'node --test', '--approve', 'auto'];
  chat = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'], env });
  const out = outputOf(chat);
  chat.stdin?.write('write CHAT1.md\n');
  await out.until(/committed on crustcore\//, 1);
  chat.stdin?.write('write CHAT2.md\n');
  await out.until(/committed on crustcore\//, 2);
  const exited = new Promise<number | null>((done) => chat?.once('exit', (code) => done(code)));
  chat.stdin?.end();
  await exited;
  return out.text();
}

/** A task queued with `crustcore tasks add` and run by the daemon (PGlite, the default engine). */
async function daemonTask(): Promise<string> {
  daemon = new DaemonProcess(env, ['--poll-ms', '200', '--workers', '1']);
  await daemon.waitFor((line) => line.event === 'daemon.ready', 120_000, 'the daemon to start');
  const goal = 'note from the daemon';
  const worker = 'sh -c "echo daemon > DAEMON.md"';
  const added = cli(env, [
    'tasks',
    'add',
    '--dir',
    box.repo,
    '--goal',
    goal,
    '--worker',
    worker,
    '--approve',
    'auto',
    '--json',
  ]);
  expect(added.status, added.stderr + added.stdout).toBe(0);
  const jobId = String(added.json?.jobId);
  const done = await daemon.waitFor(
    (line) => line.event === 'job.finished' && line.jobId === jobId,
    300_000,
    `job ${jobId} to finish`,
  );
  expect(done, JSON.stringify(daemon.lines.slice(-10))).toMatchObject({ status: 'Completed', outcome: 'completed' });
  expect(await daemon.stop()).toBe(0);
  daemon = null;
  return String(added.json?.taskId);
}

describe('one kernel per ledger, across every surface', () => {
  it('run, MCP, run (MCP server still up), 2 chat requests, a daemon task, run: one log, inspect --replay exit 0', async () => {
    const ledger = runTask('fix add', "sed -i 's/a - b/a + b/' src/math.js");
    // Later tasks start from HEAD: commit each applied change, as a person would.
    commitAll('fix add');

    mcp = await startMcp(env, [
      '--dir',
      box.repo,
      '--verify',
      'node --test',
      '--ephemeral',
      '--state-dir',
      join(box.root, 'mcp-state'),
    ]);
    const mcpTaskId = await mcpTask(mcp, join(box.root, 'mcp-state'));
    expect(readFileSync(join(box.repo, 'MCP.md'), 'utf8')).toBe('from mcp\n');
    commitAll('mcp note');
    // The MCP server is still running: between tool calls it does not hold the ledger.
    runTask('note 2', 'echo note2 > NOTE2.md');
    commitAll('note 2');

    expect((await twoChatRequests()).match(/committed on crustcore\//g)?.length).toBe(2);
    // chat commits its verified changes on its own crustcore/ branch; the work tree stays as it was.
    const daemonTaskId = await daemonTask();
    expect(readFileSync(join(box.repo, 'DAEMON.md'), 'utf8')).toBe('daemon\n');
    commitAll('daemon note');
    expect(runTask('note 3', 'echo note3 > NOTE3.md')).toBe(ledger);

    const inspect = inspectReplay(env, ledger);
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
    const report = inspect.json as { tasks?: unknown[] } | null;
    expect(report?.tasks?.length).toBe(7);
    expect(inspect.stdout).toContain(mcpTaskId);
    expect(inspect.stdout).toContain(daemonTaskId);
    const frames = framesOf(ledger);
    expect(frames.filter((f) => f.kind === 'kernel.open')).toHaveLength(1);
    expect(frames.filter((f) => f.kind === 'TaskCreated')).toHaveLength(7);
  }, 900_000);
});
