import { describe, expect, it } from 'vitest';
import {
  getTask,
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  migrate,
  migrationChecksum,
  schemaVersion,
  transitionTask,
} from '../src/index.js';
import { left, refusedBySql, right, taskId } from './assertions.js';
import type { EngineHarness } from './engines.js';

export function migrationSuite(engine: EngineHarness): void {
  describe(`migrations (${engine.name})`, () => {
    it('migrates an old schema version forward, keeping and upgrading its rows', async () => {
      const db = await engine.open('mig_forward');
      expect(await schemaVersion(db)).toBe(0);
      const first = right(await migrate(db, { targetVersion: 1 }));
      expect(first).toEqual({ applied: [1], version: 1 });

      // A version-1 database: tasks without a revisit budget.
      const old = taskId();
      await db.query(`INSERT INTO crust_tasks (id, title) VALUES ($1::text, 'from v1')`, [old]);
      await db.query(`UPDATE crust_tasks SET phase = 'PLAN' WHERE id = $1::text`, [old]);
      const columns = await db.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = $1::text AND table_name = 'crust_tasks'`,
        [db.schema],
      );
      expect(columns.rows.map((row) => row.column_name)).not.toContain('revisits');
      // Version 1 already refuses illegal moves.
      await refusedBySql(db, `UPDATE crust_tasks SET phase = 'COMMITTED' WHERE id = $1::text`, [old], 'ZC001');

      const rest = right(await migrate(db));
      expect(rest.applied).toEqual(MIGRATIONS.slice(1).map((migration) => migration.version));
      expect(rest.version).toBe(LATEST_SCHEMA_VERSION);

      const upgraded = await getTask(db, old);
      expect(upgraded).toMatchObject({ phase: 'PLAN', phaseSeq: 1, revisits: 0, maxRevisits: 3, title: 'from v1' });
      // The replaced trigger now counts revisits on the old row.
      right(await transitionTask(db, old, 'IMPLEMENT'));
      for (let revisit = 1; revisit <= 3; revisit += 1) {
        right(await transitionTask(db, old, 'VERIFY'));
        expect(right(await transitionTask(db, old, 'IMPLEMENT')).revisits).toBe(revisit);
      }
      right(await transitionTask(db, old, 'VERIFY'));
      left(await transitionTask(db, old, 'IMPLEMENT'), 'RevisitBudgetExhausted');
    });

    it('concurrent runners apply each version once; running again is a no-op', async () => {
      const [a, b] = await engine.competitors('mig_race', 2);
      if (a === undefined || b === undefined) throw new Error('two connections expected');
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      const applied = [...right(ra).applied, ...right(rb).applied].sort((x, y) => x - y);
      expect(applied).toEqual(MIGRATIONS.map((migration) => migration.version));
      expect(right(await migrate(a))).toEqual({ applied: [], version: LATEST_SCHEMA_VERSION });
      const recorded = await a.query<{ version: number; checksum: string }>(
        'SELECT version, checksum FROM crust_schema_migrations ORDER BY version',
      );
      expect(recorded.rows).toEqual(
        MIGRATIONS.map((migration) => ({ version: migration.version, checksum: migrationChecksum(migration) })),
      );
    });

    it('refuses a database whose recorded migration differs, or that is newer than the code', async () => {
      // Runs after the race test, on its migrated schema.
      const db = await engine.open('mig_race');
      await db.query(`UPDATE crust_schema_migrations SET checksum = 'edited' WHERE version = 2`);
      const mismatch = left(await migrate(db), 'MigrationChecksumMismatch');
      expect(mismatch).toMatchObject({ version: 2, recorded: 'edited' });

      await db.query('UPDATE crust_schema_migrations SET checksum = $1::text WHERE version = 2', [
        migrationChecksum(MIGRATIONS[1] ?? MIGRATIONS[0]!),
      ]);
      await db.query(`INSERT INTO crust_schema_migrations (version, name, checksum) VALUES (99, 'future', 'x')`);
      expect(left(await migrate(db), 'SchemaTooNew')).toMatchObject({ databaseVersion: 99 });
    });
  });
}
