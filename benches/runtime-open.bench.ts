/**
 * Opening a ledger rebuilds its one kernel (LedgerSpine.open: lock, scan,
 * resume from the newest verified kernel.snapshot frame and replay the rest,
 * each recorded answer checked; compaction of finished tasks). Measured on a
 * ledger of 10,000 finished tasks written twice — with a snapshot every
 * `every` frames, as the runtime writes them, and without any (every log
 * written before snapshots) — as ms per 1,000 frames, against reading the same
 * file (readFileSync) and scanning its frames (decode + hash check, no
 * replay) in the same run. Target: opening with snapshots ≤ 2× reading.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
  DEFAULT_SNAPSHOT_EVERY_FRAMES,
  kernelOpening,
  LedgerWriter,
  nodeSha256,
  OPEN_KIND,
  type ReceiptKey,
  scanFile,
  snapshotFrame,
} from '@crustcore/ledger';
import { LedgerSpine, type PendingEvent } from '@crustcore/runtime';
import { Bench } from 'tinybench';
import { report } from './harness.js';

/** `node … benches/runtime-open.bench.ts [tasks] [every]` (default 10,000 tasks, the runtime's snapshot interval). */
const TASKS = Number(process.argv[2] ?? 10_000);
const EVERY = Number(process.argv[3] ?? DEFAULT_SNAPSHOT_EVERY_FRAMES);
const scratch = mkdtempSync(join(tmpdir(), 'runtime-open-bench-'));
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

/**
 * Writes the ledger as the runtime does (event, then kernel.actions, and with `every` > 0 a
 * snapshot after the first actions frame `every` frames past the last one), group-committed to
 * build it quickly.
 */
async function writeLedger(logPath: string, key: ReceiptKey, every: number): Promise<number> {
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
  let snapshotAt = 0;
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
      const answer = writer.append({ kind: ACTIONS_KIND, ...meta, actor: 'kernel', payload: record });
      pending.push(answer);
      if (every > 0 && event.seq + 1 - snapshotAt >= every) {
        // The snapshot names the actions frame's hash, known once its commit is cut.
        const ack = await answer;
        if (ack._tag === 'Left') throw new Error(JSON.stringify(ack.left));
        pending.push(writer.append(snapshotFrame(key, ack.right, kernel, event.at)));
        snapshotAt = ack.right.seq;
      }
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
const plainLog = join(scratch, 'plain', 'events.log');
const snapLog = join(scratch, 'snap', 'events.log');
mkdirSync(dirname(plainLog));
mkdirSync(dirname(snapLog));
const frames = await writeLedger(plainLog, key.right, 0);
const snapFrames = await writeLedger(snapLog, key.right, EVERY);
const bytes = readFileSync(plainLog).length;
const snapBytes = readFileSync(snapLog).length;
report('ledger', `${TASKS} tasks, ${frames} frames, ${(bytes / 1e6).toFixed(1)} MB (no snapshots)`);
report('ledger', `${snapFrames} frames, ${(snapBytes / 1e6).toFixed(1)} MB (a snapshot every ${EVERY} frames)`);

const open = async (logPath: string): Promise<void> => {
  const spine = await LedgerSpine.open({
    logPath,
    artifacts: new ArtifactStore(join(dirname(logPath), 'artifacts')),
    key: key.right,
    clockMs: Date.now,
    // Read-only opens: the plain log must stay without snapshots for every iteration.
    snapshotEveryFrames: 0,
  });
  const report = spine.openReport;
  await spine.close();
  if (logPath === snapLog && report.resumedAtSnapshot === undefined) throw new Error('the snapshot was not used');
  if (report.untrustedSnapshots.length > 0) throw new Error(JSON.stringify(report.untrustedSnapshots));
};
// The first opens append nothing: each log already has its kernel.open frame and every task is compacted.
await open(plainLog);
await open(snapLog);
if (readFileSync(plainLog).length !== bytes || readFileSync(snapLog).length !== snapBytes) {
  throw new Error('opening appended frames; the measurement would not be of a read-only open');
}

// The machine is shared and its load drifts: each round runs every case once, in turn, and each
// case's median over the rounds is taken, so a ratio compares cases measured side by side.
const CASES: Record<string, () => unknown> = {
  'open with snapshots': async () => await open(snapLog),
  'open without snapshots (full replay)': async () => await open(plainLog),
  'baseline: readFileSync': () => void readFileSync(snapLog),
  'baseline: scan frames (decode + hash)': () => void scanFile(snapLog, 0, nodeSha256, () => true),
};
const samples = new Map<string, number[]>(Object.keys(CASES).map((name) => [name, []]));
const ROUNDS = 7;
for (let round = 0; round < ROUNDS; round++) {
  const bench = new Bench({ iterations: 1, time: 0, warmupIterations: round === 0 ? 1 : 0, warmupTime: 0 });
  for (const [name, fn] of Object.entries(CASES)) bench.add(name, fn);
  await bench.run();
  for (const name of Object.keys(CASES)) {
    const result = bench.getTask(name)?.result;
    if (result === undefined || !('latency' in result))
      throw new Error(`no result for ${name}: ${JSON.stringify(result)}`);
    samples.get(name)?.push(result.latency.mean);
  }
}
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const perThousand = (name: string, count: number): number => median(samples.get(name) ?? []) / (count / 1_000);
const snapMs = perThousand('open with snapshots', snapFrames);
const plainMs = perThousand('open without snapshots (full replay)', frames);
const readMs = perThousand('baseline: readFileSync', snapFrames);
const scanMs = perThousand('baseline: scan frames (decode + hash)', snapFrames);
report('open with snapshots', `${snapMs.toFixed(3)} ms per 1,000 frames`);
report('open without snapshots', `${plainMs.toFixed(3)} ms per 1,000 frames`);
report('read', `${readMs.toFixed(3)} ms per 1,000 frames`);
report('scan', `${scanMs.toFixed(3)} ms per 1,000 frames`);
report('ratio open with snapshots/read', `${(snapMs / readMs).toFixed(2)}×`, '≤ 2×');
report('ratio open without snapshots/read', `${(plainMs / readMs).toFixed(2)}×`);
report('ratio open with snapshots/scan', `${(snapMs / scanMs).toFixed(2)}×`);
rmSync(scratch, { recursive: true, force: true });
