/**
 * One daemon on embedded PGlite (the default engine; one instance for the
 * whole file), controlled only through its admin socket: queue tasks, watch
 * them run, pause/cancel/resume, approvals answered by a person (`crustcore
 * approve` / `deny`), kill a running task, bad input on the socket, and a
 * task written by the real Codex CLI against a scripted model on 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodePayload, nodeSha256, scanFile } from '@crustcore/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedModel, startScriptedModel } from '../packages/workers/test/scripted-model.js';
import { requireCli, TEST_API_KEY } from '../packages/workers/test/worker-harness.js';
import { makeRepo, NODE_REPO } from './cli-harness.js';
import { baseEnv, cli, DaemonProcess, rawAdmin, tempDir } from './daemon-harness.js';

const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";

const home = tempDir('crustcore-pglite-daemon-');
const env = baseEnv(home);
const stateDir = join(home, 'daemon');
const socket = join(stateDir, 'admin.sock');
let daemon: DaemonProcess;
let model: ScriptedModel;

beforeAll(async () => {
  model = await startScriptedModel('openai-responses', [
    { kind: 'shell', command: FIX_ADD },
    { kind: 'message', text: 'Fixed.\n{"summary":"add() adds","done":true,"commands_run":[],"risks":[]}' },
  ]);
  // Only the daemon holds the provider key; clients that queue work never see it.
  const daemonEnv = { ...env, OPENAI_API_KEY: TEST_API_KEY, CRUSTCORE_CODEX_UPSTREAM: model.origin };
  daemon = new DaemonProcess(daemonEnv, [
    // No test here is about a lost lease (daemon-postgres.test.ts is): a lease longer than any stall
    // a loaded machine can cause, so a late heartbeat never re-runs a job behind a test's back.
    '--lease-ms',
    '120000',
    // Every poll is a claim query on the one PGlite; jobs are awaited by their log lines, never by
    // how soon they are claimed, so a slower poll costs only latency.
    '--poll-ms',
    '1000',
    '--workers',
    '2',
    '--approval-timeout',
    '180',
  ]);
  await daemon.waitFor((line) => line.event === 'daemon.ready', 120_000, 'the daemon to start');
}, 150_000);

afterAll(async () => {
  const code = await daemon?.stop();
  expect(code).toBe(0);
  expect(daemon.events('daemon.stopped')).toHaveLength(1);
  await model?.close();
  rmSync(home, { recursive: true, force: true });
}, 60_000);

function add(
  repo: string,
  worker: string,
  approve: 'auto' | 'ask',
  goal = 'fix add',
): { taskId: string; jobId: string } {
  const added = cli(env, [
    'tasks',
    'add',
    '--dir',
    repo,
    '--goal',
    goal,
    '--worker',
    worker,
    '--approve',
    approve,
    '--json',
  ]);
  expect(added.status, added.stderr + added.stdout).toBe(0);
  return { taskId: String(added.json?.taskId), jobId: String(added.json?.jobId) };
}

const finished = (jobId: string, timeoutMs = 180_000) =>
  daemon.waitFor((line) => line.event === 'job.finished' && line.jobId === jobId, timeoutMs, `job ${jobId} to finish`);

describe('crustcore daemon on PGlite, through its admin socket', () => {
  it('the socket is 0600 in a 0700 directory; malformed lines get error replies, in order', async () => {
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    const replies = await rawAdmin(
      socket,
      [
        'not json at all',
        '{"op":"nope"}',
        '{"op":"cancel"}',
        '{"op":"cancel","id":"../../etc"}',
        '["status"]',
        `{"op":"enqueue","task":{"v":1,"dir":"/tmp","goal":"","verify":null,"verifyFromUser":false,"worker":["true"],"approve":"maybe","maxRevisits":3,"timeoutSeconds":60}}`,
        '{"op":"status","requestId":7}',
        '',
      ].join('\n'),
      7,
    );
    const parsed = replies.map(
      (line) => JSON.parse(line) as { ok: boolean; requestId?: number; error?: { code: string } },
    );
    expect(parsed.slice(0, 6).map((reply) => reply.error?.code)).toEqual([
      'bad-json',
      'bad-request',
      'bad-request',
      'bad-request',
      'bad-request',
      'bad-request',
    ]);
    expect(parsed[6]).toMatchObject({ ok: true, requestId: 7 });
    const long = await rawAdmin(socket, `{"op":"status","pad":"${'x'.repeat(300_000)}"}\n{"op":"status"}\n`, 2);
    expect(JSON.parse(long[0] as string)).toMatchObject({ ok: false, error: { code: 'too-large' } });
    expect(JSON.parse(long[1] as string)).toMatchObject({ ok: true });
    const status = cli(env, ['status', '--json']);
    expect(status.json).toMatchObject({ ok: true, engine: 'pglite', paused: false, workers: 2 });
  }, 120_000);

  it('runs queued tasks (two at once, different repositories) and fixes each', async () => {
    const boxes = [makeRepo(NODE_REPO), makeRepo(NODE_REPO)];
    const jobs = boxes.map((box, index) => add(box.repo, `sh -c "${FIX_ADD}"`, 'auto', `fix add ${index}`));
    for (const job of jobs)
      expect(await finished(job.jobId)).toMatchObject({ status: 'Completed', outcome: 'completed' });
    for (const box of boxes) expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
    const listed = cli(env, ['tasks', '--json']);
    const tasks = (listed.json?.tasks ?? []) as Record<string, unknown>[];
    for (const job of jobs)
      expect(tasks.find((t) => t.jobId === job.jobId)).toMatchObject({ status: 'Completed', attempt: 1 });
  }, 300_000);

  it("--backend codex: the real Codex CLI writes the patch with the daemon's key; a backend without a key fails once", async () => {
    requireCli('codex');
    const box = makeRepo(NODE_REPO);
    const queue = (backend: string) =>
      cli(env, [
        'tasks',
        'add',
        '--dir',
        box.repo,
        '--goal',
        'make add() add',
        '--backend',
        backend,
        '--approve',
        'auto',
        '--json',
      ]);
    const added = queue('codex');
    expect(added.status, added.stderr + added.stdout).toBe(0);
    expect(await finished(String(added.json?.jobId))).toMatchObject({ status: 'Completed', outcome: 'completed' });
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
    expect(model.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of model.requests) expect(request.headers.authorization).toBe(`Bearer ${TEST_API_KEY}`);
    expect(daemon.lines.some((line) => JSON.stringify(line).includes(TEST_API_KEY))).toBe(false);

    // The daemon has no Anthropic key: the job fails with the fix, and is not retried.
    const keyless = queue('claude');
    expect(keyless.status, keyless.stderr).toBe(0);
    const failed = await finished(String(keyless.json?.jobId));
    expect(failed).toMatchObject({ status: 'Failed' });
    expect(JSON.stringify(failed)).toContain('ANTHROPIC_API_KEY');
    expect(cli(env, ['tasks', 'add', '--dir', box.repo, '--goal', 'x', '--backend', 'gpt']).stderr).toContain(
      'unknown backend "gpt"',
    );
  }, 300_000);

  it('pause, cancel a queued task (it never runs), resume', async () => {
    expect(cli(env, ['pause', '--json']).json).toMatchObject({ ok: true, paused: true });
    const box = makeRepo(NODE_REPO);
    const job = add(box.repo, `sh -c "${FIX_ADD}"`, 'auto');
    const cancelled = cli(env, ['cancel', job.taskId, '--json']);
    expect(cancelled.json).toMatchObject({ ok: true, jobId: job.jobId, status: 'Killed' });
    expect(cli(env, ['resume', '--json']).json).toMatchObject({ ok: true, paused: false });
    const missing = cli(env, ['cancel', 't_doesnotexist', '--json']);
    expect(missing.status).toBe(2);
    expect(missing.json).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(daemon.events('job.started').some((line) => line.jobId === job.jobId)).toBe(false);
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
  }, 120_000);

  it('--approve ask waits for a person: `crustcore approve` grants exactly the pending operation', async () => {
    const box = makeRepo(NODE_REPO);
    const job = add(box.repo, `sh -c "${FIX_ADD}"`, 'ask');
    const pending = await daemon.waitFor(
      (line) => line.event === 'approval.pending' && line.taskId === job.taskId,
      180_000,
      'a pending approval',
    );
    // Nothing is written while it waits.
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
    const shown = cli(env, ['approve', job.taskId]);
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(String(pending.approvalId));
    expect(shown.stdout).toContain('+  return a + b;');
    expect(await finished(job.jobId)).toMatchObject({ status: 'Completed', outcome: 'completed' });
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
  }, 300_000);

  it('`crustcore deny` denies: the job fails and the tree is untouched', async () => {
    const box = makeRepo(NODE_REPO);
    const job = add(box.repo, `sh -c "${FIX_ADD}"`, 'ask');
    await daemon.waitFor(
      (line) => line.event === 'approval.pending' && line.taskId === job.taskId,
      180_000,
      'approval',
    );
    expect(cli(env, ['deny', job.taskId, '--json']).json).toMatchObject({ ok: true, decision: 'denied' });
    expect(await finished(job.jobId)).toMatchObject({ status: 'Failed', outcome: 'denied' });
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
  }, 300_000);

  it('kill stops a running task now; its worker dies and nothing is applied', async () => {
    const box = makeRepo(NODE_REPO);
    const job = add(box.repo, `sh -c "sleep 300; ${FIX_ADD}"`, 'auto');
    await daemon.waitFor(
      (line) => line.event === 'job.started' && line.jobId === job.jobId,
      120_000,
      'the job to start',
    );
    // Handshake: the task's ledger shows the kernel planned it (the attempt is starting), so the kill
    // stops a running task rather than one the kernel has not heard of yet.
    for (let tries = 0; !ledgerOf(job.taskId).kinds.includes('TaskPlanned'); tries++) {
      if (tries > 480) throw new Error('the task was never planned');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const killed = cli(env, ['kill', job.jobId, '--json']);
    expect(killed.json).toMatchObject({ ok: true, status: 'Killed', stoppingHere: true });
    await daemon.waitFor(
      (line) => line.event === 'job.abandoned' && line.jobId === job.jobId && line.reason === 'kill',
      90_000,
      'the run to stop (the worker is killed, not waited for)',
    );
    // SIGKILL is delivered asynchronously: the worker must be gone, so wait for its pid to vanish
    // (a bound on failure, not a window the pass depends on).
    const survivors = (): string =>
      execFileSync('sh', ['-c', 'pgrep -f "^sleep 300$" || true'], { encoding: 'utf8' }).trim();
    for (let tries = 0; survivors() !== '' && tries < 240; tries++)
      await new Promise((resolve) => setTimeout(resolve, 250));
    // On failure: who the survivor is (its parents, group, session) and what the daemon said.
    const left = survivors();
    const why =
      left === ''
        ? ''
        : `${execFileSync('sh', ['-c', `ps -eo pid,ppid,pgid,sid,etimes,args | grep -v grep | grep -E "sleep 300|bwrap|crustcore|perl" || true`], { encoding: 'utf8' })}\n${JSON.stringify(daemon.lines.filter((l) => l.jobId === job.jobId || l.taskId === job.taskId))}`;
    expect(left, why).toBe('');
    const listed = cli(env, ['tasks', '--json']);
    expect(((listed.json?.tasks ?? []) as Record<string, unknown>[]).find((t) => t.jobId === job.jobId)).toMatchObject({
      status: 'Killed',
    });
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
    // The kill reached the kernel as an event, recorded in the task's ledger: TaskKilled, answered
    // with a hard StopTask and TaskFinished killed (a cancel would be TaskCancelled, a soft stop).
    const story = ledgerOf(job.taskId);
    expect(story.kinds).toContain('TaskKilled');
    expect(story.kinds).not.toContain('TaskCancelled');
    expect(story.actions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'StopTask', hard: true }),
        expect.objectContaining({ kind: 'TaskFinished', outcome: 'killed' }),
      ]),
    );
  }, 180_000);
});

/** Frame kinds and kernel actions of one task, from the project ledgers under the daemon's home. */
function ledgerOf(taskId: string): { kinds: string[]; actions: Record<string, unknown>[] } {
  const kinds: string[] = [];
  const actions: Record<string, unknown>[] = [];
  const projects = join(home, 'projects');
  for (const project of existsSync(projects) ? readdirSync(projects) : []) {
    const log = join(projects, project, 'events.log');
    if (!existsSync(log)) continue;
    scanFile(log, 0, nodeSha256, (frame) => {
      if (frame.taskId !== taskId) return true;
      kinds.push(frame.kind);
      const payload = decodePayload(frame);
      if (frame.kind === 'kernel.actions' && payload._tag === 'Right') {
        actions.push(...((payload.right as { actions: Record<string, unknown>[] }).actions ?? []));
      }
      return true;
    });
  }
  return { kinds, actions };
}
