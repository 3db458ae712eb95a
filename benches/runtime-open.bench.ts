/**
 * Opening a ledger rebuilds its one kernel (LedgerSpine.open: lock, replay of
 * every kernel event with each recorded answer checked, compaction of finished
 * tasks). Measured on a ledger of 10,000 finished tasks, as ms per 1,000
 * frames, against reading the same file (readFileSync) and against scanning
 * its frames (decode + hash check, no replay) in the same run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Action,
  createKernel,
  encodeActions,
  type Hash32,
  type Json,
  type KernelEvent,
  makeId,
} from '@crustcore/kernel';
import {
  ACTIONS_KIND,
  ArtifactStore,
  createReceiptKeyFile,
  kernelOpening,
  LedgerWriter,
  nodeSha256,
  OPEN_KIND,
  type ReceiptKey,
  scanFile,
} from '@crustcore/ledger';
import { LedgerSpine, type PendingEvent } from '@crustcore/runtime';
import { Bench } from 'tinybench';
import { report } from './harness.js';

/** `node … benches/runtime-open.bench.ts [tasks]` (default 10,000). */
const TASKS = Number(process.argv[2] ?? 10_000);
const scratch = mkdtempSync(join(tmpdir(), 'runtime-open-bench-'));
const logPath = join(scratch, 'events.log');
const H = (n: number, c: string): Hash32 => `${n.toString(16).padStart(8, '0')}${c.repeat(56)}` as Hash32;

/** One finished task's events, built from the kernel's answers (approval id, nonce, op hash). */
function* taskEvents(n: number, answers: () => readonly Action[]): Generator<PendingEvent> {
  const taskId = makeId('TaskId', `t${n}`);
  const patchHash = H(n, 'a');
  yield { kind: 'TaskCreated', taskId, goal: `task ${n}`, profile: 'supervised', approvalMode: 'ask', canAsk: true };
  yield { kind: 'WorkspaceReady', taskId, baseCommit: 'base' };
  yield { kind: 'TaskPlanned', taskId, summary: 'plan' };
  yield { kind: 'PatchProposed', taskId, patchHash, selfClaimedDone: true, filesChanged: 1, risks: [] };
  const approvalId = makeId('ApprovalId', `a${n}`);
  yield {
    kind: 'PatchVerified',
    ...{ taskId, patchHash, treeHash: H(n, 'b'), baseCommit: 'base', argv: ['npm', 'test'], profile: 'verify' },
    ...{ exitCode: 0, stdoutHash: H(1, 'c'), stderrHash: H(2, 'c'), risks: [], approvalId, nonce: `nonce${n}` },
  };
  const asked = answers().find((a) => a.kind === 'RequestApproval');
  if (asked?.kind !== 'RequestApproval') throw new Error('no approval requested');
  yield {
    kind: 'ApprovalResolved',
    taskId,
    approvalId,
    decision: 'granted',
    by: 'human',
    nonce: asked.nonce,
    opHash: asked.opHash,
  };
  yield { kind: 'PatchApplied', taskId, patchHash, journalId: `j${n}` };
  yield { kind: 'TaskCompacted', taskId };
}

/** Writes the ledger as the runtime does (event, then kernel.actions), group-committed to build it quickly. */
async function writeLedger(key: ReceiptKey): Promise<number> {
  const opened = await LedgerWriter.open({ logPath, mode: 'batched', key, maxQueuedFrames: 100_000 });
  if (opened._tag === 'Left') throw new Error(JSON.stringify(opened.left));
  const writer = opened.right;
  const opening = kernelOpening();
  const kernel = createKernel(opening.config);
  let pending: Promise<unknown>[] = [
    writer.append({
      kind: OPEN_KIND,
      actor: 'runtime',
      visibility: 'internal',
      timestampMs: 1,
      payload: opening as unknown as Json,
    }),
  ];
  let at = 1_000;
  for (let n = 1; n <= TASKS; n++) {
    let last: readonly Action[] = [];
    for (const body of taskEvents(n, () => last)) {
      const event = { ...body, seq: writer.nextSeq, at: at++ } as KernelEvent;
      const taskId = event.taskId;
      const meta = {
        actor: 'runtime' as const,
        visibility: 'internal' as const,
        timestampMs: event.at,
        ...(taskId ? { taskId } : {}),
      };
      pending.push(writer.append({ kind: event.kind, ...meta, payload: event as unknown as Json }));
      last = kernel.step(event);
      const record = { for: event.seq, actions: JSON.parse(encodeActions(last)) as Json, state: kernel.stateHash() };
      pending.push(writer.append({ kind: ACTIONS_KIND, ...meta, actor: 'kernel', payload: record }));
    }
    if (pending.length > 20_000) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  const frames = writer.nextSeq - 1;
  await writer.close();
  return frames;
}

const key = createReceiptKeyFile(join(scratch, 'receipt.key'));
if (key._tag === 'Left') throw new Error(JSON.stringify(key.left));
const frames = await writeLedger(key.right);
const bytes = readFileSync(logPath).length;
report('ledger', `${TASKS} tasks, ${frames} frames, ${(bytes / 1e6).toFixed(1)} MB`);

const open = async (): Promise<void> => {
  const spine = await LedgerSpine.open({
    logPath,
    artifacts: new ArtifactStore(join(scratch, 'artifacts')),
    key: key.right,
    clockMs: Date.now,
  });
  await spine.close();
};
// The first open appends nothing: the log already has its kernel.open frame and every task is compacted.
await open();
const sizeAfter = readFileSync(logPath).length;
if (sizeAfter !== bytes) throw new Error('opening appended frames; the measurement would not be of a read-only open');

const bench = new Bench({ iterations: 5, time: 0, warmupIterations: 1, warmupTime: 0 });
bench.add('open (rebuild the kernel)', open);
bench.add('baseline: readFileSync', () => void readFileSync(logPath));
bench.add('baseline: scan frames (decode + hash)', () => void scanFile(logPath, 0, nodeSha256, () => true));
await bench.run();
const perThousand = (name: string): number => {
  const result = bench.getTask(name)?.result;
  if (result === undefined || !('latency' in result)) throw new Error(`no result for ${name}`);
  return (result.latency.p50 ?? result.latency.mean) / (frames / 1_000);
};
const openMs = perThousand('open (rebuild the kernel)');
const readMs = perThousand('baseline: readFileSync');
const scanMs = perThousand('baseline: scan frames (decode + hash)');
report('open', `${openMs.toFixed(3)} ms per 1,000 frames`);
report('read', `${readMs.toFixed(3)} ms per 1,000 frames`);
report('scan', `${scanMs.toFixed(3)} ms per 1,000 frames`);
report('ratio open/read', `${(openMs / readMs).toFixed(1)}×`);
report('ratio open/scan', `${(openMs / scanMs).toFixed(1)}×`);
rmSync(scratch, { recursive: true, force: true });
