/**
 * The state suite on embedded PGlite (one shared in-memory instance for the
 * file), then the data-directory guard on an on-disk database restored from a
 * snapshot of the shared one.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TaskId } from '@crustcore/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTask,
  DataDirLock,
  type Db,
  getTask,
  LATEST_SCHEMA_VERSION,
  LOCK_FILE_NAME,
  migrate,
  openStateDb,
  schemaVersion,
} from '../src/index.js';
import { left, right, taskId } from './assertions.js';
import { PgliteHarness } from './engines.js';
import { defineStateSuite } from './suite.js';

const engine = new PgliteHarness();
defineStateSuite(engine);

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OPENER = fileURLToPath(new URL('./fixtures/open-pglite.ts', import.meta.url));

describe('PGlite on disk: snapshot restore and the data-directory guard', () => {
  let root: string;
  let dataDir: string;
  let restored: Db;
  let id: TaskId;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'crust-pglite-'));
    dataDir = join(root, 'data');
    const source = right(engine.instance.view('snapshot_src'));
    id = taskId();
    right(await migrate(source));
    right(await createTask(source, { id }));
    const snapshot = await engine.instance.dumpSnapshot();
    restored = right(
      await openStateDb({ dataDir, loadSnapshot: snapshot, schema: 'snapshot_src', relaxedDurability: true }),
    );
  }, 120_000);
  afterAll(async () => {
    await restored?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('restores a migrated database from a snapshot into a directory', async () => {
    expect(restored.engine).toBe('pglite');
    expect(await schemaVersion(restored)).toBe(LATEST_SCHEMA_VERSION);
    expect((await getTask(restored, id))?.phase).toBe('INIT');
  });

  it('a second process opening the same directory fails fast with DataDirLocked', () => {
    const opened = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', OPENER, dataDir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(opened.status).toBe(0);
    const report = JSON.parse(opened.stdout.trim()) as { _tag: string; holderPid: number; reason: string };
    expect(report).toMatchObject({ _tag: 'DataDirLocked', holderPid: process.pid, reason: 'held by a live process' });
    // The holder's lock is untouched.
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')).pid).toBe(process.pid);
  });

  it('a second opener in the same process is refused too', async () => {
    const again = left(await openStateDb({ dataDir }), 'DataDirLocked');
    expect(again).toMatchObject({ reason: 'held by this process' });
  });

  it('takes over a lock left by a dead process, never a live one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crust-lock-'));
    try {
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      });
      writeFileSync(
        join(dir, LOCK_FILE_NAME),
        JSON.stringify({ pid: Number(dead.stdout), host: hostname(), startTime: null, nonce: 'stale' }),
      );
      const taken = right(DataDirLock.acquire(dir));
      expect(left(DataDirLock.acquire(dir), 'DataDirLocked')).toMatchObject({ reason: 'held by this process' });
      taken.release();
      right(DataDirLock.acquire(dir)).release();
      // A lock that cannot be read might be one being written: never stolen.
      writeFileSync(join(dir, LOCK_FILE_NAME), 'not json');
      left(DataDirLock.acquire(dir), 'DataDirLocked');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
