/**
 * A bound that is hit becomes a result, never a hang: with a budget of one
 * model request, the REAL CLI's second request is refused (429) by the
 * proxy and the worker is stopped at once instead of retrying with back-off.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { boundedModelBudget, type WorkerCliName } from '../src/index.js';
import {
  FAILING_NODE_PROJECT,
  makeWorkspace,
  runScriptedWorker,
  type Workspace,
  workerInput,
} from './worker-harness.js';

const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const workspace of workspaces.splice(0)) await workspace.cleanup();
});

const CLIS: readonly WorkerCliName[] = ['codex', 'claude'];

describe.each(CLIS)('%s (real CLI) under a model budget', (name) => {
  it('is stopped when the budget refuses its next request', async () => {
    const taskId = `budget-${name}`;
    const workspace = await makeWorkspace(taskId, FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    const budget = boundedModelBudget({ maxRequests: 1 });
    const run = await runScriptedWorker(
      name,
      workspace,
      [{ kind: 'shell', command: 'echo one > notes.txt' }],
      workerInput(taskId),
      { budget },
    );
    try {
      expect(run.result.failure).toBe('model budget exhausted: the worker was stopped');
      expect(run.report?.budgetExhausted).toBe(true);
      expect(budget.spent().requests).toBe(1);
      expect(run.model.requests.filter((request) => request.toolOutputs.length > 0)).toHaveLength(0);
      // Refused before forwarding, shaped like the provider's own "quota spent" answer (429 / 400).
      expect(run.proxyRecords.some((record) => record.refused?.startsWith('model budget exhausted') === true)).toBe(
        true,
      );
      expect(run.proxyRecords.filter((record) => record.usage !== null)).toHaveLength(1);
      // What it did before the stop is still read from the worktree.
      expect(run.result.patch._tag).toBe('Patch');
    } finally {
      await run.model.close();
    }
  });
});
