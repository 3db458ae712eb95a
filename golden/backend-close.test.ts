/**
 * A backend may hold things for a task's whole life (a worker's MCP servers live across attempts,
 * so a later attempt never restarts a server from what an earlier worker wrote). The runtime
 * releases them exactly once when the task ends, however it ends: a process that still held a
 * server would never exit (CI saw `crustcore run --mcp` finish its work, then hang).
 */
import { randomIds, runTask } from '@crustcore/runtime';
import { describe, expect, it } from 'vitest';
import { approvalChannel } from '../packages/crustcore/src/render/approval-channel.js';
import { silentNarrator } from '../packages/crustcore/src/render/narrator.js';
import type { CodingBackend } from '../packages/verify/src/index.js';
import { ExternalCommandBackend } from '../packages/verify/src/index.js';
import { makeRepo, NODE_REPO } from './cli-harness.js';

/** The external backend plus a count of the releases it was given. */
function countingBackend(inner: CodingBackend): { backend: CodingBackend; closes: () => number } {
  let closes = 0;
  const backend: CodingBackend = {
    name: inner.name,
    run: (input, context) => inner.run(input, context),
    close: async () => {
      closes += 1;
    },
  };
  return { backend, closes: () => closes };
}

async function taskWith(script: string, approvalMode: 'auto' | 'deny') {
  const box = makeRepo(NODE_REPO);
  let made: ReturnType<typeof countingBackend> | null = null;
  const result = await runTask({
    dir: box.repo,
    goal: 'fix add',
    home: box.home,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    verifyArgv: ['node', '--test'],
    verifyArgvFromUser: false,
    makeBackend: ({ workerCap }) => {
      made = countingBackend(new ExternalCommandBackend(workerCap(), { argv: ['sh', '-c', script] }));
      return made.backend;
    },
    approvals: approvalChannel(approvalMode, null),
    approvalMode,
    canAsk: false,
    narrator: silentNarrator,
    ids: randomIds,
    taskId: randomIds.taskId(),
    maxRevisits: 1,
  });
  if (made === null) throw new Error('the backend was never made');
  return { outcome: result.outcome.kind, closes: (made as ReturnType<typeof countingBackend>).closes() };
}

describe('golden: what a backend holds ends with its task', () => {
  it('a completed task releases its backend once', async () => {
    const run = await taskWith("sed -i 's/a - b/a + b/' src/math.js", 'auto');
    expect(run.outcome).toBe('completed');
    expect(run.closes).toBe(1);
  });

  it('a task whose attempts all fail releases its backend once, after the last attempt', async () => {
    const run = await taskWith('true', 'auto');
    expect(run.outcome).not.toBe('completed');
    expect(run.closes).toBe(1);
  });

  it('a denied task releases its backend once', async () => {
    const run = await taskWith("sed -i 's/a - b/a + b/' src/math.js", 'deny');
    expect(run.outcome).toBe('denied');
    expect(run.closes).toBe(1);
  });
});
