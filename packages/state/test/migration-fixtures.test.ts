/**
 * Migrations from every released state schema (issue #17 item 7): each
 * fixtures/schema/v<N>.sql is a database made by the code at version N, with
 * rows (make-schema-fixtures.ts wrote it through pg_dump). Loaded into a fresh
 * PostgreSQL, the current code opens it, migrates it to the latest version
 * keeping every row, and the rules of the new versions hold on the old rows.
 * CONTROL: the same fixture with one recorded checksum altered is refused, so
 * the migrator really reads what the old database recorded.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Db,
  getBlob,
  getJob,
  getTask,
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  migrate,
  migrationChecksum,
  openPostgresDb,
  schemaVersion,
  transitionTask,
} from '../src/index.js';
import { left, refusedBySql, right } from './assertions.js';
import { PostgresHarness } from './engines.js';
import {
  FIXTURE_BLOB_TEXT,
  FIXTURE_JOB,
  FIXTURE_TASK_INIT,
  FIXTURE_TASK_PLANNED,
  fixtureSchema,
} from './fixtures/schema-fixture-rows.js';

const DIR = join(import.meta.dirname, 'fixtures', 'schema');
const engine = new PostgresHarness();
let loader: postgres.Sql;
const opened: Db[] = [];

beforeAll(async () => {
  await engine.setup();
  loader = postgres(engine.databaseUrl, { max: 1, onnotice: () => {} });
}, 120_000);
afterAll(async () => {
  for (const db of opened) await db.close();
  await loader?.end();
  await engine.teardown();
}, 60_000);

/** Runs a fixture (many statements: the simple query protocol) under `schema`, then opens a Db on it. */
async function load(sql: string, schema: string): Promise<Db> {
  await loader.unsafe(sql);
  const db = right(openPostgresDb({ databaseUrl: engine.databaseUrl, schema, maxConnections: 1 }));
  opened.push(db);
  return db;
}

const versions = readdirSync(DIR)
  .map((name) => /^v(\d+)\.sql$/.exec(name)?.[1])
  .filter((v): v is string => v !== undefined)
  .map(Number)
  .sort((a, b) => a - b);

describe('migrations from every released schema', () => {
  it('there is a fixture for every version before the latest', () => {
    expect(versions).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION - 1 }, (_, i) => i + 1));
  });

  for (const version of versions) {
    it(`v${version}: opens, migrates to the latest keeping its rows, and the new rules hold on them`, async () => {
      const db = await load(readFileSync(join(DIR, `v${version}.sql`), 'utf8'), fixtureSchema(version));
      expect(await schemaVersion(db)).toBe(version);
      const report = right(await migrate(db));
      expect(report).toEqual({
        applied: MIGRATIONS.filter((m) => m.version > version).map((m) => m.version),
        version: LATEST_SCHEMA_VERSION,
      });
      const recorded = await db.query<{ version: number; checksum: string }>(
        'SELECT version, checksum FROM crust_schema_migrations ORDER BY version',
      );
      expect(recorded.rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, checksum: migrationChecksum(m) })));

      expect(await getTask(db, FIXTURE_TASK_INIT)).toMatchObject({ phase: 'INIT', title: 'waiting', revisits: 0 });
      expect(await getTask(db, FIXTURE_TASK_PLANNED)).toMatchObject({
        phase: 'PLAN',
        title: 'planned',
        maxRevisits: 3,
      });
      if (version >= 3) {
        expect(await getJob(db, FIXTURE_JOB)).toMatchObject({ status: 'Queued', taskId: FIXTURE_TASK_INIT });
        const blobs = await db.query<{ sha256: string }>('SELECT sha256 FROM crust_blobs');
        const blob = await getBlob(db, blobs.rows[0]?.sha256 ?? '');
        expect(Buffer.from(blob ?? new Uint8Array()).toString('utf8')).toBe(FIXTURE_BLOB_TEXT);
      }
      // The latest triggers govern the old rows: an illegal move is refused by SQL, a legal one goes.
      await refusedBySql(
        db,
        `UPDATE crust_tasks SET phase = 'COMMITTED' WHERE id = $1::text`,
        [FIXTURE_TASK_PLANNED],
        'ZC001',
      );
      right(await transitionTask(db, FIXTURE_TASK_PLANNED, 'IMPLEMENT'));
      right(await transitionTask(db, FIXTURE_TASK_PLANNED, 'VERIFY'));
      // Since v4, VERIFY → APPROVAL_GATE needs a passing verification run on the staged content.
      left(await transitionTask(db, FIXTURE_TASK_PLANNED, 'APPROVAL_GATE'), 'VerificationMissing');
      expect(right(await migrate(db))).toEqual({ applied: [], version: LATEST_SCHEMA_VERSION });
    }, 60_000);
  }

  it('CONTROL: a fixture whose recorded checksum was altered is refused, not migrated', async () => {
    const version = versions[0] ?? 1;
    const text = readFileSync(join(DIR, `v${version}.sql`), 'utf8');
    const first = MIGRATIONS[0];
    if (first === undefined) throw new Error('no migrations');
    const recorded = migrationChecksum(first);
    expect(text).toContain(recorded);
    const altered = text
      .replaceAll(fixtureSchema(version), 'crustcore_fixture_altered')
      .replace(recorded, 'f'.repeat(64));
    const db = await load(altered, 'crustcore_fixture_altered');
    expect(left(await migrate(db), 'MigrationChecksumMismatch')).toMatchObject({ version: 1 });
  }, 60_000);
});
