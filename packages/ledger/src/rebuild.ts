/**
 * Opening a ledger rebuilds its kernel: every frame is read once, kernel events
 * are replayed (and each recorded answer checked, as `inspect --replay` does),
 * and the kernel that comes out is the one the next task steps. The same scan
 * finds the last receipt (so the receipt chain continues) and the tasks the log
 * created (so the runtime can compact the finished ones).
 */
import type { Json } from '@crustcore/kernel';
import type { IntegrityFailure } from './chain-check.js';
import { decodePayload } from './frame.js';
import { RECEIPT_KIND } from './kinds.js';
import { decodeToolReceipt, GENESIS_RECEIPT_HASH, receiptHash } from './receipt.js';
import { type ReplayableKernel, Replayer, type ReplayKernel, type ReplaySummary } from './replay.js';
import { scanFile } from './scan.js';
import { nodeSha256, type Sha256 } from './sha256.js';

export interface RebuiltKernel<E> {
  readonly failure: IntegrityFailure | undefined;
  readonly kernel: ReplayableKernel<E>;
  /** Whether the log already opened a shared kernel (else the runtime writes `kernel.open`). */
  readonly opened: boolean;
  readonly summary: ReplaySummary;
  readonly lastReceiptHash: string;
  /** Every task a TaskCreated frame named, in log order (duplicates removed). */
  readonly taskIds: readonly string[];
  readonly frames: number;
}

export function rebuildKernel<E>(
  logPath: string,
  kernel: ReplayKernel<E>,
  sha256: Sha256 = nodeSha256,
): RebuiltKernel<E> {
  const replayer = new Replayer(kernel);
  let lastReceiptHash: string = GENESIS_RECEIPT_HASH;
  const taskIds = new Set<string>();
  let frames = 0;
  scanFile(logPath, 0, sha256, (frame) => {
    frames++;
    const payload = decodePayload(frame);
    if (payload._tag === 'Left') return true;
    if (frame.kind === RECEIPT_KIND) {
      const receipt = decodeToolReceipt(payload.right);
      if (receipt._tag === 'Right') lastReceiptHash = receiptHash(receipt.right, sha256);
    } else if (frame.kind === 'TaskCreated' && frame.taskId !== undefined) taskIds.add(frame.taskId);
    return replayer.feed(frame, payload.right as Json) === undefined;
  });
  const finished = replayer.finish();
  return {
    failure: finished.failure,
    kernel: replayer.instance,
    opened: replayer.opened,
    summary: finished.summary,
    lastReceiptHash,
    taskIds: [...taskIds],
    frames,
  };
}
