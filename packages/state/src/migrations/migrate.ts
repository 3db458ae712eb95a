/**
 * The migration runner. Versions apply in order, each in its own transaction
 * that also records it in `crust_schema_migrations`; a transaction-scoped
 * advisory lock serializes runners in several processes, and each runner
 * re-reads what is applied after taking it. Running again is a no-op.
 */
import { err, ok, type Result, sha256Hex } from '@crustcore/kernel';
import type { Db, DbExecutor } from '../db.js';
import type { MigrationChecksumMismatch, SchemaTooNew } from '../errors.js';
import { migration001 } from './001-tasks.js';
import { migration002 } from './002-revisit-budget.js';
import { migration003 } from './003-jobs.js';
import { migration004 } from './004-staging.js';
import { migration005 } from './005-ledger-mirror.js';
import { migration006 } from './006-ledger-mirror-per-ledger.js';
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  migration001,
  migration002,
  migration003,
  migration004,
  migration005,
  migration006,
];

export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.length;

export type MigrationError = MigrationChecksumMismatch | SchemaTooNew;

export interface MigrationReport {
  readonly applied: readonly number[];
  readonly version: number;
}

export interface MigrateOptions {
  /** Stop at this version (tests migrate an old schema forward). Default: latest. */
  readonly targetVersion?: number;
}

/** Checksum of a migration's exact statements: the text that ran is the text that was recorded. */
export const migrationChecksum = (migration: Migration): string =>
  sha256Hex(`${migration.version}\n${migration.name}\n${migration.statements.join('\n;\n')}`);

// Any fixed key works; it only has to be the same for every runner.
const ADVISORY_KEY = `hashtext('crustcore.state.migrate')`;

interface AppliedRow {
  readonly version: number;
  readonly checksum: string;
}

async function prepare(tx: DbExecutor, schema: string): Promise<readonly AppliedRow[]> {
  await tx.query(`SELECT pg_advisory_xact_lock(${ADVISORY_KEY})`);
  await tx.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await tx.query(
    `CREATE TABLE IF NOT EXISTS "${schema}".crust_schema_migrations (
       version integer PRIMARY KEY,
       name text NOT NULL,
       checksum text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
  const applied = await tx.query<AppliedRow>('SELECT version, checksum FROM crust_schema_migrations ORDER BY version');
  return applied.rows;
}

function check(applied: readonly AppliedRow[]): MigrationError | null {
  for (const row of applied) {
    const known = MIGRATIONS[row.version - 1];
    if (known === undefined) {
      return { _tag: 'SchemaTooNew', databaseVersion: row.version, codeVersion: LATEST_SCHEMA_VERSION };
    }
    const expected = migrationChecksum(known);
    if (row.checksum !== expected) {
      return { _tag: 'MigrationChecksumMismatch', version: row.version, recorded: row.checksum, expected };
    }
  }
  return null;
}

/** The highest applied version, 0 for an empty schema. */
export async function schemaVersion(db: Db): Promise<number> {
  const exists = await db.query<{ present: boolean }>(
    `SELECT to_regclass(format('%I.crust_schema_migrations', $1::text)) IS NOT NULL AS present`,
    [db.schema],
  );
  if (exists.rows[0]?.present !== true) return 0;
  const result = await db.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM crust_schema_migrations',
  );
  return result.rows[0]?.version ?? 0;
}

export async function migrate(db: Db, options: MigrateOptions = {}): Promise<Result<MigrationError, MigrationReport>> {
  const target = options.targetVersion ?? LATEST_SCHEMA_VERSION;
  if (!Number.isSafeInteger(target) || target < 0 || target > LATEST_SCHEMA_VERSION) {
    throw new RangeError(`targetVersion must be 0..${LATEST_SCHEMA_VERSION}`);
  }
  const appliedNow: number[] = [];
  // One migration per transaction; the loop is bounded by the number of migrations.
  for (let step = 0; step <= MIGRATIONS.length; step += 1) {
    const outcome = await db.transaction(async (tx): Promise<MigrationError | number | null> => {
      const applied = await prepare(tx, db.schema);
      const problem = check(applied);
      if (problem !== null) return problem;
      const current = applied.length === 0 ? 0 : (applied[applied.length - 1]?.version ?? 0);
      if (current >= target) return null;
      const next = MIGRATIONS[current];
      if (next === undefined || next.version !== current + 1) throw new Error('migration list is not contiguous');
      // Lets this transaction edit the read-only catalogs.
      await tx.query(`SELECT set_config('crustcore.migrating', 'on', true)`);
      for (const statement of next.statements) await tx.query(statement);
      await tx.query(
        'INSERT INTO crust_schema_migrations (version, name, checksum) VALUES ($1::int4, $2::text, $3::text)',
        [next.version, next.name, migrationChecksum(next)],
      );
      return next.version;
    });
    if (outcome === null) return ok({ applied: appliedNow, version: await schemaVersion(db) });
    if (typeof outcome === 'number') appliedNow.push(outcome);
    else return err(outcome);
  }
  throw new Error('migration loop did not converge');
}
