/**
 * Red team of the open's full chain check (rebuild.ts), the run's closing check resumed where
 * the open left off (`inspectLog({ resume })`, checked-prefix.ts, run-task.ts) and idle snapshots
 * (ledger-spine.ts #idleSnapshotDue). Three kinds of test, each with its CONTROL:
 *
 * - attacks that HOLD: the resumed check catches every change to what the run appended (bytes,
 *   deletions, swaps, duplicates, cuts, splices, the covered frame, a moved start offset) and
 *   every head rolled back into the history or borrowed from another ledger of the installation;
 * - no false alarms: idle snapshots not right after their covered frame (notes and receipts in
 *   between, also more than PrefixTracker's 64 remembered frames), a receipt named across the
 *   snapshot, a torn tail recovered mid-history, two tasks compacted at once;
 * - FINDINGS (fixed the same day; each test failed before its fix):
 *   1. frames past the MAC'd head are "the one commit a crash left": a keyless forger appends a
 *      human approval there (or before a few torn bytes) and the next open replays it into the
 *      live kernel, then MACs a head over it;
 *   2. a run's closing check (runTask) says ok after the run's own frames, from any genuine head
 *      it saw on, were replaced by one forged commit;
 *   3. a crash after a kernel event is acknowledged and before its answer leaves a log the next
 *      run breaks for good: its closing check fails and every later open refuses the ledger.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeId, type TaskId } from '@crustcore/kernel';
import {
  ArtifactStore,
  type DecodedFrame,
  decodeHead,
  decodePayload,
  encodeHead,
  type FrameInput,
  type InspectReport,
  SNAPSHOT_KIND,
} from '@crustcore/ledger';
import { LedgerSpine, randomIds, runTask } from '@crustcore/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, NODE_REPO } from '../golden/cli-harness.js';
import { approvalChannel } from '../packages/crustcore/src/render/approval-channel.js';
import { silentNarrator } from '../packages/crustcore/src/render/narrator.js';
import { headPathOf, ledgerRemovedBy, logFrames, type TempLedger } from '../packages/runtime/test/spine-helpers.js';
import { submitBatch, TaskScript } from '../packages/runtime/test/task-script.js';
import { type CodingBackend, ExternalCommandBackend } from '../packages/verify/src/index.js';
import { forge } from './ledger-forge.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const done of cleanup.splice(0)) done();
});

const ledgerForTest = (): TempLedger => ledgerRemovedBy(cleanup);

const framesOf = logFrames;

const payloadOf = (frame: DecodedFrame): unknown => {
  const decoded = decodePayload(frame);
  if (decoded._tag === 'Left') throw new Error(decoded.left.reason);
  return decoded.right;
};

const forgedNote = (at: number, text: string): FrameInput => ({
  kind: 'note.output',
  actor: 'runtime',
  visibility: 'user',
  timestampMs: at,
  payload: { text },
});

/** Runs a scripted task to its end (one receipt, one note naming an artifact), then compacts it. */
async function finishTask(spine: LedgerSpine, n: number): Promise<TaskId> {
  const script = new TaskScript(n, 'apply');
  while (!script.done) await submitBatch(spine, [script]);
  const artifact = await spine.recorder.storeArtifact(`output of task ${n}`);
  await spine.recorder.recordReceipt({
    taskId: script.taskId,
    toolCallId: makeId('ToolCallId', `call-${n}`),
    toolName: 'shell',
    args: { argv: ['true'] },
    result: `result ${n}`,
    modelText: `result ${n}`,
    artifactHashes: [artifact],
  });
  await spine.recorder.appendNote('output', script.taskId, { stdoutArtifact: artifact });
  await spine.compact(script.taskId);
  return script.taskId;
}

type OpenReport = LedgerSpine['openReport'];

/** The check `runTask` runs when its task ends (run-task.ts), from what its open reported. */
function closingCheck(current: TempLedger, open: OpenReport): InspectReport {
  return current.check(
    open.checkedPrefix !== undefined
      ? { resume: open.checkedPrefix }
      : open.resumedAtSnapshot === undefined
        ? {}
        : { fromSnapshot: open.resumedAtSnapshot },
  );
}

/** Another ledger of the same installation (the same receipt key), removed after the test. */
async function otherLedger(current: TempLedger): Promise<{ dir: string; spine: LedgerSpine }> {
  const dir = mkdtempSync(join(tmpdir(), 'cc-other-ledger-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const spine = await LedgerSpine.open({
    logPath: join(dir, 'events.log'),
    artifacts: new ArtifactStore(join(dir, 'artifacts')),
    key: current.key,
    clockMs: () => 5_000,
  });
  return { dir, spine };
}

const snapshotSeqs = (logPath: string): number[] =>
  framesOf(logPath)
    .filter((f) => f.kind === SNAPSHOT_KIND)
    .map((f) => f.seq);

/** One finished task (the history, ending on an idle snapshot), then a run of one more. */
async function historyThenRun() {
  const current = ledgerForTest();
  let spine = await current.open();
  await submitBatch(spine, [new TaskScript(900, 'apply')]);
  // A genuine head from early in the history (before the covered frame the run's check starts at).
  const earlyHead = readFileSync(headPathOf(current.logPath), 'utf8');
  await finishTask(spine, 1);
  await spine.close();
  // The genuine head at the end of the history: it names the snapshot the next open trusts.
  const historyHead = readFileSync(headPathOf(current.logPath), 'utf8');
  spine = await current.open();
  const open = spine.openReport;
  await finishTask(spine, 2);
  await spine.close();
  const prefix = open.checkedPrefix;
  if (prefix === undefined) throw new Error('the history ended on no trusted snapshot');
  return { current, open, prefix, earlyHead, historyHead };
}

describe('the resumed closing check: changes to what the run appended (held)', () => {
  it('every change is caught (bytes, deletion, swap, duplicate, cut, splice, covered frame, moved start); CONTROL: the intact log passes', async () => {
    const { current, open, prefix } = await historyThenRun();
    const pristine = readFileSync(current.logPath);
    const frames = framesOf(current.logPath);
    const run = frames.filter((f) => f.seq > prefix.after.seq);
    const covered = run[0] as DecodedFrame;
    expect(covered.kind).toBe('kernel.actions');
    // A frame at the same seq from another ledger of the same installation (same receipt key).
    const { dir: otherDir, spine: other } = await otherLedger(current);
    await finishTask(other, 7);
    await finishTask(other, 8);
    await other.close();
    const victim = run[6] as DecodedFrame;
    const foreign = framesOf(join(otherDir, 'events.log')).find((f) => f.seq === victim.seq);
    if (foreign === undefined) throw new Error('the other ledger is too short');
    const bytesOf = (list: readonly DecodedFrame[]) => Buffer.concat(list.map((f) => Buffer.from(f.bytes)));
    const without = (seq: number) => frames.filter((f) => f.seq !== seq);
    const i = frames.indexOf(victim);
    const reforgedCovered = (): Buffer => {
      // The covered actions frame re-sealed with another answer, still linked to the frame before it.
      const before = frames[frames.indexOf(covered) - 1] as DecodedFrame;
      const record = payloadOf(covered) as { for: number; actions: unknown; state: string };
      const sealed = forge(
        before,
        [
          {
            kind: covered.kind,
            actor: covered.actor,
            visibility: covered.visibility,
            timestampMs: covered.timestampMs,
            ...(covered.taskId === undefined ? {} : { taskId: covered.taskId as TaskId }),
            payload: { ...record, state: record.state.replace(/^./, (c) => (c === '0' ? '1' : '0')) } as never,
          },
        ],
        [covered.commit],
      );
      return Buffer.concat([
        pristine.subarray(0, covered.offset),
        sealed,
        pristine.subarray(covered.offset + covered.length),
      ]);
    };
    const cases: Record<string, () => Buffer> = {
      'a flipped byte in a frame of the run': () => {
        const bytes = Buffer.from(pristine);
        const at = victim.offset + victim.length - 40;
        bytes[at] = (bytes[at] as number) ^ 1;
        return bytes;
      },
      'a frame of the run deleted': () => bytesOf(without(victim.seq)),
      'two frames of the run swapped': () =>
        bytesOf([...frames.slice(0, i), frames[i + 1] as DecodedFrame, victim, ...frames.slice(i + 2)]),
      'a frame of the run duplicated': () => bytesOf([...frames.slice(0, i + 1), victim, ...frames.slice(i + 1)]),
      'the last three frames cut at a frame boundary': () => bytesOf(frames.slice(0, -3)),
      'the log cut inside the last frame': () => pristine.subarray(0, pristine.length - 10),
      'a frame spliced in from another ledger of the installation': () =>
        bytesOf([...frames.slice(0, i), foreign, ...frames.slice(i + 1)]),
      'the covered actions frame re-sealed (the first frame the check reads)': reforgedCovered,
      'seven bytes inserted in the history (the check starts at a byte offset)': () =>
        Buffer.concat([pristine.subarray(0, 200), Buffer.alloc(7, 0x41), pristine.subarray(200)]),
      'one frame of the history removed (the start offset now lands inside a frame)': () => bytesOf(without(3)),
    };
    // CONTROL: the log as written passes, from the same prefix.
    expect(closingCheck(current, open).ok).toBe(true);
    for (const [name, mutate] of Object.entries(cases)) {
      writeFileSync(current.logPath, mutate());
      const report = closingCheck(current, open);
      expect(report.ok, name).toBe(false);
      writeFileSync(current.logPath, pristine);
    }
    expect(closingCheck(current, open).ok).toBe(true);
  });

  it('a head rolled back into the history, borrowed from another ledger, or deleted is caught; CONTROL: the current head passes', async () => {
    const { current, open, prefix, earlyHead, historyHead } = await historyThenRun();
    const headPath = headPathOf(current.logPath);
    const currentHead = readFileSync(headPath, 'utf8');
    const { dir: otherDir, spine: other } = await otherLedger(current);
    await submitBatch(other, [new TaskScript(8, 'apply')]);
    await other.close();
    const foreignHead = readFileSync(join(otherDir, 'events.head'), 'utf8');
    const seqOf = (text: string) => {
      const decoded = decodeHead(text);
      if (decoded._tag === 'Left') throw new Error('head');
      return decoded.right.seq;
    };
    // The three genuine, MACed heads the attack uses: one inside the run's first frames, two before them.
    expect(seqOf(historyHead)).toBeGreaterThan(prefix.after.seq);
    expect(seqOf(earlyHead)).toBeLessThanOrEqual(prefix.after.seq);
    expect(seqOf(foreignHead)).toBeLessThanOrEqual(prefix.after.seq);
    const heads: Record<string, string | null> = {
      "the history's last head (names the snapshot the check resumes at)": historyHead,
      'an older head of the history (before the frame the check starts after)': earlyHead,
      'a head of another ledger of the installation (valid MAC)': foreignHead,
      'no head file': null,
    };
    expect(closingCheck(current, open).ok).toBe(true);
    for (const [name, head] of Object.entries(heads)) {
      if (head === null) rmSync(headPath);
      else writeFileSync(headPath, head);
      const report = closingCheck(current, open);
      expect(report.ok, name).toBe(false);
      expect(report.failure?.reason, name).toBe('head-mismatch');
      writeFileSync(headPath, currentHead);
    }
    expect(closingCheck(current, open).ok).toBe(true);
  });
});

describe('idle snapshots and the resumed check: no false alarms', () => {
  /**
   * Frames appended between the TaskCompacted answer and its idle snapshot, as another task's
   * output would land there: the wrapper appends them (handshake: after the event and its answer are durable,
   * before the spine asks for the snapshot's seq).
   */
  async function compactWithFramesBetween(spine: LedgerSpine, taskId: TaskId, notes: number, receipt: boolean) {
    const recorder = spine.recorder;
    const original = recorder.appendStep.bind(recorder);
    const between: Promise<unknown>[] = [];
    let receiptHash: string | undefined;
    recorder.appendStep = async (...args) => {
      const ack = await original(...args);
      for (let k = 0; k < notes; k++) between.push(recorder.appendNote('output', taskId, { n: k }));
      if (receipt) {
        between.push(
          recorder
            .recordReceipt({
              taskId,
              toolCallId: makeId('ToolCallId', 'call-between'),
              toolName: 'shell',
              args: { argv: ['true'] },
              result: 'between',
              modelText: 'between',
              artifactHashes: [],
            })
            .then((r) => {
              receiptHash = r.receiptHash;
            }),
        );
      }
      return ack;
    };
    await spine.compact(taskId);
    recorder.appendStep = original;
    await Promise.all(between);
    return receiptHash;
  }

  for (const notes of [5, 70]) {
    it(`${notes} notes and a receipt between the covered frame and the idle snapshot: trusted, the next run's check passes and may name the receipt`, async () => {
      const current = ledgerForTest();
      let spine = await current.open();
      const script = new TaskScript(1, 'apply');
      while (!script.done) await submitBatch(spine, [script]);
      const named = await compactWithFramesBetween(spine, script.taskId, notes, true);
      await spine.close();
      const frames = framesOf(current.logPath);
      const snapshot = frames.find((f) => f.kind === SNAPSHOT_KIND) as DecodedFrame;
      const covers = (payloadOf(snapshot) as { covers: { seq: number } }).covers.seq;
      // The snapshot covers the compaction's answer, not a frame after the notes.
      expect(frames.find((f) => f.seq === covers)?.kind).toBe('kernel.actions');
      expect(frames.find((f) => f.seq === covers - 1)?.kind).toBe('TaskCompacted');
      expect(snapshot.seq - covers).toBe(notes + 2);
      spine = await current.open();
      const open = spine.openReport;
      expect(open.untrustedSnapshots).toEqual([]);
      expect(open.resumedAtSnapshot).toBe(snapshot.seq);
      // Within PrefixTracker's memory the check resumes after the frame before the covered one;
      // beyond it there is no prefix and the check falls back to fromSnapshot (run-task.ts).
      if (notes < 60) expect(open.checkedPrefix?.after.seq).toBe(covers - 1);
      else expect(open.checkedPrefix).toBeUndefined();
      await finishTask(spine, 2);
      // A frame of this run names the receipt recorded between the covered frame and the snapshot.
      await spine.recorder.appendNote('delivered', script.taskId, {
        receiptHash: named as string,
        toolCallId: makeId('ToolCallId', 'call-between'),
      });
      await spine.close();
      const report = closingCheck(current, open);
      expect(report.failure).toBeUndefined();
      expect(report.ok).toBe(true);
      expect(current.replay().ok).toBe(true);
      // CONTROL: the receipt is what makes the reference good: naming another hash fails.
      spine = await current.open();
      const second = spine.openReport;
      await spine.recorder.appendNote('delivered', script.taskId, { receiptHash: 'f'.repeat(64) });
      await spine.close();
      expect(closingCheck(current, second).failure?.reason).toBe('bad-receipt');
    });
  }

  it('two tasks compacted at once: each idle snapshot is trusted and the next check passes', async () => {
    const current = ledgerForTest();
    let spine = await current.open();
    const a = new TaskScript(1, 'apply');
    const b = new TaskScript(2, 'apply');
    while (!a.done || !b.done)
      await submitBatch(
        spine,
        [a, b].filter((s) => !s.done),
      );
    await Promise.all([spine.compact(a.taskId), spine.compact(b.taskId)]);
    await spine.close();
    expect(snapshotSeqs(current.logPath).length).toBeGreaterThanOrEqual(1);
    spine = await current.open();
    const open = spine.openReport;
    expect(open.untrustedSnapshots).toEqual([]);
    expect(open.checkedPrefix).toBeDefined();
    await finishTask(spine, 3);
    await spine.close();
    expect(closingCheck(current, open).ok).toBe(true);
  });

  it('a torn answer (crash mid-write, recovered on open) inside the run after the snapshot: the next run checks ok and the log opens', async () => {
    const current = ledgerForTest();
    let spine = await current.open();
    await finishTask(spine, 1);
    const script = new TaskScript(2, 'apply');
    for (let k = 0; k < 3; k++) await submitBatch(spine, [script]);
    await spine.close();
    // The crash: the last answer half written, the head still on the event before it.
    const frames = framesOf(current.logPath);
    const answer = frames.at(-1) as DecodedFrame;
    const event = frames.at(-2) as DecodedFrame;
    expect(answer.kind).toBe('kernel.actions');
    truncateSync(current.logPath, answer.offset + 30);
    writeFileSync(
      headPathOf(current.logPath),
      encodeHead(
        { seq: event.seq, hash: Buffer.from(event.hash).toString('hex'), end: event.offset + event.length },
        current.key,
      ),
    );
    spine = await current.open();
    const open = spine.openReport;
    expect(open.checkedPrefix).toBeDefined();
    await finishTask(spine, 3);
    await spine.close();
    expect(framesOf(current.logPath).some((f) => f.kind === 'ledger.recovered')).toBe(true);
    expect(closingCheck(current, open).failure).toBeUndefined();
    spine = await current.open();
    await spine.close();
    expect(current.replay().ok).toBe(true);
  });
});

describe('FINDING: the crash window past the head admits frames nobody with the key wrote', () => {
  /** A task waiting for a person's approval (as a daemon task does), the log closed. */
  async function awaitingApproval(current: TempLedger) {
    const spine = await current.open();
    await finishTask(spine, 1);
    const script = new TaskScript(2, 'apply');
    for (let k = 0; k < 6; k++) await submitBatch(spine, [script]);
    expect(spine.kernel.taskStatus(script.taskId)).toBe('AwaitingApproval');
    await spine.close();
    const frames = framesOf(current.logPath);
    // Everything the forger needs is in the log, in clear: the approval id, nonce and op hash.
    const request = frames
      .filter((f) => f.kind === 'kernel.actions')
      .flatMap((f) => (payloadOf(f) as { actions: { kind: string }[] }).actions)
      .filter((a) => a.kind === 'RequestApproval')
      .at(-1) as unknown as Record<string, string>;
    expect(request.taskId).toBe(script.taskId);
    const last = frames.at(-1) as DecodedFrame;
    const at = last.timestampMs + 1;
    const grant: FrameInput = {
      kind: 'ApprovalResolved',
      actor: 'runtime',
      visibility: 'internal',
      timestampMs: at,
      taskId: script.taskId,
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
    };
    return { taskId: script.taskId, last, grant };
  }

  const doors: Record<string, (last: DecodedFrame, grant: FrameInput) => Buffer> = {
    'as the one commit past the head': (last, grant) => forge(last, [grant], [true]),
    'with no commit flag, before a few torn bytes': (last, grant) =>
      Buffer.concat([forge(last, [grant], [false]), Buffer.from([0x95, 0, 0, 0, 0x43, 0x43])]),
  };

  for (const [door, bytes] of Object.entries(doors)) {
    it(`a forged human approval ${door}: the next open must not replay it into the kernel`, async () => {
      const current = ledgerForTest();
      const { taskId, last, grant } = await awaitingApproval(current);
      writeFileSync(current.logPath, Buffer.concat([readFileSync(current.logPath), bytes(last, grant)]));
      let status: string | undefined = 'refused';
      try {
        const spine = await current.open();
        status = spine.kernel.taskStatus(taskId);
        await spine.close();
      } catch {
        status = 'refused';
      }
      // Today: 'Integrating' — the kernel holds a human approval no person gave, and the head the
      // writer caught up now MACs the forged frame (inspect --replay passes from then on).
      expect(['AwaitingApproval', 'refused']).toContain(status);
    });
  }

  it('CONTROL: the same forged approval followed by a second forged commit is refused (only the crash-window rule lets it in)', async () => {
    const current = ledgerForTest();
    const { last, grant } = await awaitingApproval(current);
    const extra = forgedNote(last.timestampMs + 2, 'second commit');
    writeFileSync(
      current.logPath,
      Buffer.concat([readFileSync(current.logPath), forge(last, [grant, extra], [true, true])]),
    );
    await expect(current.open()).rejects.toThrow(/head-mismatch|cannot open/);
  });

  it('CONTROL (no false alarm): a genuine frame past the head (crash before the head update) still opens', async () => {
    const current = ledgerForTest();
    let spine = await current.open();
    await finishTask(spine, 1);
    const before = readFileSync(headPathOf(current.logPath), 'utf8');
    await spine.recorder.appendNote('output', makeId('TaskId', 't1'), { n: 1 });
    await spine.close();
    writeFileSync(headPathOf(current.logPath), before);
    spine = await current.open();
    await finishTask(spine, 2);
    await spine.close();
    expect(current.replay().ok).toBe(true);
  });
});

describe("FINDING: a run's closing check vouches for frames the run did not write", () => {
  it("the run's frames after a genuine head it saw, replaced by one forged commit: the check must not say ok (CONTROL: without the saved head it fails)", async () => {
    const box = makeRepo(NODE_REPO);
    const logPath = (): string => {
      const projects = join(box.home, 'projects');
      return join(projects, readdirSync(projects)[0] as string, 'events.log');
    };
    const fix = "sed -i 's/a - b/a + b/' src/math.js";
    const task = (wrap: (inner: CodingBackend) => CodingBackend) =>
      runTask({
        dir: box.repo,
        goal: 'fix add',
        home: box.home,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        verifyArgv: ['node', '--test'],
        verifyArgvFromUser: false,
        makeBackend: ({ workerCap }) => wrap(new ExternalCommandBackend(workerCap(), { argv: ['sh', '-c', fix] })),
        approvals: approvalChannel('auto', null),
        approvalMode: 'auto',
        canAsk: false,
        narrator: silentNarrator,
        ids: randomIds,
        taskId: randomIds.taskId(),
        maxRevisits: 1,
      });
    const broken = 'export function add(a, b) {\n  return a - b;\n}\n';
    /**
     * The attacker (write access to the project directory, not to receipt.key) copies the head
     * while the worker runs — a genuine, MACed head — and once the task is over (the backend's
     * close: every frame of the run is written, the check has not run) cuts the log back to it,
     * appends one forged frame and puts that head back.
     */
    const attacking =
      (restoreHead: boolean) =>
      (inner: CodingBackend): CodingBackend => {
        let saved = '';
        return {
          name: inner.name,
          run: (input, context) => {
            saved = readFileSync(headPathOf(logPath()), 'utf8');
            return inner.run(input, context);
          },
          close: async () => {
            const head = decodeHead(saved);
            if (head._tag === 'Left') throw new Error('no head was saved');
            const path = logPath();
            truncateSync(path, head.right.end);
            const last = framesOf(path).at(-1) as DecodedFrame;
            writeFileSync(
              path,
              Buffer.concat([readFileSync(path), forge(last, [forgedNote(last.timestampMs + 1, 'all good')], [true])]),
            );
            if (restoreHead) writeFileSync(headPathOf(path), saved);
          },
        };
      };
    const first = await task((inner) => inner);
    expect(first.outcome.kind).toBe('completed');
    expect(first.inspect?.ok).toBe(true);
    writeFileSync(join(box.repo, 'src/math.js'), broken);
    const attacked = await task(attacking(true));
    // The patch was applied…
    expect(attacked.outcome.kind).toBe('completed');
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
    // …but the log no longer says so: the approval, the apply and the task's end were cut.
    const applied = () => framesOf(logPath()).filter((f) => f.kind === 'PatchApplied').length;
    expect(applied()).toBe(1);
    // The run's check was the resumed one: it read only the frames after the history's snapshot.
    const total = framesOf(logPath()).length;
    expect(attacked.inspect?.chain.frames ?? total).toBeLessThan(total / 2);
    // CONTROL: the same rewrite with the run's own head left in place is caught.
    writeFileSync(join(box.repo, 'src/math.js'), broken);
    const control = await task(attacking(false));
    expect(control.outcome.kind).toBe('completed');
    expect(control.inspect?.ok).toBe(false);
    expect(['truncated', 'head-mismatch']).toContain(control.inspect?.failure?.reason);
    // The attacked run's own check must not vouch for its log. Today it reports ok.
    expect(attacked.inspect?.ok).toBe(false);
  });
});

describe('FINDING: a crash right after a kernel event is acknowledged', () => {
  const crashes: Record<string, boolean> = {
    'the event acknowledged (head on it), killed before its answer': false,
    'killed while the head was being updated for the event (the one commit past the head)': true,
  };
  for (const [name, pastHead] of Object.entries(crashes)) {
    it(`${name}: the next run's check passes and the ledger still opens after it`, async () => {
      const current = ledgerForTest();
      let spine = await current.open();
      await finishTask(spine, 1);
      const script = new TaskScript(2, 'apply');
      for (let k = 0; k < 3; k++) await submitBatch(spine, [script]);
      const headBefore = readFileSync(headPathOf(current.logPath), 'utf8');
      // What submit does first; the process dies before kernel.step's answer is appended.
      await spine.recorder.appendEvent({
        kind: 'ModelOutputReceived',
        taskId: script.taskId,
        inputTokens: 1,
        outputTokens: 1,
        costMicros: 1,
      });
      await spine.close();
      if (pastHead) writeFileSync(headPathOf(current.logPath), headBefore);
      // CONTROL: the crashed log itself is intact (an unanswered event at the end is allowed).
      expect(current.replay().ok).toBe(true);
      spine = await current.open();
      const open = spine.openReport;
      await finishTask(spine, 3);
      await spine.close();
      // Today: replay-divergence "no kernel.actions frame for seq N before the next kernel event".
      expect(closingCheck(current, open).failure).toBeUndefined();
      // Today: every later open refuses the ledger ("does not replay; nothing was run").
      spine = await current.open();
      await spine.close();
    });
  }
});
