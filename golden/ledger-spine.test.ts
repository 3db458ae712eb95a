/**
 * golden/ledger/spine-v1 was written by the production path (two `crustcore
 * run`s in one repository, xtask/golden-spine-ledger.ts). Every later version
 * must read it, replay it to the recorded actions and state, and open it
 * (rebuild its kernel) to that same state — with the config the log recorded,
 * whatever today's defaults are.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ArtifactStore,
  inspectLog,
  kernelReplay,
  loadReceiptKey,
  type ReceiptKey,
  stateDirLayout,
} from '@crustcore/ledger';
import { LedgerSpine } from '@crustcore/runtime';
import { afterAll, describe, expect, it } from 'vitest';

const GOLDEN = join(import.meta.dirname, 'ledger', 'spine-v1');
const expected = JSON.parse(readFileSync(join(GOLDEN, 'expected.json'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'golden-spine-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function goldenKey(): ReceiptKey {
  const path = join(scratch, 'receipt.key');
  writeFileSync(path, readFileSync(join(GOLDEN, 'receipt.key')), { mode: 0o600 });
  const key = loadReceiptKey(path);
  if (key._tag === 'Left') throw new Error(JSON.stringify(key.left));
  return key.right;
}

describe('golden ledger spine-v1 (written by crustcore run)', () => {
  it('replays intact: two tasks, one kernel, the recorded actions and state', () => {
    const report = inspectLog({ ...stateDirLayout(GOLDEN), key: goldenKey(), kernel: kernelReplay(), replay: true });
    expect(report.failure).toBeUndefined();
    expect({
      frames: report.chain.frames,
      lastHash: report.chain.lastHash,
      tasks: report.tasks.length,
      kernelEvents: report.replay?.events,
      finalStateHash: report.replay?.finalStateHash,
    }).toEqual(expected);
  });

  it('replays with the config its kernel.open frame recorded, not today’s defaults', () => {
    // Defaults that would change the answers (no revisits, one task at most) if replay used them.
    const other = kernelReplay({ defaultMaxRevisits: 0, maxTasks: 1, approvalTtlMs: 1 });
    const report = inspectLog({ ...stateDirLayout(GOLDEN), key: goldenKey(), kernel: other, replay: true });
    expect(report.failure).toBeUndefined();
    expect(report.replay?.finalStateHash).toBe(expected.finalStateHash);
  });

  it('opens (LedgerSpine rebuilds its kernel) to the replayed state, appending nothing', async () => {
    const copy = join(scratch, 'copy');
    cpSync(GOLDEN, copy, { recursive: true });
    const logPath = join(copy, 'events.log');
    const before = statSync(logPath).size;
    const spine = await LedgerSpine.open({
      logPath,
      artifacts: new ArtifactStore(join(copy, 'artifacts')),
      key: goldenKey(),
      clockMs: () => 1,
      kernelConfig: { defaultMaxRevisits: 0 },
    });
    expect(spine.kernel.stateHash()).toBe(expected.finalStateHash);
    await spine.close();
    expect(statSync(logPath).size).toBe(before);
  });
});
