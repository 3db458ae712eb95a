/**
 * MCP state is per project: two IDE sessions (`crustcore mcp`, official SDK
 * client, embedded database) on two repositories under one CRUSTCORE_HOME both
 * work. Before, both used $CRUSTCORE_HOME/mcp, the second found the embedded
 * database locked, and every call answered `internal`. CONTROL: the two
 * sessions forced into one --state-dir show that failure. Each task is a
 * kernel task in its own repository's ledger.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { makeRepo, NODE_REPO, REPO_ROOT } from './cli-harness.js';
import { baseEnv, CLI_ARGS, tempDir } from './daemon-harness.js';
import { framesOf } from './mcp-harness.js';

const home = tempDir('crustcore-mcp-projects-');
const env = baseEnv(home);
const clients: Client[] = [];
afterAll(async () => {
  for (const client of clients.splice(0)) await client.close();
  rmSync(home, { recursive: true, force: true });
});

async function session(repo: string, extra: readonly string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ARGS, 'mcp', '--dir', repo, '--verify', 'node --test', ...extra],
    env: env as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'crustcore-golden', version: '1.0.0' });
  await client.connect(transport, { timeout: 120_000 });
  clients.push(client);
  return client;
}

async function createTask(client: Client, repo: string): Promise<{ isError: boolean; text: string }> {
  const result = await client.callTool({ name: 'create_task', arguments: { goal: 'fix add', dir: repo } }, undefined, {
    timeout: 120_000,
  });
  const text = ((result.content ?? []) as { text?: string }[]).map((p) => p.text ?? '').join('');
  return { isError: result.isError === true, text };
}

describe('crustcore mcp: state per project', () => {
  it('two sessions on two repositories both create tasks (default state directories)', async () => {
    const a = makeRepo(NODE_REPO);
    const b = makeRepo(NODE_REPO);
    const first = await session(a.repo);
    expect(await createTask(first, a.repo)).toMatchObject({ isError: false });
    const second = await session(b.repo);
    const created = await createTask(second, b.repo);
    expect(created.isError, created.text).toBe(false);
    expect(created.text).toContain('task_id');
    // Two repositories, two ledgers, one MCP task in each.
    const projects = join(home, 'projects');
    const ledgers = readdirSync(projects).map((name) => framesOf(join(projects, name)));
    expect(ledgers).toHaveLength(2);
    for (const frames of ledgers) expect(frames.filter((f) => f.kind === 'TaskCreated')).toHaveLength(1);
  }, 300_000);

  it('CONTROL: two sessions forced into one state directory — the second cannot work', async () => {
    const shared = join(home, 'one-shared-dir');
    const a = makeRepo(NODE_REPO);
    const b = makeRepo(NODE_REPO);
    const first = await session(a.repo, ['--state-dir', shared]);
    expect(await createTask(first, a.repo)).toMatchObject({ isError: false });
    const second = await session(b.repo, ['--state-dir', shared]);
    const created = await createTask(second, b.repo);
    expect(created.isError).toBe(true);
    expect(created.text).toMatch(/internal|in use/);
  }, 300_000);
});
