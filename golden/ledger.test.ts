/**
 * The golden ledger (golden/ledger/v1, written by xtask/golden-ledger.ts
 * with the real kernel) must be readable, intact and replayable by every
 * later version: a change that breaks this breaks old users' logs.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  exportJsonl,
  FRAME_VERSION,
  inspectLog,
  kernelReplay,
  loadReceiptKey,
  nobleSha256,
  type ReceiptKey,
  stateDirLayout,
} from '@crustcore/ledger';
import { afterAll, describe, expect, it } from 'vitest';

const GOLDEN = join(import.meta.dirname, 'ledger', 'v1');
const expected = JSON.parse(readFileSync(join(GOLDEN, 'expected.json'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'golden-ledger-key-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Git does not keep mode 0600, and the loader rightly refuses anything looser: copy the TEST key. */
function goldenKey(): ReceiptKey {
  const path = join(scratch, 'receipt.key');
  writeFileSync(path, readFileSync(join(GOLDEN, 'receipt.key')), { mode: 0o600 });
  const key = loadReceiptKey(path);
  if (key._tag === 'Left') throw new Error(JSON.stringify(key.left));
  return key.right;
}

describe('golden ledger v1', () => {
  it('is format version 1, which this code still writes', () => {
    expect(FRAME_VERSION).toBe(1);
  });

  it('inspects intact: chain, head MAC, receipts, artifacts, kernel event headers', () => {
    const report = inspectLog({ ...stateDirLayout(GOLDEN), key: goldenKey(), kernel: kernelReplay() });
    expect(report.failure).toBeUndefined();
    expect(report.chain.tornTail).toBeUndefined();
    expect(report.chain.headChecked).toBe('mac');
    expect({
      frames: report.chain.frames,
      lastSeq: report.chain.lastSeq,
      lastHash: report.chain.lastHash,
      receipts: report.receiptsChecked,
      artifacts: report.artifactsChecked,
      kernelEvents: report.kernelEventsChecked,
    }).toEqual({
      frames: expected.frames,
      lastSeq: expected.lastSeq,
      lastHash: expected.lastHash,
      receipts: expected.receipts,
      artifacts: expected.artifacts,
      kernelEvents: expected.kernelEvents,
    });
  });

  it('replays on the current kernel to the same actions and state', () => {
    const report = inspectLog({ ...stateDirLayout(GOLDEN), key: goldenKey(), kernel: kernelReplay(), replay: true });
    expect(report.failure).toBeUndefined();
    // The v1 golden log predates kernel snapshots: none to check.
    expect(report.replay).toEqual({ ...expected.replay, unanswered: [], snapshotsChecked: 0 });
  });

  it('tells the same story: goal, commands, verification, approvals, outcome', () => {
    const report = inspectLog({ ...stateDirLayout(GOLDEN), key: goldenKey(), kernel: kernelReplay() });
    const facts = report.tasks.map((story) => ({
      taskId: story.taskId,
      goal: story.goal ?? null,
      outcome: story.outcome,
      patchHash: story.patchHash ?? null,
      verification:
        story.verification === undefined
          ? null
          : {
              argv: [...story.verification.argv],
              exitCode: story.verification.exitCode,
              treeHash: story.verification.treeHash ?? null,
            },
      approvals: story.approvals.map((a) => ({
        approvalId: a.approvalId,
        decision: a.decision ?? null,
        by: a.by ?? null,
      })),
      commands: story.commands.map((c) => ({
        seq: c.seq,
        argv: [...c.argv],
        exitCode: c.exitCode,
        purpose: c.purpose ?? null,
      })),
      toolCalls: story.toolCalls,
      receipts: story.receipts,
    }));
    expect(facts).toEqual(expected.tasks);
  });

  it('verifies the same with @noble/hashes as with node:crypto', () => {
    const report = inspectLog({ ...stateDirLayout(GOLDEN), key: goldenKey(), sha256: nobleSha256 });
    expect(report.failure).toBeUndefined();
    expect(report.chain.lastHash).toBe(expected.lastHash);
  });

  it('exports losslessly: the JSONL rebuilds the file byte for byte', () => {
    const parts: Buffer[] = [];
    const result = exportJsonl({ logPath: stateDirLayout(GOLDEN).logPath }, (line) => {
      const frame = JSON.parse(line);
      const trailer = Buffer.alloc(4);
      trailer.writeUInt32LE(frame.length);
      parts.push(
        Buffer.from(frame.header, 'hex'),
        Buffer.from(JSON.stringify(frame.payload)),
        Buffer.from(frame.hash, 'hex'),
        trailer,
      );
    });
    expect(result).toEqual({ _tag: 'Complete', frames: expected.frames });
    expect(Buffer.concat(parts).equals(readFileSync(stateDirLayout(GOLDEN).logPath))).toBe(true);
  });
});
