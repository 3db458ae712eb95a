/** The suite every engine must pass. */
import { afterAll, beforeAll } from 'vitest';
import type { EngineHarness } from './engines.js';
import { jobSuite } from './suite-jobs.js';
import { leaseAndLedgerSuite } from './suite-leases-ledger.js';
import { migrationSuite } from './suite-migrations.js';
import { processSuite } from './suite-processes.js';
import { stagingSuite } from './suite-staging.js';
import { taskSuite } from './suite-tasks.js';

export function defineStateSuite(engine: EngineHarness): void {
  beforeAll(() => engine.setup(), 120_000);
  afterAll(() => engine.teardown(), 60_000);
  migrationSuite(engine);
  taskSuite(engine);
  jobSuite(engine);
  processSuite(engine);
  stagingSuite(engine);
  leaseAndLedgerSuite(engine);
}
