/**
 * The worker contract with the REAL CLIs: Codex and Claude Code each run in
 * the sandbox `worker` profile against a scripted model reached only through
 * the bridge and the host proxy. The scripted model makes the worker fix a
 * failing `node --test`; the patch extracted from the worktree then goes
 * through `verifyPatch` in a fresh worktree and comes out verified.
 */

import { type Diagnosis, verifyPatch } from '@crustcore/verify';
import { afterEach, describe, expect, it } from 'vitest';
import { PLACEHOLDER_API_KEY, type WorkerCliName } from '../src/index.js';
import { SCRIPTED_USAGE } from './scripted-model.js';
import {
  capability,
  FAILING_NODE_PROJECT,
  FIX_MATH_COMMAND,
  filesContaining,
  makeWorkspace,
  runScriptedWorker,
  TEST_API_KEY,
  type Workspace,
  workerInput,
} from './worker-harness.js';

const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const workspace of workspaces.splice(0)) await workspace.cleanup();
});

const previousDiagnosis: Diagnosis = {
  kind: 'assertion',
  environmentCause: null,
  summary: 'adds: expected 3, received -1',
  remediation: 'Fix the implementation, not the test.',
  failingTests: ['adds-from-previous-attempt'],
  firstErrorLocation: { file: 'test/math.test.js', line: 4, column: 35 },
  expected: '3',
  received: '-1',
  exitCode: 1,
  timedOut: false,
  counts: null,
  excerpt: 'AssertionError: -1 == 3',
};

const CLIS: readonly WorkerCliName[] = ['codex', 'claude'];

describe.each(CLIS)('%s (real CLI) fixes a failing test', (name) => {
  it('produces a patch that verifyPatch verifies; the key reaches only the provider', async () => {
    const taskId = `fix-${name}`;
    const workspace = await makeWorkspace(taskId, FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    const run = await runScriptedWorker(
      name,
      workspace,
      [
        { kind: 'shell', command: `cat src/math.js; ${FIX_MATH_COMMAND}; node --test 2>&1 | tail -3` },
        {
          kind: 'message',
          text: 'Fixed add().\n{"summary":"add() now adds","done":true,"commands_run":["node --test"],"risks":[]}',
        },
      ],
      workerInput(taskId, { attempt: 2, previousDiagnosis }),
    );
    try {
      const { result } = run;
      expect(result.failure, result.transcript.stderrText.slice(-2000)).toBeNull();
      expect(result.exit.exitCode, result.transcript.stderrText.slice(-2000)).toBe(0);
      expect(result.backend).toBe(name);
      expect(result.selfClaimedDone).toBe(true);
      expect(result.summary).toContain('Fixed add()');
      expect(result.commandsRun[0]?.source).toBe('host');
      expect(result.commandsRun.some((c) => c.source === 'worker-claim' && c.argv.join(' ').includes('base64'))).toBe(
        true,
      );
      if (result.patch._tag !== 'Patch') throw new Error(`expected a patch, got ${result.patch._tag}`);
      expect(result.patch.patch.files.map((f) => f.path)).toEqual(['src/math.js']);

      // The retry prompt carried the previous diagnosis; the prompt never went through argv.
      const first = run.model.requests[0];
      expect(first?.body).toContain('adds-from-previous-attempt');
      expect(run.report?.argv.join(' ')).not.toContain('adds-from-previous-attempt');

      // The proxy injected the real key on the way out, in the provider's header, and counted tokens.
      const header = name === 'codex' ? 'authorization' : 'x-api-key';
      const expected = name === 'codex' ? `Bearer ${TEST_API_KEY}` : TEST_API_KEY;
      expect(run.model.requests.length).toBeGreaterThanOrEqual(2);
      for (const request of run.model.requests) expect(request.headers[header]).toBe(expected);
      const answered = run.proxyRecords.filter((r) => r.refused === null);
      expect(answered.length).toBe(run.model.requests.length);
      expect(run.report?.usage.requests).toBe(answered.length);
      expect(run.report?.usage.inputTokens).toBe(answered.length * SCRIPTED_USAGE.inputTokens);
      expect(run.report?.usage.outputTokens).toBe(answered.length * SCRIPTED_USAGE.outputTokens);

      // The worker itself only ever held the placeholder.
      expect(run.report?.env).toMatchObject(
        name === 'codex'
          ? { CRUSTCORE_MODEL_PROXY_KEY: PLACEHOLDER_API_KEY }
          : { ANTHROPIC_API_KEY: PLACEHOLDER_API_KEY },
      );
      expect(run.report?.envDropped).toEqual([]);
      expect(JSON.stringify(run.report)).not.toContain(TEST_API_KEY);
      expect(filesContaining(run.home, TEST_API_KEY)).toEqual([]);
      expect(JSON.stringify(result)).not.toContain(TEST_API_KEY);

      const verified = await verifyPatch(capability('verify'), {
        repo: workspace.repo,
        taskId,
        patch: result.patch.patch,
        argv: ['node', '--test'],
        nowMs: 1_700_000_000_000,
        home: workspace.home,
        save: false,
      });
      if (verified._tag === 'Left') throw new Error(`verify could not run: ${JSON.stringify(verified.left)}`);
      expect(verified.right._tag).toBe('Verified');
    } finally {
      await run.model.close();
    }
  });
});
