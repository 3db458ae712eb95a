/**
 * The REAL Codex and Claude Code CLIs under a token budget smaller than one
 * of their requests' worst case (Claude Code asks for 128,000 output tokens;
 * Codex names no cap, so the proxy inserts its default). The reservation
 * does not fit, so the request is refused before a byte reaches the
 * provider, with an error shaped like the provider's own "quota spent", and
 * the worker is stopped. CONTROL: with a budget of the old shape (asked "may
 * I?" at the start, charged at the end) the same CLI's request reaches the
 * provider carrying an output cap far above the budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { boundedModelBudget, type ModelBudget, type WorkerCliName } from '../packages/workers/src/index.js';
import {
  FAILING_NODE_PROJECT,
  makeWorkspace,
  runScriptedWorker,
  type Workspace,
  workerInput,
} from '../packages/workers/test/worker-harness.js';

const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const workspace of workspaces.splice(0)) await workspace.cleanup();
});

const BUDGET_TOKENS = 20_000;
const CLIS: readonly WorkerCliName[] = ['codex', 'claude'];

/** The output cap a captured request body carries (whichever field its wire uses). */
const capOf = (body: string): number => {
  const parsed = JSON.parse(body) as { max_tokens?: number; max_output_tokens?: number };
  return parsed.max_tokens ?? parsed.max_output_tokens ?? Number.POSITIVE_INFINITY;
};

describe.each(CLIS)('redteam: the real %s CLI against a budget smaller than one request', (name) => {
  it('CONTROL: a check-then-charge budget forwards a request that may bill far more than the budget', async () => {
    const taskId = `budget-control-${name}`;
    const workspace = await makeWorkspace(taskId, FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    let spent = 0;
    const checkThenCharge: ModelBudget = {
      mayRequest: () => spent < BUDGET_TOKENS,
      charge: (usage) => {
        spent += usage.inputTokens + usage.outputTokens;
      },
    };
    const run = await runScriptedWorker(name, workspace, [{ kind: 'message', text: 'done' }], workerInput(taskId), {
      budget: checkThenCharge,
    });
    try {
      expect(run.model.requests.length).toBeGreaterThanOrEqual(1);
      // Claude Code names 128,000; Codex names none and gets the proxy's default (32,768) inserted.
      const forwardedCaps = run.model.requests.map((request) => capOf(request.body));
      expect(Math.max(...forwardedCaps)).toBeGreaterThan(BUDGET_TOKENS);
    } finally {
      await run.model.close();
    }
  });

  it('is refused before any byte reaches the provider and stopped with the budget failure', async () => {
    const taskId = `budget-reserve-${name}`;
    const workspace = await makeWorkspace(taskId, FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    const budget = boundedModelBudget({ maxTokens: BUDGET_TOKENS });
    const run = await runScriptedWorker(name, workspace, [{ kind: 'message', text: 'done' }], workerInput(taskId), {
      budget,
    });
    try {
      expect(run.model.requests).toHaveLength(0);
      expect(run.model.connections()).toBe(0);
      expect(run.result.failure).toBe('model budget exhausted: the worker was stopped');
      expect(run.report?.budgetExhausted).toBe(true);
      expect(budget.spent().requests).toBe(0);
      expect(run.proxyRecords.length).toBeGreaterThanOrEqual(1);
      for (const record of run.proxyRecords) {
        expect(record.usage).toBeNull();
        expect(record.refused).toMatch(/^model budget exhausted: \d+ tokens reserved/);
        expect(record.reserved?.tokens).toBeGreaterThan(BUDGET_TOKENS);
      }
    } finally {
      await run.model.close();
    }
  });
});
