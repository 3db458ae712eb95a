/**
 * Several daemons on one PostgreSQL (a throwaway cluster), as several hosts
 * would run them: each daemon has its own $CRUSTCORE_HOME. Tasks are tiny git
 * repositories with a failing `node --test` and a sandboxed worker that fixes
 * them. Every task runs exactly once and completes; a daemon killed with
 * SIGKILL mid-task has its job recovered by the other one once the lease runs
 * out.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startThrowawayCluster, type ThrowawayCluster } from '@crustcore/state/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, NODE_REPO } from './cli-harness.js';
import { baseEnv, cli, DaemonProcess, eventually, tempDir } from './daemon-harness.js';

const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";

let cluster: ThrowawayCluster;
const daemons: DaemonProcess[] = [];
const homes: string[] = [];

beforeAll(async () => {
  cluster = await startThrowawayCluster();
}, 60_000);

afterAll(async () => {
  await Promise.all(daemons.map((daemon) => daemon.stop('SIGKILL')));
  await cluster?.stop();
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function startDaemon(databaseUrl: string, owner: string, leaseMs: number): { daemon: DaemonProcess; home: string } {
  const home = tempDir(`crustcore-${owner}-`);
  homes.push(home);
  const daemon = new DaemonProcess(baseEnv(home), [
    '--database-url',
    databaseUrl,
    '--owner',
    owner,
    '--lease-ms',
    String(leaseMs),
    '--poll-ms',
    '200',
    '--workers',
    '1',
  ]);
  daemons.push(daemon);
  return { daemon, home };
}

function jobsOf(databaseUrl: string, home: string): Record<string, unknown>[] {
  const listed = cli(baseEnv(home), ['tasks', '--database-url', databaseUrl, '--json', '--limit', '100']);
  expect(listed.status, listed.stderr).toBe(0);
  return (listed.json?.tasks ?? []) as Record<string, unknown>[];
}

describe('daemons sharing one PostgreSQL', () => {
  it('two daemons: every task runs exactly once and completes; each repository is fixed once', async () => {
    const databaseUrl = await cluster.createDatabase('shared_queue');
    const a = startDaemon(databaseUrl, 'host-a', 10_000);
    const b = startDaemon(databaseUrl, 'host-b', 10_000);
    await Promise.all([
      a.daemon.waitFor((l) => l.event === 'daemon.ready', 90_000, 'daemon a ready'),
      b.daemon.waitFor((l) => l.event === 'daemon.ready', 90_000, 'daemon b ready'),
    ]);
    const clientHome = tempDir('crustcore-client-');
    const repos = [0, 1, 2, 3].map(() => makeRepo(NODE_REPO));
    const queued: string[] = [];
    for (const [index, box] of repos.entries()) {
      // Half straight into the database, half through daemon a's admin socket.
      const target = index % 2 === 0 ? ['--database-url', databaseUrl] : ['--state-dir', join(a.home, 'daemon')];
      const env = index % 2 === 0 ? baseEnv(clientHome) : baseEnv(a.home);
      const added = cli(env, [
        'tasks',
        'add',
        '--dir',
        box.repo,
        '--goal',
        `fix add ${index}`,
        '--worker',
        `sh -c "${FIX_ADD}"`,
        '--approve',
        'auto',
        '--json',
        ...target,
      ]);
      expect(added.status, added.stderr).toBe(0);
      queued.push(String(added.json?.jobId));
    }
    const finished = await eventually(
      () => {
        const jobs = jobsOf(databaseUrl, clientHome).filter((job) => queued.includes(String(job.jobId)));
        return jobs.length === 4 && jobs.every((job) => ['Completed', 'Failed', 'Killed'].includes(String(job.status)))
          ? jobs
          : null;
      },
      240_000,
      'all four tasks to finish',
    );
    for (const job of finished) {
      expect(job, JSON.stringify(finished)).toMatchObject({ status: 'Completed', attempt: 1, outcome: 'completed' });
    }
    for (const box of repos) expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
    // The database says done, but cli() blocks this process, so the daemons' last log lines
    // may still sit unread in their pipes: read up to each job's finish line first
    // (a daemon logs it before it writes the result).
    await Promise.all(
      queued.map((jobId) =>
        Promise.any(
          [a.daemon, b.daemon].map((d) =>
            d.waitFor((l) => l.event === 'job.finished' && l.jobId === jobId, 30_000, `job ${jobId} in a daemon log`),
          ),
        ),
      ),
    );
    // Exactly once: each job started once, across both daemons.
    const starts = [...a.daemon.events('job.started'), ...b.daemon.events('job.started')];
    for (const jobId of queued) expect(starts.filter((line) => line.jobId === jobId)).toHaveLength(1);
    expect(starts).toHaveLength(4);
    const fences = starts.map((line) => String(line.fenceToken));
    expect(new Set(fences).size).toBe(4);
    const status = cli(baseEnv(a.home), ['status', '--state-dir', join(a.home, 'daemon'), '--json']);
    expect(status.json).toMatchObject({ ok: true, owner: 'host-a', engine: 'postgres', paused: false });
    await Promise.all([a.daemon.stop(), b.daemon.stop()]);
    expect(a.daemon.events('daemon.stopped')).toHaveLength(1);

    // Each daemon mirrored the ledger of every project it ran a task in; inspect checks the
    // mirror against the ledger file on the host that owns it.
    const inspectWithMirror = (job: Record<string, unknown>) =>
      cli(baseEnv(job.owner === 'host-a' ? a.home : b.home), [
        'inspect',
        '--dir',
        String(job.stateDir),
        '--database-url',
        databaseUrl,
        '--json',
      ]);
    for (const job of finished) {
      const checked = inspectWithMirror(job);
      expect(checked.status, checked.stdout + checked.stderr).toBe(0);
      expect(checked.json?.mirror).toMatchObject({ consistent: true, behind: 0 });
      expect(Number((checked.json?.mirror as { mirrorHead?: number } | undefined)?.mirrorHead)).toBeGreaterThan(5);
    }
    // A mirror row changed behind the database's back (triggers off, as a superuser could):
    // inspect names the frame and exits 21, while the ledger itself is still intact.
    const { openStateDb } = await import('@crustcore/state');
    const opened = await openStateDb({ databaseUrl });
    if (opened._tag === 'Left') throw new Error(JSON.stringify(opened.left));
    await opened.right.query('ALTER TABLE crust_ledger_mirror DISABLE TRIGGER USER');
    await opened.right.query(`UPDATE crust_ledger_mirror SET kind = 'forged' WHERE seq = 2`);
    await opened.right.query('ALTER TABLE crust_ledger_mirror ENABLE TRIGGER USER');
    await opened.right.close();
    const forged = inspectWithMirror(finished[0] as Record<string, unknown>);
    expect(forged.status, forged.stdout + forged.stderr).toBe(21);
    expect(forged.json).toMatchObject({ ok: true, failure: null, mirror: { consistent: false } });
    expect((forged.json?.mirror as { mismatches?: unknown[] } | undefined)?.mismatches).toContainEqual({
      _tag: 'FieldMismatch',
      seq: 2,
      field: 'kind',
    });
  }, 420_000);

  it('a daemon killed with SIGKILL mid-task: the other recovers its job after the lease runs out', async () => {
    const databaseUrl = await cluster.createDatabase('kill_recovery');
    const a = startDaemon(databaseUrl, 'victim', 2_000);
    await a.daemon.waitFor((l) => l.event === 'daemon.ready', 90_000, 'victim ready');
    const box = makeRepo(NODE_REPO);
    const added = cli(baseEnv(a.home), [
      'tasks',
      'add',
      '--dir',
      box.repo,
      '--goal',
      'fix add slowly',
      '--worker',
      `sh -c "sleep 5; ${FIX_ADD}"`,
      '--approve',
      'auto',
      '--json',
      '--database-url',
      databaseUrl,
    ]);
    expect(added.status, added.stderr).toBe(0);
    const jobId = String(added.json?.jobId);
    await a.daemon.waitFor((l) => l.event === 'job.started' && l.jobId === jobId, 90_000, 'victim to start the job');
    const b = startDaemon(databaseUrl, 'rescuer', 2_000);
    await b.daemon.waitFor((l) => l.event === 'daemon.ready', 90_000, 'rescuer ready');
    await a.daemon.stop('SIGKILL');
    const recovered = await b.daemon.waitFor(
      (l) => l.event === 'leases.recovered' && Array.isArray(l.requeued) && l.requeued.includes(jobId),
      60_000,
      'the lease to be recovered',
    );
    expect(recovered.requeued).toContain(jobId);
    const done = await b.daemon.waitFor(
      (l) => l.event === 'job.finished' && l.jobId === jobId,
      120_000,
      'rescuer to finish',
    );
    expect(done).toMatchObject({ status: 'Completed', outcome: 'completed' });
    expect(Number(done.attempt)).toBeGreaterThanOrEqual(2);
    const job = jobsOf(databaseUrl, b.home).find((entry) => entry.jobId === jobId);
    expect(job).toMatchObject({ status: 'Completed', owner: 'rescuer' });
    // The victim never finished it; the rescuer ran it under a newer fencing token.
    expect(a.daemon.events('job.finished')).toHaveLength(0);
    const victimStart = a.daemon.events('job.started').find((l) => l.jobId === jobId);
    const rescuerStart = b.daemon.events('job.started').find((l) => l.jobId === jobId);
    expect(BigInt(String(rescuerStart?.fenceToken))).toBeGreaterThan(BigInt(String(victimStart?.fenceToken)));
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
    await b.daemon.stop();
  }, 300_000);
});
