/**
 * No apply without a kernel-minted Approved, on the daemon's surface. Two
 * queued tasks wait for a person (`--approve ask`); an attacker who can reach
 * the admin socket answers task A's approval with grants that name something
 * else: a made-up operation hash, the genuine one in upper case, the genuine
 * one with its last digit changed, task B's operation (approve of another
 * patch), and task B's approval id. Each is refused, A's tree stays as it was,
 * and each is a kernel `Rejected` in A's ledger (the desk hands refused grants
 * to the kernel with the answer). After the genuine grant applies A, the same
 * grant again finds nothing to approve, and A's grant presented on B is
 * refused and recorded in B's ledger. CONTROL: the genuine approval id and
 * operation hash through the same socket do apply — so the refusals come from
 * the checks, not from a door that was never open.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, NODE_REPO, type Sandbox } from '../golden/cli-harness.js';
import { baseEnv, cli, DaemonProcess, rawAdmin, tempDir } from '../golden/daemon-harness.js';
import { type Frame, framesOf, rejectedFor } from '../golden/mcp-harness.js';

const home = tempDir('crustcore-daemon-approvals-');
const env = baseEnv(home);
const socket = join(home, 'daemon', 'admin.sock');
const BUGGY = NODE_REPO['src/math.js'];
let daemon: DaemonProcess;

interface Pending {
  readonly approvalId: string;
  readonly taskId: string;
  readonly opHash: string;
}

beforeAll(async () => {
  daemon = new DaemonProcess(env, ['--poll-ms', '200', '--workers', '2', '--approval-timeout', '900']);
  await daemon.waitFor((line) => line.event === 'daemon.ready', 120_000, 'the daemon to start');
}, 150_000);

afterAll(async () => {
  await daemon?.stop();
  rmSync(home, { recursive: true, force: true });
}, 60_000);

/** `fix` differs per task, so the two tasks' patches (and operation hashes) differ. */
function enqueue(box: Sandbox, fix: string): { taskId: string; jobId: string } {
  const worker = `sh -c "sed -i 's/a - b/${fix}/' src/math.js"`;
  const args = ['tasks', 'add', '--dir', box.repo, '--goal', 'fix add', '--worker', worker, '--approve', 'ask'];
  const added = cli(env, [...args, '--json']);
  expect(added.status, added.stderr + added.stdout).toBe(0);
  return { taskId: String(added.json?.taskId), jobId: String(added.json?.jobId) };
}

const rawRequest = (request: Record<string, unknown>) => rawAdmin(socket, `${JSON.stringify(request)}\n`, 1, 60_000);

async function admin(request: Record<string, unknown>): Promise<{ ok: boolean; error?: { code: string } }> {
  const [line] = await rawRequest(request);
  return JSON.parse(line as string) as { ok: boolean; error?: { code: string } };
}

async function pendingFor(taskId: string): Promise<Pending> {
  await daemon.waitFor((l) => l.event === 'approval.pending' && l.taskId === taskId, 300_000, `${taskId} to ask`);
  const [line] = await rawRequest({ op: 'approvals' });
  const listed = (JSON.parse(line as string) as { result: { approvals: Pending[] } }).result.approvals;
  const mine = listed.find((approval) => approval.taskId === taskId);
  if (mine === undefined) throw new Error(`no pending approval for ${taskId}: ${line}`);
  return mine;
}

/** The frames of the project ledger that holds `taskId` (each repository has its own). */
function ledgerFramesOf(taskId: string): Frame[] {
  const projects = join(home, 'projects');
  for (const name of readdirSync(projects)) {
    const frames = framesOf(join(projects, name));
    if (frames.some((f) => f.kind === 'TaskCreated' && (f.payload as { taskId?: string }).taskId === taskId)) {
      return frames;
    }
  }
  throw new Error(`no ledger under ${projects} holds ${taskId}`);
}

const lastDigitChanged = (hash: string): string => `${hash.slice(0, -1)}${hash.endsWith('0') ? '1' : '0'}`;

describe('daemon: no apply without a kernel-minted Approved', () => {
  it('forged, misdirected and reused grants are refused, recorded as Rejected, and leave the tree untouched', async () => {
    const [boxA, boxB] = [makeRepo(NODE_REPO), makeRepo(NODE_REPO)] as [Sandbox, Sandbox];
    const a = enqueue(boxA, 'a + b');
    const b = enqueue(boxB, 'b + a');
    const [pa, pb] = [await pendingFor(a.taskId), await pendingFor(b.taskId)];
    expect(pb.opHash).not.toBe(pa.opHash);
    const attacks: Record<string, unknown>[] = [
      { id: a.taskId, approvalId: pa.approvalId, opHash: 'c0ffee'.repeat(10).slice(0, 64) },
      { id: a.taskId, approvalId: pa.approvalId, opHash: pa.opHash.toUpperCase() },
      { id: a.jobId, approvalId: pa.approvalId, opHash: lastDigitChanged(pa.opHash) },
      { id: pa.approvalId, approvalId: pa.approvalId, opHash: pb.opHash },
      { id: a.taskId, approvalId: pb.approvalId, opHash: pb.opHash },
    ];
    for (const attack of attacks) {
      const reply = await admin({ op: 'approve', ...attack });
      expect(reply, JSON.stringify(attack)).toMatchObject({ ok: false, error: { code: 'conflict' } });
      expect(readFileSync(join(boxA.repo, 'src/math.js'), 'utf8')).toBe(BUGGY);
    }

    // CONTROL: the genuine values through the same socket apply.
    expect(await admin({ op: 'approve', id: a.taskId, approvalId: pa.approvalId, opHash: pa.opHash })).toMatchObject({
      ok: true,
    });
    const doneA = await daemon.waitFor((l) => l.event === 'job.finished' && l.jobId === a.jobId, 300_000, 'A');
    expect(doneA).toMatchObject({ status: 'Completed', outcome: 'completed' });
    expect(readFileSync(join(boxA.repo, 'src/math.js'), 'utf8')).not.toBe(BUGGY);

    // A spent grant finds nothing; A's grant on B is refused there.
    const reused = await admin({ op: 'approve', id: a.taskId, approvalId: pa.approvalId, opHash: pa.opHash });
    expect(reused).toMatchObject({ ok: false, error: { code: 'not-found' } });
    const onB = await admin({ op: 'approve', id: b.taskId, approvalId: pa.approvalId, opHash: pa.opHash });
    expect(onB).toMatchObject({ ok: false, error: { code: 'conflict' } });
    expect(await admin({ op: 'deny', id: b.taskId })).toMatchObject({ ok: true });
    const doneB = await daemon.waitFor((l) => l.event === 'job.finished' && l.jobId === b.jobId, 300_000, 'B');
    expect(doneB).toMatchObject({ status: 'Failed', outcome: 'denied' });
    expect(readFileSync(join(boxB.repo, 'src/math.js'), 'utf8')).toBe(BUGGY);

    const rejectedA = rejectedFor(ledgerFramesOf(a.taskId), a.taskId);
    expect(rejectedA).toHaveLength(attacks.length);
    for (const r of rejectedA) expect(r).toMatchObject({ eventKind: 'ApprovalResolved', reason: 'approval-mismatch' });
    const rejectedB = rejectedFor(ledgerFramesOf(b.taskId), b.taskId);
    expect(rejectedB).toEqual([{ eventKind: 'ApprovalResolved', reason: 'approval-mismatch', taskId: b.taskId }]);
  }, 900_000);
});
