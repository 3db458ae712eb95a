/**
 * No apply without a kernel-minted Approved, on the MCP surface. A model
 * holding the MCP tools (official SDK client over stdio against `crustcore
 * mcp`, real git, real bubblewrap for verify) tries to get a verified patch
 * written without a person's approval of exactly that patch:
 *
 *   - forged tokens (made-up, one character off a real one, other encodings);
 *   - a spent token, reused (while the task integrates, and after it finished);
 *   - a token for task A presented on task B, and content re-staged after
 *     verification or approval (an approval of another patch);
 *   - apply without approve (after verify, and before it).
 *
 * Each attempt leaves the tree untouched and is in the repository's ledger
 * as a Rejected answer of the kernel for that task. CONTROL, for every task:
 * the genuine path (the person's token from `crustcore mcp-token`, approve,
 * apply) does write the tree — so each refusal comes from the kernel's
 * checks, not from a door that was never open. Files, layouts and token
 * spellings vary so no single name or shape is what is refused.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo } from '../golden/cli-harness.js';
import { baseEnv, tempDir } from '../golden/daemon-harness.js';
import {
  framesOf,
  inspectReplay,
  ledgerDirOf,
  type McpSession,
  mintToken,
  rejectedFor,
  startMcp,
} from '../golden/mcp-harness.js';

/** Tests pass at the base, so every task that adds a file verifies. */
const PASSING_REPO: Readonly<Record<string, string>> = {
  'package.json': '{ "name": "mcp-redteam", "type": "module", "scripts": { "test": "node --test" } }\n',
  'test/ok.test.js':
    "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\n\ntest('ok', () => assert.equal(1 + 1, 2));\n",
};

const box = makeRepo(PASSING_REPO);
const home = tempDir('crustcore-mcp-redteam-');
const stateDir = join(home, 'mcp-state');
const env = baseEnv(home);
let mcp: McpSession;

const creating = (path: string, content: string): string =>
  `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${content}\n`;

const absent = (path: string): boolean => !existsSync(join(box.repo, path));

async function verifiedTask(path: string, content: string): Promise<string> {
  const created = await mcp.call('create_task', { goal: `add ${path}` });
  expect(created.isError, created.text).toBe(false);
  const taskId = String(created.json?.task_id);
  const staged = await mcp.call('stage_diff', { task_id: taskId, diff: creating(path, content) });
  expect(staged.isError, staged.text).toBe(false);
  const verified = await mcp.call('verify', { task_id: taskId });
  expect(verified.json, `${verified.text}\n${mcp.stderr()}`).toMatchObject({ passed: true, phase: 'APPROVAL_GATE' });
  return taskId;
}

function personsToken(taskId: string): string {
  const minted = mintToken(env, taskId, stateDir);
  expect(minted.status, minted.stderr).toBe(0);
  return String(minted.json?.token);
}

/** CONTROL: the genuine path writes the tree. */
async function genuineApply(taskId: string, path: string, content: string, token?: string): Promise<void> {
  const approved = await mcp.call('approve', { task_id: taskId, token: token ?? personsToken(taskId) });
  expect(approved.isError, approved.text).toBe(false);
  const applied = await mcp.call('apply', { task_id: taskId });
  expect(applied.json, applied.text).toMatchObject({ applied: true, phase: 'COMMITTED' });
  expect(readFileSync(join(box.repo, path), 'utf8')).toBe(`${content}\n`);
}

const rejections = (taskId: string) => rejectedFor(framesOf(ledgerDirOf(home)), taskId);

beforeAll(async () => {
  mcp = await startMcp(env, ['--dir', box.repo, '--verify', 'node --test', '--ephemeral', '--state-dir', stateDir]);
}, 180_000);

afterAll(async () => {
  await mcp?.client.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(box.root, { recursive: true, force: true });
});

describe('MCP: no apply without a kernel-minted Approved', () => {
  it('forged tokens: refused by the kernel, tree untouched; CONTROL: the real token then applies', async () => {
    const path = 'docs/forged.md';
    const taskId = await verifiedTask(path, 'forged?');
    const real = personsToken(taskId);
    const flipped = `${real.slice(0, -1)}${real.endsWith('a') ? 'b' : 'a'}`;
    const forgeries = [`cct_${'0'.repeat(32)}`, `cct_${'z'.repeat(32)}`, flipped, real.toUpperCase(), ` ${real}`];
    for (const token of forgeries) {
      const answer = await mcp.call('approve', { task_id: taskId, token });
      expect(answer.isError, token).toBe(true);
      expect(answer.text).toMatch(/bad-token/);
      expect(absent(path)).toBe(true);
    }
    const refused = rejections(taskId).filter((r) => r.eventKind === 'ApprovalResolved');
    expect(refused).toHaveLength(forgeries.length);
    expect(new Set(refused.map((r) => r.reason))).toEqual(new Set(['approval-mismatch']));
    await genuineApply(taskId, path, 'forged?', real);
  }, 240_000);

  it('a spent token, reused: refused while integrating and after the task finished', async () => {
    const path = 'a/b/c/spent.txt';
    const taskId = await verifiedTask(path, 'once');
    const token = personsToken(taskId);
    expect((await mcp.call('approve', { task_id: taskId, token })).isError).toBe(false);
    const reused = await mcp.call('approve', { task_id: taskId, token });
    expect(reused.text).toMatch(/^bad-token: the token was already used/);
    expect(absent(path)).toBe(true);
    expect(rejections(taskId).map((r) => r.reason)).toEqual(['unknown-approval']);
    // CONTROL: the approval the first use won still applies.
    const applied = await mcp.call('apply', { task_id: taskId });
    expect(applied.json, applied.text).toMatchObject({ applied: true });
    const after = await mcp.call('approve', { task_id: taskId, token });
    expect(after.text).toMatch(/^bad-token/);
    expect(rejections(taskId).map((r) => r.reason)).toEqual(['unknown-approval', 'unknown-task']);
    expect(readFileSync(join(box.repo, path), 'utf8')).toBe('once\n');
  }, 240_000);

  it("task A's token on task B: refused for B (no such approval), spent for A; CONTROL: each task's own token applies", async () => {
    const [pathA, pathB] = ['cross-a.txt', 'lib/cross-b.js'];
    const a = await verifiedTask(pathA, 'a');
    const b = await verifiedTask(pathB, '// b');
    const tokenA = personsToken(a);
    const crossed = await mcp.call('approve', { task_id: b, token: tokenA });
    expect(crossed.text).toMatch(/^bad-token: the token was issued for another task/);
    expect(absent(pathA) && absent(pathB)).toBe(true);
    expect(rejections(b).map((r) => r.reason)).toEqual(['unknown-approval']);
    // Spent on the wrong task: it is gone for its own task too.
    expect((await mcp.call('approve', { task_id: a, token: tokenA })).text).toMatch(/^bad-token/);
    expect(rejections(a).map((r) => r.reason)).toEqual(['approval-mismatch']);
    expect(absent(pathA)).toBe(true);
    await genuineApply(b, pathB, '// b');
    await genuineApply(a, pathA, 'a');
  }, 240_000);

  it('content re-staged after verify or approval: the kernel refuses the new patch; apply writes only what was approved', async () => {
    const early = 'restaged/early.txt';
    const late = 'restaged-late.md';
    const first = await verifiedTask(early, 'verified');
    const token = personsToken(first);
    const beforeApproval = await mcp.call('stage_diff', { task_id: first, diff: creating(early, 'swapped') });
    expect(beforeApproval.text).toMatch(/^wrong-phase: /);
    const second = await verifiedTask(late, 'approved');
    expect((await mcp.call('approve', { task_id: second, token: personsToken(second) })).isError).toBe(false);
    const afterApproval = await mcp.call('stage_diff', { task_id: second, diff: creating('evil.sh', 'rm -rf /') });
    expect(afterApproval.text).toMatch(/^wrong-phase: /);
    expect(absent(early) && absent(late) && absent('evil.sh')).toBe(true);
    for (const taskId of [first, second]) {
      expect(rejections(taskId)).toEqual([
        expect.objectContaining({ eventKind: 'PatchProposed', reason: 'illegal-transition' }),
      ]);
    }
    // CONTROL: the genuine path writes exactly the verified content, never the re-staged one.
    await genuineApply(first, early, 'verified', token);
    const applied = await mcp.call('apply', { task_id: second });
    expect(applied.json, applied.text).toMatchObject({ applied: true });
    expect(readFileSync(join(box.repo, late), 'utf8')).toBe('approved\n');
    expect(absent('evil.sh')).toBe(true);
  }, 240_000);

  it('apply without approve (after verify, and before it): refused by the kernel; CONTROL: approve, then apply', async () => {
    const path = 'unapproved/x.json';
    const taskId = await verifiedTask(path, '{}');
    const early = await mcp.call('apply', { task_id: taskId });
    expect(early.text).toMatch(/^not-approved: /);
    expect(absent(path)).toBe(true);
    const created = await mcp.call('create_task', { goal: 'never verified' });
    const unverified = String(created.json?.task_id);
    await mcp.call('stage_diff', { task_id: unverified, diff: creating('unverified.txt', 'x') });
    expect((await mcp.call('apply', { task_id: unverified })).text).toMatch(/^not-approved: /);
    expect(absent('unverified.txt')).toBe(true);
    for (const id of [taskId, unverified]) {
      expect(rejections(id)).toEqual([
        expect.objectContaining({ eventKind: 'IntegrationFailed', reason: 'illegal-transition' }),
      ]);
    }
    await genuineApply(taskId, path, '{}');
  }, 240_000);

  it('the whole ledger, every attempt in it, replays (inspect --replay exit 0)', () => {
    const inspect = inspectReplay(env, ledgerDirOf(home));
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
  }, 120_000);
});
