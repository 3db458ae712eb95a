import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskId } from '@crustcore/kernel';
import {
  type DecodedFrame,
  decodePayload,
  encodeFrame,
  type FrameInput,
  inspectLog,
  kernelReplay,
  nodeSha256,
  scanFile,
} from '@crustcore/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempLedger, tempLedger } from '../packages/runtime/test/spine-helpers.js';
import { submitBatch, TaskScript } from '../packages/runtime/test/task-script.js';

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

const framesOf = (logPath: string): DecodedFrame[] => {
  const frames: DecodedFrame[] = [];
  scanFile(logPath, 0, nodeSha256, (frame) => {
    frames.push({ ...frame, bytes: Uint8Array.from(frame.bytes) });
    return true;
  });
  return frames;
};

const payloadOf = (frame: DecodedFrame): unknown => {
  const p = decodePayload(frame);
  if (p._tag === 'Left') throw new Error(p.left.reason);
  return p.right;
};

/** Appends forged frames (no key) after the last frame; commit flag only on the last. */
function appendForged(logPath: string, inputs: readonly FrameInput[]): void {
  const frames = framesOf(logPath);
  const last = frames.at(-1) as DecodedFrame;
  let prev = last.hash;
  let seq = last.seq;
  const parts: Uint8Array[] = [];
  inputs.forEach((input, i) => {
    seq++;
    const encoded = encodeFrame({ seq, prevHash: prev, commit: i === inputs.length - 1 }, input, nodeSha256);
    if (encoded._tag === 'Left') throw new Error(encoded.left.reason);
    prev = encoded.right.hash;
    parts.push(encoded.right.bytes);
  });
  writeFileSync(logPath, Buffer.concat([readFileSync(logPath), ...parts.map((p) => Buffer.from(p))]));
}

describe('experiments', () => {
  it('forged approval past the head', async () => {
    const current = tempLedger();
    ledger = current;
    let spine = await current.open();
    const script = new TaskScript(1, 'apply');
    for (let i = 0; i < 6; i++) await submitBatch(spine, [script]);
    expect(spine.kernel.taskStatus(script.taskId)).toBe('AwaitingApproval');
    await spine.close();
    const frames = framesOf(current.logPath);
    const request = frames
      .filter((f) => f.kind === 'kernel.actions')
      .flatMap((f) => (payloadOf(f) as { actions: { kind: string }[] }).actions)
      .find((a) => a.kind === 'RequestApproval') as unknown as Record<string, string>;
    const last = frames.at(-1) as DecodedFrame;
    const at = last.timestampMs + 1;
    appendForged(current.logPath, [
      {
        kind: 'ApprovalResolved',
        actor: 'runtime',
        visibility: 'internal',
        timestampMs: at,
        taskId: script.taskId as TaskId,
        payload: {
          kind: 'ApprovalResolved',
          taskId: script.taskId,
          approvalId: request.approvalId,
          decision: 'granted',
          by: 'human',
          nonce: request.nonce,
          opHash: request.opHash,
          seq: last.seq + 1,
          at,
        } as never,
      },
    ]);
    const report = current.replay();
    console.log(report.ok, report.failure, report.chain.framesPastHead);
    spine = await current.open();
    console.log(spine.kernel.taskStatus(script.taskId));
    await spine.close();
    const after = current.replay();
    console.log(after.ok, after.chain.framesPastHead);
    void inspectLog;
    void kernelReplay;
    void join;
  });
});
