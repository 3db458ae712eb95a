/**
 * `crustcore backup` beside a running daemon (issue #17 item 7): backup takes
 * the writers' locks, so while a real daemon holds its embedded database it
 * refuses (exit 75, naming the directory and the daemon's pid) and writes
 * nothing; once the daemon stops, the backup takes the database, and a daemon
 * started on the restored home still has the task queued before the backup.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, makeRepo, NODE_REPO } from './cli-harness.js';
import { baseEnv, cli, DaemonProcess, tempDir } from './daemon-harness.js';

beforeAll(() => buildCli(), 60_000);

const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe('backup and a running daemon', () => {
  it('refuses while the daemon holds its database; after it stops, the restored home keeps the queued task', async () => {
    const home = tempDir('crustcore-backup-daemon-');
    cleanup.push(home);
    const box = makeRepo(NODE_REPO);
    cleanup.push(box.root);
    const env = baseEnv(home);
    const daemon = new DaemonProcess(env, ['--poll-ms', '200']);
    await daemon.waitFor((line) => line.event === 'daemon.ready', 120_000, 'the daemon to start');
    expect(cli(env, ['pause', '--json']).json).toMatchObject({ ok: true, paused: true });
    const added = cli(env, [
      'tasks',
      'add',
      '--dir',
      box.repo,
      '--goal',
      'fix add',
      '--worker',
      `sh -c "${FIX_ADD}"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(added.status, added.stderr).toBe(0);

    const refused = cli(env, ['backup', '--out', join(box.root, 'live.ccb')]);
    expect(refused.status, refused.stdout + refused.stderr).toBe(75);
    expect(refused.stderr).toContain(join(home, 'daemon', 'pglite'));
    expect(refused.stderr).toContain(`pid ${daemon.child.pid}`);
    expect(existsSync(join(box.root, 'live.ccb'))).toBe(false);

    expect(await daemon.stop()).toBe(0);
    const taken = cli(env, ['backup', '--out', join(box.root, 'stopped.ccb'), '--json']);
    expect(taken.status, taken.stderr).toBe(0);

    const restoredHome = join(box.root, 'restored');
    expect(cli(env, ['restore', join(box.root, 'stopped.ccb'), '--home', restoredHome]).status).toBe(0);
    expect(readdirSync(join(restoredHome, 'daemon', 'pglite'))).toContain('PG_VERSION');
    const restoredEnv = baseEnv(restoredHome);
    const second = new DaemonProcess(restoredEnv, ['--poll-ms', '200']);
    try {
      await second.waitFor((line) => line.event === 'daemon.ready', 120_000, 'the restored daemon to start');
      const listed = cli(restoredEnv, ['tasks', '--json']);
      const tasks = (listed.json?.tasks ?? []) as Record<string, unknown>[];
      expect(tasks.map((t) => t.taskId)).toContain(added.json?.taskId);
    } finally {
      await second.stop();
    }
  }, 240_000);
});
