/**
 * New PGlite databases start from the build's empty-cluster template instead
 * of running initdb (src/pglite-template.ts). What must hold: the template
 * exists after a build and belongs to the installed PGlite; a database made
 * from it is a real, durable cluster; a directory that already holds a
 * cluster is never overwritten by it; another PGlite version never uses it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PGLITE_SETTINGS, PgliteInstance } from '../src/pglite-db.js';
import { installedPgliteVersion, templateFor, templatePath, unpackTemplate } from '../src/pglite-template.js';

const scratch = mkdtempSync(join(tmpdir(), 'crustcore-pglite-template-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function openDb(dataDir: string) {
  const opened = await PgliteInstance.open({ dataDir });
  if (opened._tag === 'Left') throw new Error(JSON.stringify(opened.left));
  const view = opened.right.view('public');
  if (view._tag === 'Left') throw new Error(JSON.stringify(view.left));
  return { instance: opened.right, db: view.right };
}

describe('the empty-cluster template', () => {
  it('is built for the installed PGlite (npm run build writes it)', () => {
    const version = installedPgliteVersion();
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(existsSync(templatePath(version as string)), 'run `npx turbo run build` first').toBe(true);
    expect(templateFor(join(scratch, 'new'))).toBeInstanceOf(Blob);
    expect(templateFor(undefined)).toBeInstanceOf(Blob);
  });

  it('is not used for a directory that already holds a cluster, nor by another PGlite version', () => {
    const withCluster = mkdtempSync(join(scratch, 'cluster-'));
    writeFileSync(join(withCluster, 'PG_VERSION'), '18\n');
    expect(templateFor(withCluster)).toBeUndefined();
    expect(templateFor(join(scratch, 'new'), '0.0.0-another-build')).toBeUndefined();
    expect(templateFor(join(scratch, 'new'), null)).toBeUndefined();
  });

  it('makes a real, durable database: what is written survives a close and a reopen', async () => {
    const dataDir = join(scratch, 'durable');
    const first = await openDb(dataDir);
    await first.db.query('CREATE TABLE notes (id int PRIMARY KEY, body text)');
    await first.db.query("INSERT INTO notes VALUES (1, 'kept')");
    await first.instance.close();
    // Reopened as an existing cluster: the template is not applied over it.
    expect(templateFor(dataDir)).toBeUndefined();
    const second = await openDb(dataDir);
    expect((await second.db.query<{ body: string }>('SELECT body FROM notes')).rows).toEqual([{ body: 'kept' }]);
    // The start-up settings hold over what initdb wrote into the cluster's postgresql.conf.
    for (const [name, value] of Object.entries(PGLITE_SETTINGS)) {
      const shown = await second.db.query<{ value: string }>('SELECT current_setting($1) AS value', [name]);
      expect(shown.rows, name).toEqual([{ value }]);
    }
    await second.instance.close();
  });

  // A hang guard, not a bound: a PGlite start takes tens of seconds on a loaded 2-core machine.
  it('is written into a new directory by Node, PG_VERSION last: a half-written directory is written again', {
    timeout: 180_000,
  }, async () => {
    const dataDir = join(scratch, 'half-written');
    expect(unpackTemplate(dataDir)).toBe(true);
    expect(readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
    expect(unpackTemplate(dataDir), 'a cluster is never written over').toBe(false);
    // A crash before the last file: no PG_VERSION, and a file left torn.
    rmSync(join(dataDir, 'PG_VERSION'));
    writeFileSync(join(dataDir, 'global', 'pg_control'), 'torn');
    const db = await openDb(dataDir);
    expect((await db.db.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
    await db.instance.close();
    expect(unpackTemplate(join(scratch, 'other-version'), '0.0.0-another-build')).toBe(false);
    expect(existsSync(join(scratch, 'other-version'))).toBe(false);
  });
});
