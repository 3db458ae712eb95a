/**
 * `crustcore mcp` driven as an IDE drives it: the official SDK's `Client`
 * over stdio, a real git repository with a failing `node --test`, a throwaway
 * PostgreSQL as the state plane, real bubblewrap for verify. Approval tokens
 * come from `crustcore mcp-token`, a separate process reaching the server's
 * admin socket — the way a person would. Every task is a kernel task in the
 * repository's ledger: `crustcore inspect --replay` checks the whole log.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startThrowawayCluster, type ThrowawayCluster } from '@crustcore/state/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, NODE_REPO, REPO_ROOT } from './cli-harness.js';
import { baseEnv, CLI_ARGS, cli, tempDir } from './daemon-harness.js';
import { eventKindsFor, framesOf, inspectReplay, ledgerDirOf, rejectedFor } from './mcp-harness.js';

const FIX =
  '--- a/src/math.js\n+++ b/src/math.js\n@@ -1,3 +1,3 @@\n export function add(a, b) {\n-  return a - b;\n+  return a + b;\n }\n';
const WRONG =
  '--- a/src/math.js\n+++ b/src/math.js\n@@ -1,3 +1,3 @@\n export function add(a, b) {\n-  return a - b;\n+  return a * b;\n }\n';

interface CallOutcome {
  readonly isError: boolean;
  readonly text: string;
  readonly json: Record<string, unknown> | null;
}

let cluster: ThrowawayCluster;
let client: Client;
let stderr = '';
const box = makeRepo(NODE_REPO);
const home = tempDir('crustcore-mcp-home-');
const stateDir = join(home, 'mcp-state');
const env = baseEnv(home);

async function call(name: string, args: Record<string, unknown>): Promise<CallOutcome> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const content = (result.content ?? []) as { type: string; text?: string }[];
  const text = content.map((part) => part.text ?? '').join('');
  let json: Record<string, unknown> | null = null;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = null;
  }
  return { isError: result.isError === true, text, json };
}

function mintToken(taskId: string): { status: number | null; json: Record<string, unknown> | null; stderr: string } {
  return cli(env, ['mcp-token', taskId, '--state-dir', stateDir, '--json']);
}

beforeAll(async () => {
  cluster = await startThrowawayCluster();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ARGS, 'mcp', '--dir', box.repo, '--database-url', cluster.databaseUrl, '--state-dir', stateDir],
    env: env as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  client = new Client({ name: 'crustcore-golden', version: '1.0.0' });
  await client.connect(transport, { timeout: 120_000 });
}, 180_000);

afterAll(async () => {
  await client?.close();
  await cluster?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('crustcore mcp (stdio, official SDK client)', () => {
  it('lists exactly the frozen tool set', async () => {
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(
      ['apply', 'approve', 'create_task', 'diff', 'export', 'stage_diff', 'status', 'verify'].sort(),
    );
    const approve = tools.tools.find((tool) => tool.name === 'approve');
    expect(approve?.inputSchema.required).toEqual(expect.arrayContaining(['task_id', 'token']));
  });

  it('runs a task end to end: create → stage → verify → human token → approve → apply', async () => {
    const created = await call('create_task', { goal: 'fix add()' });
    expect(created.isError, created.text).toBe(false);
    const taskId = String(created.json?.task_id);
    expect(created.json).toMatchObject({ phase: 'IMPLEMENT', verify_command: ['npm', 'test'] });

    // Before verification there is nothing to approve, and no token can be had.
    expect(mintToken(taskId).status).not.toBe(0);

    const staged = await call('stage_diff', { task_id: taskId, diff: FIX, explanation: 'plus, not minus' });
    expect(staged.isError, staged.text).toBe(false);
    expect(staged.json?.staged_hash).toMatch(/^[0-9a-f]{64}$/);
    // Staging never touches the user's tree.
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);

    const diff = await call('diff', { task_id: taskId });
    expect(String(diff.json?.diff)).toContain('+  return a + b;');

    const verified = await call('verify', { task_id: taskId });
    expect(verified.isError, `${verified.text}\n${stderr}`).toBe(false);
    expect(verified.json).toMatchObject({
      passed: true,
      phase: 'APPROVAL_GATE',
      staged_hash: staged.json?.staged_hash,
    });

    // The model cannot approve on its own.
    const forged = await call('approve', { task_id: taskId, token: 'cct_0000000000000000000000000000000' });
    expect(forged.isError).toBe(true);
    expect(forged.text).toMatch(/bad-token/);
    // Without a token the call does not fit the schema: a JSON-RPC error -32602, no approval.
    await expect(call('approve', { task_id: taskId })).rejects.toMatchObject({ code: -32602 });
    const early = await call('apply', { task_id: taskId });
    expect(early.isError).toBe(true);
    expect(early.text).toMatch(/not-approved/);

    const minted = mintToken(taskId);
    expect(minted.status, minted.stderr).toBe(0);
    expect(minted.json).toMatchObject({ ok: true, task_id: taskId, patch_sha256: verified.json?.patch_sha256 });
    expect(String(minted.json?.diff)).toContain('+  return a + b;');
    const token = String(minted.json?.token);

    const approved = await call('approve', { task_id: taskId, token });
    expect(approved.isError, approved.text).toBe(false);
    expect(approved.json).toMatchObject({ approved: true });
    // Single use.
    const replay = await call('approve', { task_id: taskId, token });
    expect(replay.isError).toBe(true);

    const exported = await call('export', { task_id: taskId });
    expect(String(exported.json?.patch)).toContain('+  return a + b;');

    const applied = await call('apply', { task_id: taskId });
    expect(applied.isError, applied.text).toBe(false);
    expect(applied.json).toMatchObject({ applied: true, files: ['src/math.js'], phase: 'COMMITTED' });
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');

    const status = await call('status', { task_id: taskId });
    expect(status.json).toMatchObject({ phase: 'COMMITTED' });
    const again = await call('apply', { task_id: taskId });
    expect(again.isError).toBe(true);

    // The task is in the repository's ledger, as the kernel's events, and the log replays.
    const ledger = ledgerDirOf(home);
    const frames = framesOf(ledger);
    expect(eventKindsFor(frames, taskId)).toEqual(
      expect.arrayContaining(['TaskCreated', 'PatchProposed', 'PatchVerified', 'ApprovalResolved', 'PatchApplied']),
    );
    // The forged token, the spent one and the early apply are each a Rejected answer of the kernel.
    expect(rejectedFor(frames, taskId).map((r) => r.eventKind)).toEqual(
      expect.arrayContaining(['ApprovalResolved', 'IntegrationFailed']),
    );
    const inspect = inspectReplay(env, ledger);
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
    expect(inspect.stdout).toContain(taskId);
  }, 240_000);

  it('a failing verification goes back to IMPLEMENT; tokens are per task; apply over a changed tree is refused and ends the task', async () => {
    const other = makeRepo(NODE_REPO);
    const outside = await call('create_task', { goal: 'x', dir: other.repo });
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/refused/);

    // Tasks start from HEAD (the applied fix is not committed): add() is broken there.
    const first = await call('create_task', { goal: 'make add multiply', verify_command: 'node --test' });
    const taskId = String(first.json?.task_id);
    const wrong = await call('stage_diff', { task_id: taskId, diff: WRONG });
    expect(wrong.isError, wrong.text).toBe(false);
    const failed = await call('verify', { task_id: taskId });
    expect(failed.isError, failed.text).toBe(false);
    expect(failed.json).toMatchObject({ passed: false, phase: 'IMPLEMENT' });
    expect(mintToken(taskId).status).not.toBe(0);

    // A second task gets verified; its token is refused for the first task (and spent).
    const second = await call('create_task', { goal: 'fix add again' });
    const secondId = String(second.json?.task_id);
    await call('stage_diff', { task_id: secondId, diff: FIX });
    const ok = await call('verify', { task_id: secondId });
    expect(ok.json, ok.text).toMatchObject({ passed: true });
    const token = String(mintToken(secondId).json?.token);
    const crossed = await call('approve', { task_id: taskId, token });
    expect(crossed.isError).toBe(true);
    const spent = await call('approve', { task_id: secondId, token });
    expect(spent.isError).toBe(true);
    expect(spent.text).toMatch(/bad-token/);

    // The working tree already holds the first task's (uncommitted) fix: apply refuses, writing nothing.
    const before = readFileSync(join(box.repo, 'src/math.js'), 'utf8');
    const fresh = await call('approve', { task_id: secondId, token: String(mintToken(secondId).json?.token) });
    expect(fresh.isError, fresh.text).toBe(false);
    const drifted = await call('apply', { task_id: secondId });
    expect(drifted.isError).toBe(true);
    expect(drifted.text).toMatch(/^drift: /);
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(before);
    // The kernel ended the task on the failed integration; its Approved is spent.
    expect((await call('status', { task_id: secondId })).json).toMatchObject({ phase: 'ABORTED', approved: false });
    const frames = framesOf(ledgerDirOf(home));
    expect(eventKindsFor(frames, secondId)).toContain('IntegrationFailed');
    // The crossed token was refused by the kernel on the first task (no such approval there).
    expect(rejectedFor(frames, taskId)).toEqual(
      expect.arrayContaining([expect.objectContaining({ eventKind: 'ApprovalResolved', reason: 'unknown-approval' })]),
    );
    const inspect = inspectReplay(env, ledgerDirOf(home));
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
  }, 240_000);

  it("the kernel's revisit budget decides: the fourth failed verification ends the task", async () => {
    const created = await call('create_task', { goal: 'keep failing', verify_command: 'node --test' });
    const taskId = String(created.json?.task_id);
    expect((await call('stage_diff', { task_id: taskId, diff: WRONG })).isError).toBe(false);
    for (let revisit = 1; revisit <= 3; revisit += 1) {
      const failed = await call('verify', { task_id: taskId });
      expect(failed.json, failed.text).toMatchObject({ passed: false, phase: 'IMPLEMENT' });
      expect((await call('status', { task_id: taskId })).json).toMatchObject({ revisits: revisit, max_revisits: 3 });
    }
    const last = await call('verify', { task_id: taskId });
    expect(last.json, last.text).toMatchObject({ passed: false, phase: 'ABORTED' });
    expect(String(last.json?.next)).toMatch(/revisit budget \(3\) is spent/);
    expect((await call('verify', { task_id: taskId })).isError).toBe(true);
    const finished = framesOf(ledgerDirOf(home))
      .filter((f) => f.kind === 'kernel.actions')
      .flatMap((f) => (f.payload as { actions?: { kind: string; taskId?: string; cause?: string }[] }).actions ?? [])
      .filter((a) => a.kind === 'TaskFinished' && a.taskId === taskId);
    expect(finished).toHaveLength(1);
  }, 240_000);

  it('malformed arguments are JSON-RPC errors (-32602) or tool errors, never a crash', async () => {
    // Wrong types or missing fields do not fit the published schema: protocol errors.
    const misfits: [string, Record<string, unknown>, RegExp][] = [
      ['create_task', { goal: 42 }, /goal/],
      ['create_task', {}, /goal/],
      ['verify', { task_id: ['t_x'] }, /task_id/],
      ['status', { task_id: 7 }, /task_id/],
    ];
    for (const [name, args, message] of misfits) {
      await expect(call(name, args), `${name} ${JSON.stringify(args)}`).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(message),
      });
    }
    // Well-typed input that crosses a bound or names nothing: tool errors the model can act on.
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['stage_diff', { task_id: 'nope', diff: FIX }, /task_id/],
      ['stage_diff', { task_id: 't_missing', diff: FIX }, /not-found/],
      ['approve', { task_id: 't_x', token: 'x'.repeat(500) }, /token is 500 bytes/],
    ];
    for (const [name, args, message] of cases) {
      const outcome = await call(name, args);
      expect(outcome.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(outcome.text).toMatch(message);
    }
    const created = await call('create_task', { goal: 'bad diffs' });
    const taskId = String(created.json?.task_id);
    const garbage = await call('stage_diff', { task_id: taskId, diff: '@@ nonsense @@\n+x\n' });
    expect(garbage.isError).toBe(true);
    const stale = await call('stage_diff', { task_id: taskId, diff: FIX.replace('a - b', 'a / b') });
    expect(stale.isError).toBe(true);
    expect(stale.text).toMatch(/does not apply/);
    const traversal = await call('stage_diff', {
      task_id: taskId,
      diff: '--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+x\n',
    });
    expect(traversal.isError).toBe(true);
    await expect(client.callTool({ name: 'rm_rf', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    // Still serving.
    expect((await client.listTools()).tools).toHaveLength(8);
  }, 120_000);

  it('test output that carries a credential comes back redacted', async () => {
    const token = `ghp_${'Q7w8E9r0T1'.repeat(4).slice(0, 36)}`;
    const leaky = `--- a/test/math.test.js\n+++ b/test/math.test.js\n@@ -1,3 +1,4 @@\n import assert from 'node:assert/strict';\n+console.log('GITHUB_TOKEN=${token}');\n import { test } from 'node:test';\n import { add } from '../src/math.js';\n`;
    const created = await call('create_task', { goal: 'leaky test output', verify_command: 'node --test' });
    const taskId = String(created.json?.task_id);
    const staged = await call('stage_diff', { task_id: taskId, diff: leaky });
    expect(staged.isError, staged.text).toBe(false);
    const verified = await call('verify', { task_id: taskId });
    expect(verified.json, verified.text).toMatchObject({ passed: false });
    expect(verified.text).toContain('GITHUB_TOKEN=[REDACTED:');
    // Not in the result, nor in any other tool's answer about the task.
    for (const outcome of [verified, staged, await call('diff', { task_id: taskId })])
      expect(outcome.text).not.toContain(token);
  }, 120_000);

  it('oversized inputs are refused with a clear error; the server keeps serving', async () => {
    const created = await call('create_task', { goal: 'big' });
    const taskId = String(created.json?.task_id);
    const line = `+${'x'.repeat(99)}\n`;
    const big = (bytes: number): string => {
      const count = Math.ceil(bytes / line.length);
      return `--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,${count} @@\n${line.repeat(count)}`;
    };
    // Over the per-diff bound (4 MiB): a tool error naming the bound.
    const five = await call('stage_diff', { task_id: taskId, diff: big(5 * 1024 * 1024) });
    expect(five.isError).toBe(true);
    expect(five.text).toMatch(/diff is \d+ bytes; the limit is 4194304 bytes/);
    // Over the per-message bound (8 MiB): refused before parsing, as a JSON-RPC error.
    await expect(call('stage_diff', { task_id: taskId, diff: big(10 * 1024 * 1024) })).rejects.toThrow(
      /over the 8388608-byte limit/,
    );
    const status = await call('status', { task_id: taskId });
    expect(status.json).toMatchObject({ phase: 'IMPLEMENT', staged: [] });
  }, 120_000);
});
