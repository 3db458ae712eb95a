/**
 * A repository with a long CrustCore history: `crustcore run` checks what it appended (from the
 * snapshot its open resumed from), not every frame and artifact the project ever stored, so a
 * run costs the same on the 1st and the 1,000th task. The whole history is `crustcore
 * inspect`'s job. Shown by a hole in the history the run's check does not look at (an old
 * task's artifact removed) and the full inspect does (CONTROL).
 *
 * The history is written by the runtime's own spine (scripted tasks, each with a receipted tool
 * output and an artifact) into the ledger the CLI made, with the installation's receipt key:
 * hundreds of frames in a second instead of a CLI run per task.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Hash32, makeId, type TaskId } from '@crustcore/kernel';
import { ArtifactStore, loadReceiptKey, MIN_SNAPSHOT_EVERY_FRAMES } from '@crustcore/ledger';
import { LedgerSpine } from '@crustcore/runtime';
import { beforeAll, describe, expect, it } from 'vitest';
import { submitBatch, TaskScript } from '../packages/runtime/test/task-script.js';
import { buildCli, crustcore, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';

beforeAll(() => buildCli(), 120_000);

const FIX = `sh -c "sed -i 's/a - b/a + b/' src/math.js"`;
const runFix = (box: Sandbox) =>
  crustcore(box, ['run', '--goal', 'fix add', '--worker', FIX, '--approve', 'auto', '--json']);

/** Scripted, finished tasks straight into the project's ledger; returns the first task's artifact. */
async function writeHistory(box: Sandbox, stateDir: string, tasks: number): Promise<Hash32> {
  const key = loadReceiptKey(join(box.home, 'receipt.key'));
  if (key._tag === 'Left') throw new Error(JSON.stringify(key.left));
  let clock = Date.now();
  const spine = await LedgerSpine.open({
    logPath: join(stateDir, 'events.log'),
    artifacts: new ArtifactStore(join(stateDir, 'artifacts')),
    key: key.right,
    clockMs: () => clock++,
  });
  const artifacts: Hash32[] = [];
  for (let n = 1; n <= tasks; n++) {
    const script = new TaskScript(n, 'apply');
    while (!script.done) await submitBatch(spine, [script]);
    const artifact = await spine.recorder.storeArtifact(`old output ${n}`);
    artifacts.push(artifact);
    await spine.recorder.recordReceipt({
      taskId: script.taskId,
      toolCallId: makeId('ToolCallId', `old-${n}`),
      toolName: 'shell',
      args: { argv: ['true'] },
      result: `old result ${n}`,
      modelText: `old result ${n}`,
      artifactHashes: [artifact],
    });
    await spine.compact(script.taskId as TaskId);
  }
  await spine.close();
  return artifacts[0] as Hash32;
}

describe('golden: a run on a long history checks what it appended', () => {
  it('passes its own check with a hole in old history; `crustcore inspect` (the whole log) finds the hole', async () => {
    const box = makeRepo(NODE_REPO);
    const first = runFix(box);
    expect(first.status, first.stderr).toBe(0);
    const stateDir = String(first.json?.stateDir);
    // Enough frames for the spine to write a snapshot (about 20 frames a task).
    const oldArtifact = await writeHistory(box, stateDir, Math.ceil((MIN_SNAPSHOT_EVERY_FRAMES * 1.5) / 20));
    rmSync(join(stateDir, 'artifacts', oldArtifact.slice(0, 2), oldArtifact.slice(2)));

    // The first run applied its fix to the working tree: put the bug back for the second task.
    execFileSync('git', ['checkout', '-q', '--', '.'], { cwd: box.repo });
    const second = runFix(box);
    expect(second.status, second.stderr).toBe(0);
    expect(second.json?.outcome).toBe('completed');
    expect(second.json?.inspect).toMatchObject({ ok: true });

    // CONTROL: the whole log's check sees the removed artifact of task 1.
    const full = crustcore(box, ['inspect', '--dir', stateDir, '--json']);
    expect(full.status).not.toBe(0);
    expect(`${full.stdout}${full.stderr}`).toMatch(/missing-artifact|artifact.*missing/i);
  }, 180_000);
});
