/**
 * The daemon's pieces in process, without a database: the admin protocol
 * codecs, the admin socket server under bad input, the approval desk (ask
 * becomes a pending approval; timeout, wrong operation and a lost lease all
 * deny), the per-repository queue and the task payload codec.
 */

import { statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADMIN_LIMITS,
  ApprovalDesk,
  adminOk,
  callAdmin,
  decodeAdminRequest,
  decodeTaskJobPayload,
  encodeAdminReply,
  KeyedQueue,
  type RunningJob,
  runtimeTaskId,
  startAdminServer,
} from '@crustcore/daemon';
import type { ApprovalId, Hash32, TaskId } from '@crustcore/kernel';
import type { ApprovalContext, ApprovalRequest } from '@crustcore/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rawAdmin, tempDir } from './daemon-harness.js';

const request = (overrides: Partial<ApprovalRequest> = {}): ApprovalRequest =>
  ({
    kind: 'RequestApproval',
    taskId: 't_abc' as TaskId,
    approvalId: 'a_one' as ApprovalId,
    subject: 'integrate',
    operation: { op: 'integrate', patchHash: 'p', treeHash: 't', baseCommit: 'b', risks: [] },
    description: 'apply verified patch p onto b',
    opHash: 'f'.repeat(64) as Hash32,
    nonce: 'n',
    expiresAt: Date.now() + 60_000,
    requiresHuman: true,
    risks: [],
    ...overrides,
  }) as ApprovalRequest;

const context: ApprovalContext = { goal: 'fix', diffText: '+x\n', files: [], evidence: 'npm test → exit 0' };
const job = { jobId: 'j_one', taskId: 't_abc' };
const held = async (): Promise<boolean> => true;

describe('admin protocol', () => {
  it('decodes every op and refuses anything else with a stable code', () => {
    expect(decodeAdminRequest('{"op":"status"}')._tag).toBe('Right');
    expect(decodeAdminRequest('{"op":"kill","id":"j_x","requestId":"r1"}')).toMatchObject({ _tag: 'Right' });
    const cases: [string, string][] = [
      ['', 'bad-json'],
      ['{', 'bad-json'],
      ['null', 'bad-request'],
      ['{"op":"approve","id":"t_x"}', 'bad-request'],
      ['{"op":"tasks","limit":100000}', 'bad-request'],
      ['{"op":"cancel","id":"a b"}', 'bad-request'],
    ];
    for (const [line, code] of cases) {
      const decoded = decodeAdminRequest(line);
      expect(decoded._tag, line).toBe('Left');
      if (decoded._tag === 'Left') expect(decoded.left).toMatchObject({ ok: false, error: { code } });
    }
  });

  it('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (line) => {
        const decoded = decodeAdminRequest(line);
        expect(['Left', 'Right']).toContain(decoded._tag);
      }),
      { numRuns: 500 },
    );
  });

  it('a reply over the bound becomes a too-large error line', () => {
    const line = encodeAdminReply(adminOk({ blob: 'x'.repeat(ADMIN_LIMITS.maxReplyBytes) }));
    expect(JSON.parse(line)).toMatchObject({ ok: false, error: { code: 'too-large' } });
  });
});

describe('admin socket server', () => {
  it('0600 socket; a throwing handler is an internal error reply; the server keeps serving', async () => {
    const dir = tempDir('crustcore-admin-');
    const path = join(dir, 'state', 'admin.sock');
    const server = await startAdminServer(path, async (req) => {
      if (req.op === 'pause') throw new Error('boom');
      return adminOk({ op: req.op });
    });
    try {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'state')).mode & 0o777).toBe(0o700);
      const replies = await rawAdmin(path, '{"op":"pause"}\n{"op":"resume","requestId":3}\n', 2);
      expect(JSON.parse(replies[0] as string)).toMatchObject({
        ok: false,
        error: { code: 'internal', message: 'boom' },
      });
      expect(JSON.parse(replies[1] as string)).toEqual({ ok: true, result: { op: 'resume' }, requestId: 3 });
      const called = await callAdmin(path, { op: 'status' });
      expect(called).toMatchObject({ _tag: 'Right', right: { ok: true } });
      // A second server on the same path is refused while the first lives.
      await expect(startAdminServer(path, async () => adminOk(null))).rejects.toThrow(/already runs/);
    } finally {
      await server.close();
    }
    const gone = await callAdmin(path, { op: 'status' });
    expect(gone).toMatchObject({ _tag: 'Left', left: { _tag: 'NoDaemon' } });
    // A stale socket file is cleared by the next server.
    const again = await startAdminServer(path, async () => adminOk(null));
    await again.close();
  });
});

/** Handshake: resolves once the desk lists `count` pending requests (the channel registered them). */
async function untilPending(desk: ApprovalDesk, count: number): Promise<void> {
  while (desk.list().length < count) await new Promise((resume) => setImmediate(resume));
}

describe('approval desk', () => {
  it('ask: pending until a person grants exactly the shown operation', async () => {
    const desk = new ApprovalDesk({ timeoutMs: 60_000 });
    const answer = desk.channelFor(job, 'ask', held).resolve(request(), context);
    await untilPending(desk, 1);
    expect(desk.list()).toHaveLength(1);
    expect(desk.resolve('t_abc', { approvalId: 'a_one', opHash: '0'.repeat(64) }, true)).toMatchObject({
      _tag: 'ApprovalChanged',
    });
    expect(desk.resolve('t_abc', { approvalId: 'a_other', opHash: 'f'.repeat(64) }, true)).toMatchObject({
      _tag: 'ApprovalChanged',
    });
    expect(desk.resolve('t_abc', { approvalId: 'a_one', opHash: 'f'.repeat(64) }, true)).toMatchObject({
      _tag: 'Resolved',
      decision: 'granted',
    });
    // The two refused grants travel with the answer: the runtime hands them to the kernel, which records
    // its refusal of each in the task's ledger.
    await expect(answer).resolves.toEqual({
      decision: 'granted',
      by: 'human',
      refused: [
        { opHash: '0'.repeat(64), why: 'the operation hash does not match the pending approval' },
        { opHash: 'f'.repeat(64), why: 'the pending approval is a_one, not a_other' },
      ],
    });
    expect(desk.list()).toHaveLength(0);
  });

  it('nobody answering before the timeout is a denial', async () => {
    const desk = new ApprovalDesk({ timeoutMs: 50 });
    await expect(desk.channelFor(job, 'ask', held).resolve(request(), context)).resolves.toEqual({
      decision: 'denied',
      by: 'human',
      refused: [],
    });
    expect(desk.list()).toHaveLength(0);
  });

  it('a grant is fenced: a daemon that lost the lease denies', async () => {
    const desk = new ApprovalDesk({ timeoutMs: 60_000 });
    const answer = desk.channelFor(job, 'ask', async () => false).resolve(request(), context);
    await untilPending(desk, 1);
    desk.resolve('j_one', { approvalId: 'a_one', opHash: 'f'.repeat(64) }, true);
    await expect(answer).resolves.toMatchObject({ decision: 'denied' });
    await expect(
      desk.channelFor(job, 'auto', async () => false).resolve(request({ requiresHuman: false }), context),
    ).resolves.toMatchObject({ decision: 'denied' });
  });

  it('auto never answers what needs a person; deny denies; a stopped job is denied at once', async () => {
    const desk = new ApprovalDesk({ timeoutMs: 60_000 });
    await expect(desk.channelFor(job, 'auto', held).resolve(request(), context)).resolves.toMatchObject({
      decision: 'denied',
    });
    await expect(
      desk.channelFor(job, 'auto', held).resolve(request({ requiresHuman: false }), context),
    ).resolves.toEqual({ decision: 'granted', by: 'policy-auto' });
    await expect(desk.channelFor(job, 'deny', held).resolve(request(), context)).resolves.toMatchObject({
      decision: 'denied',
    });
    const waiting = desk.channelFor(job, 'ask', held).resolve(request(), context);
    await untilPending(desk, 1);
    desk.denyJob('j_one');
    await expect(waiting).resolves.toMatchObject({ decision: 'denied' });
  });
});

describe('task jobs', () => {
  it('the payload codec refuses what the daemon must not run', () => {
    const good = {
      v: 1,
      dir: '/repo',
      goal: 'fix',
      verify: null,
      verifyFromUser: false,
      worker: ['sh', '-c', 'true'],
      approve: 'ask',
      maxRevisits: 3,
      timeoutSeconds: 60,
    };
    expect(decodeTaskJobPayload(good)._tag).toBe('Right');
    const withBackend = { ...good, worker: null, backend: 'codex', model: 'gpt-5-codex' };
    expect(decodeTaskJobPayload(withBackend)._tag).toBe('Right');
    expect(decodeTaskJobPayload({ ...good, worker: null, backend: 'native' })._tag).toBe('Right');
    for (const bad of [
      { ...good, worker: null },
      { ...good, backend: 'codex' },
      { ...withBackend, backend: 'gpt' },
      { ...good, model: 'gpt-5' },
      { ...withBackend, model: 'm'.repeat(300) },
      { ...good, v: 2 },
      { ...good, worker: [] },
      { ...good, worker: [''] },
      { ...good, approve: 'yes' },
      { ...good, goal: '' },
      { ...good, goal: 'x'.repeat(9_000) },
      { ...good, maxRevisits: 1.5 },
      { ...good, timeoutSeconds: 0 },
      { ...good, dir: 'a\u0000b' },
      null,
      'string',
    ]) {
      expect(decodeTaskJobPayload(bad)._tag, JSON.stringify(bad)).toBe('Left');
    }
  });

  it('retries run under their own task id', () => {
    expect(runtimeTaskId('t_abc', 1)).toBe('t_abc');
    expect(runtimeTaskId('t_abc', 2)).toBe('t_abc-a2');
    expect(runtimeTaskId(null, 1)).toMatch(/^t_/);
  });

  it('jobs on one repository run one at a time; others in parallel', async () => {
    const queue = new KeyedQueue();
    const order: string[] = [];
    // a1 can only finish once b1 has started (a handshake, not a sleep): were /b queued behind
    // /a, b1 would never start and the test would time out instead of passing.
    let releaseA1: () => void = () => undefined;
    const a1Gate = new Promise<void>((resolve) => {
      releaseA1 = resolve;
    });
    const step = (key: string, name: string, gate: Promise<void>) =>
      queue.run(key, async () => {
        order.push(`${name}:start`);
        if (name === 'b1') releaseA1();
        await gate;
        order.push(`${name}:end`);
      });
    await Promise.all([
      step('/a', 'a1', a1Gate),
      step('/a', 'a2', Promise.resolve()),
      step('/b', 'b1', Promise.resolve()),
    ]);
    expect(order.indexOf('a2:start')).toBeGreaterThan(order.indexOf('a1:end'));
    expect(order.indexOf('b1:start')).toBeLessThan(order.indexOf('a1:end'));
  });

  it('a running job needs a real lease (type-level)', () => {
    const fake = {
      // @ts-expect-error a plain object is not a JobLease (private fields)
      lease: { jobId: 'j_x', token: 1n },
      payload: decodeTaskJobPayload(null) as never,
      signal: new AbortController().signal,
      approvals: { resolve: async () => ({ decision: 'denied', by: 'human' }) },
    } satisfies RunningJob;
    expect(fake.lease.jobId).toBe('j_x');
  });
});
