/**
 * The user edits a target file between verify and apply — including an edit
 * of the same size with the mtime put back — and the apply journal refuses
 * the whole batch with zero writes. Driven in-process through the real
 * runtime, so the edit happens exactly while the approval is pending.
 */
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApprovalChannel } from '@crustcore/runtime';
import { randomIds, runTask } from '@crustcore/runtime';
import { describe, expect, it } from 'vitest';
import { approvalChannel } from '../packages/crustcore/src/render/approval-channel.js';
import { silentNarrator } from '../packages/crustcore/src/render/narrator.js';
import { ExternalCommandBackend } from '../packages/verify/src/index.js';
import { makeRepo, NODE_REPO } from './cli-harness.js';

function editingApprover(path: string, replacement: string): ApprovalChannel {
  const auto = approvalChannel('auto', null);
  return {
    async resolve(request, context) {
      const before = statSync(path);
      writeFileSync(path, replacement);
      // Same size, same mtime: only the content tells.
      utimesSync(path, before.atime, before.mtime);
      return auto.resolve(request, context);
    },
  };
}

describe('golden: drift between verify and apply', () => {
  it('a same-size, same-mtime edit of a target aborts the apply with zero writes', async () => {
    const box = makeRepo(NODE_REPO);
    const target = join(box.repo, 'src/math.js');
    const userEdit = NODE_REPO['src/math.js']!.replace('a - b', 'b - a');
    expect(userEdit.length).toBe(NODE_REPO['src/math.js']!.length);
    const result = await runTask({
      dir: box.repo,
      goal: 'fix add',
      home: box.home,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      verifyArgv: ['node', '--test'],
      verifyArgvFromUser: false,
      makeBackend: ({ workerCap }) =>
        new ExternalCommandBackend(workerCap(), { argv: ['sh', '-c', "sed -i 's/a - b/a + b/' src/math.js"] }),
      approvals: editingApprover(target, userEdit),
      approvalMode: 'auto',
      canAsk: false,
      narrator: silentNarrator,
      ids: randomIds,
      taskId: randomIds.taskId(),
    });
    expect(result.outcome.kind, JSON.stringify(result.outcome)).toBe('drift');
    expect(result.outcome.reason).toMatch(/src\/math\.js/);
    // The user's edit survives; the verified patch was not written.
    expect(readFileSync(target, 'utf8')).toBe(userEdit);
    expect(result.inspect?.ok).toBe(true);
  });
});
