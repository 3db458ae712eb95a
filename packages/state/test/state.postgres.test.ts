/** The state suite on a throwaway PostgreSQL 15+ cluster started by the test. */
import { describe, expect, it } from 'vitest';
import { createTask, getTask, LATEST_SCHEMA_VERSION, openStateDb, schemaVersion } from '../src/index.js';
import { right, taskId } from './assertions.js';
import { PostgresHarness } from './engines.js';
import { defineStateSuite } from './suite.js';

const engine = new PostgresHarness();
defineStateSuite(engine);

describe('openStateDb (postgres)', () => {
  it('opens by URL, migrates, and a second process-like pool sees the same state', async () => {
    const a = right(await openStateDb({ databaseUrl: engine.databaseUrl, schema: 'open_url' }));
    const b = right(await openStateDb({ databaseUrl: engine.databaseUrl, schema: 'open_url', maxConnections: 1 }));
    try {
      expect(a.engine).toBe('postgres');
      expect(await schemaVersion(b)).toBe(LATEST_SCHEMA_VERSION);
      const id = taskId();
      right(await createTask(a, { id }));
      expect((await getTask(b, id))?.phase).toBe('INIT');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
