/**
 * Red team of two changes: a kernel event and its answer as ONE commit (d97ba84: LedgerWriter
 * appendGroup/refusal, LedgerRecorder.appendStep, LedgerSpine.submit stepping the kernel before
 * anything is written), and verification reading its integrity checks beside the apply, on the tree
 * the patch claims (77f619b: verifyIn, extractPatch's four side-by-side reads of the index,
 * integrityRisks failing safe on an unreadable tree). Each test has a CONTROL.
 *
 * HELD:
 * - a crash at every byte of a step's group, an all-zero group, after its fdatasync, or inside the
 *   head update: the next open opens and keeps all of the step or none (CONTROL: a head caught up
 *   to the whole event frame a cut leaves would keep half a step);
 * - a keyless forger appending an approval past the head as a group in every shape (commit marks
 *   on either, neither or both frames, the event alone, answer first, an answer for another seq,
 *   a torn answer, the genuine group swapped): cut back or the ledger refused, never replayed
 *   (CONTROL: the writer's own MAC'd head over the same bytes grants the approval);
 * - a rollback to any head the writer wrote: always between steps (CONTROL: a head on an event
 *   frame gives an unanswered event);
 * - four tasks submitting at once with notes and receipts before, during and after each step:
 *   every event frame carries its own seq, its answer right after it in the same commit (CONTROL:
 *   one append slipped between the seq read and the group leaves a log that never opens again);
 * - a full queue, a closed writer, an fdatasync failing (EIO) under the step: refused before the
 *   kernel steps, or the kernel is rolled back and the next open has none of the step (CONTROL:
 *   without the early refusal(2) question the kernel steps and must be rolled back);
 * - bytes that make another tree than patch.treeId: TreeMismatch, the integrity result read on the
 *   claimed tree (which misses the planted gitdir pointer) is never kept;
 * - a worker in the real sandbox leaving a setsid daemon that rewrites the worktree and trying to
 *   plant objects in every store it can name: the daemon is dead before extraction, nothing is
 *   planted, the four reads describe one tree;
 * - a store that lies about a subtree cannot answer for another repository's tree through the
 *   process-wide tree-reader memo (fixed: answers are kept per object store; CONTROL: the liar's
 *   own reader gives the lie).
 *
 * FINDINGS, each fixed, each test asserting the behaviour wanted (it failed before the fix):
 * 1. a run_command the model may ask for (within the agent's and the kernel's bounds) made an
 *    event or an answer over the writer's 1 MiB payload bound; appendStep learnt it only inside
 *    appendGroup, after the kernel stepped, so the spine stopped taking events. Now the kernel is
 *    rolled back to its state before the event and the spine goes on;
 * 2. (fault injection) a step that throws after it changed the kernel (an invariant assert) was
 *    treated as "nothing happened": the spine went on from the unlogged state and the next answer
 *    made the ledger fail replay for good. Now rolled back the same way;
 * 3. integrity failed open on a package.json it cannot read (over the reader's 1 MiB blob bound): a
 *    postinstall script landed with a `warn` only, so `--approve auto` applied it (not new in
 *    77f619b). Now "cannot tell" needs a person;
 * 4. a crash that leaves a group's first page on disk and zeros after it (the file's size synced,
 *    not all of its data) made the next open refuse the ledger: only an all-zero tail from a frame
 *    boundary counted as torn (not new with groups). Now a whole zero page past the head counts.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  decodeKernelEvent,
  type Kernel,
  KernelInvariantError,
  makeId,
  type TaskId,
  type TaskStatus,
  TERMINAL_STATUSES,
} from '@crustcore/kernel';
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_MAX_QUEUED_FRAMES,
  type DecodedFrame,
  decodeHead,
  decodePayload,
  encodeHead,
  encodePayload,
  type FrameInput,
  LedgerWriter,
  nodeSha256,
  RECOVERED_KIND,
  scanBytes,
  toHex,
} from '@crustcore/ledger';
import type { LedgerSpine, PendingEvent } from '@crustcore/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { ARG_LIMITS, RunCommandArgs } from '../packages/agent/src/tools/tool-args.js';
import { headPathOf, ledgerRemovedBy, logFrames, type TempLedger } from '../packages/runtime/test/spine-helpers.js';
import { submitBatch, TaskScript } from '../packages/runtime/test/task-script.js';
import {
  createTaskWorktree,
  ExternalCommandBackend,
  extractPatch,
  gitTreeReader,
  integrityRisks,
  needsApproval,
  objectStoreDir,
  removeTaskWorktree,
  type TaskWorktree,
  verifyPatch,
  worktreeLocation,
} from '../packages/verify/src/index.js';
import {
  cap,
  type Fixture,
  git,
  makeRepo,
  NODE_PROJECT,
  nodeWorker,
  repoOf,
} from '../packages/verify/test/git-fixture.js';
import { forge } from './ledger-forge.js';
import { type Planted, runHost } from './patch-harness.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const done of cleanup.splice(0)) done();
});

const ledgerForTest = (): TempLedger => ledgerRemovedBy(cleanup);

const payloadOf = (frame: DecodedFrame): Record<string, unknown> => {
  const decoded = decodePayload(frame);
  if (decoded._tag === 'Left') throw new Error(decoded.left.reason);
  return decoded.right as Record<string, unknown>;
};

/** A frame's input as its writer gave it, with the payload replaced by `payload` when given. */
const inputOf = (frame: DecodedFrame, payload?: Record<string, unknown>): FrameInput => ({
  kind: frame.kind,
  actor: frame.actor,
  visibility: frame.visibility,
  timestampMs: frame.timestampMs,
  ...(frame.taskId === undefined ? {} : { taskId: frame.taskId as TaskId }),
  payload: (payload ?? payloadOf(frame)) as never,
});

const recoveredReasons = (logPath: string): string[] =>
  logFrames(logPath)
    .filter((f) => f.kind === RECOVERED_KIND)
    .map((f) => String(payloadOf(f).reason));

describe('a crash anywhere in a step commit (held)', () => {
  it('cut at every byte of the group, all zeros (its data never reached the disk), after its fdatasync, or mid head update: the next open opens and keeps all of the step or none; CONTROL: a head caught up to the whole event frame a cut leaves gives half a step', async () => {
    const ledger = ledgerForTest();
    let spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    await submitBatch(spine, [script]);
    await submitBatch(spine, [script]);
    const before = spine.kernel.stateHash();
    const headPath = headPathOf(ledger.logPath);
    const savedHead = readFileSync(headPath);
    const start = readFileSync(ledger.logPath).length;
    await submitBatch(spine, [script]); // TaskPlanned and its answer: one group
    const after = spine.kernel.stateHash();
    await spine.close();
    const full = readFileSync(ledger.logPath);
    const newHead = readFileSync(headPath);
    const group = logFrames(ledger.logPath).filter((f) => f.offset >= start);
    expect(group.map((f) => [f.kind, f.commit])).toEqual([
      ['TaskPlanned', false],
      ['kernel.actions', true],
    ]);
    const eventFrame = group[0] as DecodedFrame;
    const reopen = async (log: Uint8Array, head: Buffer, name: string): Promise<string> => {
      writeFileSync(ledger.logPath, log);
      writeFileSync(headPath, head);
      spine = await ledger.open({ snapshotEveryFrames: 0 });
      const hash = spine.kernel.stateHash();
      await spine.close();
      expect(recoveredReasons(ledger.logPath), name).not.toContain('unanswered event');
      return hash;
    };
    // Every cut from the first byte of the event frame to the end of the answer (the last one: both
    // written and synced, the head not yet replaced): the step is gone, the log opens.
    let wholeEventPastHead = 0;
    for (let cut = start; cut <= full.length; cut++) {
      const log = full.subarray(0, cut);
      const past: DecodedFrame[] = [];
      scanBytes(new Uint8Array(log), start, nodeSha256, (f) => past.push(f) > 0);
      if (past.length === 1) wholeEventPastHead += 1;
      expect(await reopen(log, savedHead, `cut at ${cut}`), `cut at ${cut}`).toBe(before);
    }
    // The size synced but none of the data (the group reads as zeros): a torn tail.
    const zeros = Buffer.concat([full.subarray(0, start), Buffer.alloc(full.length - start)]);
    expect(await reopen(zeros, savedHead, 'zeros')).toBe(before);
    // Killed inside the head update: the new head is still a temp file beside the old one.
    const temp = `${headPath.replace(/[^/]+$/, '.events.head.')}1234.tmp`;
    writeFileSync(temp, newHead);
    expect(await reopen(full, savedHead, 'mid head update')).toBe(before);
    expect(existsSync(temp)).toBe(false);
    // The head replaced: the whole step is kept.
    expect(await reopen(full, newHead, 'head updated')).toBe(after);
    expect(ledger.replay().ok).toBe(true);
    // CONTROL: at some cuts the event frame is whole past the head. A recovery that caught the head
    // up to whole frames (MAC'd by the writer) would keep the event without its answer.
    expect(wholeEventPastHead).toBeGreaterThan(0);
    const caughtUp = encodeHead(
      { seq: eventFrame.seq, hash: toHex(eventFrame.hash), end: eventFrame.offset + eventFrame.length },
      ledger.key,
    );
    writeFileSync(ledger.logPath, full.subarray(0, eventFrame.offset + eventFrame.length));
    writeFileSync(headPath, caughtUp);
    spine = await ledger.open({ snapshotEveryFrames: 0 });
    await spine.close();
    expect(recoveredReasons(ledger.logPath)).toContain('unanswered event');
  });
});

const PAGE = 4096;

/**
 * A log whose next step's group straddles a page boundary: padded with a note so the log ends
 * 100 bytes before the next multiple of PAGE. Returns what the open must come back to.
 */
async function groupAcrossAPage(ledger: TempLedger) {
  const spine = await ledger.open({ snapshotEveryFrames: 0 });
  const script = new TaskScript(1, 'apply');
  await submitBatch(spine, [script]);
  await submitBatch(spine, [script]);
  const pad = (chars: number) => spine.recorder.appendNote('output', script.taskId, { pad: 'x'.repeat(chars) });
  const sizeNow = () => readFileSync(ledger.logPath).length;
  let at = sizeNow();
  await pad(0);
  const emptyNote = sizeNow() - at;
  at = sizeNow();
  const page = Math.ceil((at + emptyNote + 200) / PAGE) * PAGE;
  await pad(page - 100 - at - emptyNote);
  const start = sizeNow();
  expect(start).toBe(page - 100);
  const before = spine.kernel.stateHash();
  const head = readFileSync(headPathOf(ledger.logPath));
  await submitBatch(spine, [script]); // TaskPlanned and its answer, across the page boundary
  await spine.close();
  const full = readFileSync(ledger.logPath);
  expect(full.length).toBeGreaterThan(page);
  /** The group's bytes from `from` on never reached the disk; the file's size did. */
  const zerosFrom = (from: number) => {
    writeFileSync(ledger.logPath, Buffer.concat([full.subarray(0, from), Buffer.alloc(full.length - from)]));
    writeFileSync(headPathOf(ledger.logPath), head);
  };
  return { start, page, before, zerosFrom };
}

/** Zeros written over a group from `from` on (its start, or a page boundary inside it): the open cuts it as torn. */
async function expectZeroedGroupCut(from: 'start' | 'page'): Promise<void> {
  const ledger = ledgerForTest();
  const run = await groupAcrossAPage(ledger);
  run.zerosFrom(run[from]);
  const spine = await ledger.open({ snapshotEveryFrames: 0 });
  expect(spine.kernel.stateHash()).toBe(run.before);
  await spine.close();
  expect(recoveredReasons(ledger.logPath)).toEqual(['torn tail']);
}

describe('FIXED: a group whose first page reached the disk and whose second did not', () => {
  it('CONTROL: zeros from the first byte of the group (the documented zero-filled tail) are a torn tail: the open cuts them', () =>
    expectZeroedGroupCut('start'));

  // Fixed (not new with groups: a lone frame across a page behaved the same). ChainCheck.finish took
  // a tail for torn only when it was all zeros from a frame boundary; data reaches the disk a page
  // at a time, so a crash that extended the file can leave the group's first page and zeros after
  // it, and the next open refused the ledger (bad-hash) although nothing past the head was ever
  // acknowledged. A damaged frame past the head with a whole zero page is now a torn tail.
  it('zeros from the page boundary inside the group: the open cuts the group and opens', () =>
    expectZeroedGroupCut('page'));
});

/** A task whose patch is verified and awaits a person's approval; then that approval, genuinely given, in the log. */
async function approvalGiven(ledger: TempLedger) {
  let spine = await ledger.open({ snapshotEveryFrames: 0 });
  const script = new TaskScript(1, 'apply');
  for (let step = 0; step < 6; step++) await submitBatch(spine, [script]);
  const taskId = script.taskId;
  const waiting = { hash: spine.kernel.stateHash(), status: spine.kernel.taskStatus(taskId) };
  await spine.close();
  const headPath = headPathOf(ledger.logPath);
  const log = readFileSync(ledger.logPath);
  const head = readFileSync(headPath);
  const last = logFrames(ledger.logPath).at(-1) as DecodedFrame;
  spine = await ledger.open({ snapshotEveryFrames: 0 });
  await submitBatch(spine, [script]); // the person's ApprovalResolved, granted
  const granted = { hash: spine.kernel.stateHash(), status: spine.kernel.taskStatus(taskId) };
  await spine.close();
  const step = logFrames(ledger.logPath).filter((f) => f.seq > last.seq);
  const [event, answer] = step as [DecodedFrame, DecodedFrame];
  expect([event.kind, event.commit, answer.kind, answer.commit]).toEqual([
    'ApprovalResolved',
    false,
    'kernel.actions',
    true,
  ]);
  return {
    taskId,
    waiting,
    granted,
    log,
    head,
    grantedHead: readFileSync(headPath),
    last,
    event,
    answer,
    /** Puts the log back to `log` + `tail`, with `withHead` as its head file. */
    restore(tail: Uint8Array, withHead: Buffer = head) {
      writeFileSync(ledger.logPath, Buffer.concat([log, tail]));
      writeFileSync(headPath, withHead);
    },
  };
}

describe('frames forged past the head by someone who can write the log but has no key (held)', () => {
  it('an approval forged as a group in every shape (commit marks, lone event, swapped, answer for another seq, torn) is cut back, never replayed; CONTROL: the genuine head over the same bytes grants it', async () => {
    const ledger = ledgerForTest();
    const run = await approvalGiven(ledger);
    const { event, answer, last } = run;
    expect(run.waiting.status).not.toBe(run.granted.status);
    const eventSeq = last.seq + 1;
    const variants: Record<string, Buffer> = {
      // The genuine step's bytes: all a keyless forger needs to compute (unkeyed hashes).
      'event + answer, commit on the answer': Buffer.concat([Buffer.from(event.bytes), Buffer.from(answer.bytes)]),
      'event + answer, no commit mark': forge(last, [inputOf(event), inputOf(answer)], [false, false]),
      'the event alone, no commit mark (the log ends inside a group)': forge(last, [inputOf(event)], [false]),
      'the event alone, committed (an event acknowledged before its answer)': forge(last, [inputOf(event)], [true]),
      'answer before its event': forge(
        last,
        [
          inputOf(answer, { ...payloadOf(answer), for: eventSeq + 1 }),
          inputOf(event, { ...payloadOf(event), seq: eventSeq + 1 }),
        ],
        [false, true],
      ),
      'an answer that names an earlier event': forge(
        last,
        [inputOf(event), inputOf(answer, { ...payloadOf(answer), for: last.seq - 1 })],
        [false, true],
      ),
      'the event whole, its answer torn': Buffer.concat([
        Buffer.from(event.bytes),
        Buffer.from(answer.bytes.subarray(0, answer.bytes.length >> 1)),
      ]),
    };
    for (const [name, tail] of Object.entries(variants)) {
      run.restore(tail);
      const spine = await ledger.open({ snapshotEveryFrames: 0 });
      expect(spine.kernel.taskStatus(run.taskId), name).toBe(run.waiting.status);
      expect(spine.kernel.stateHash(), name).toBe(run.waiting.hash);
      await spine.close();
      const frames = logFrames(ledger.logPath);
      expect(
        frames.filter((f) => f.kind === 'ApprovalResolved'),
        name,
      ).toEqual([]);
      expect(recoveredReasons(ledger.logPath), name).not.toContain('unanswered event');
      expect(ledger.replay().ok, name).toBe(true);
    }
    // Two commits past the head (the head rolled back or lost): the ledger is refused, nothing replayed.
    run.restore(forge(last, [inputOf(event), inputOf(answer)], [true, true]));
    await expect(ledger.open({ snapshotEveryFrames: 0 })).rejects.toThrow(/cannot open the event log/);
    // The genuine group's two frames swapped as they are: out of seq order, refused likewise.
    run.restore(Buffer.concat([Buffer.from(answer.bytes), Buffer.from(event.bytes)]));
    await expect(ledger.open({ snapshotEveryFrames: 0 })).rejects.toThrow(/reordered/);
    // CONTROL: the same bytes under the head the writer MAC'd are the person's approval, replayed.
    run.restore(variants['event + answer, commit on the answer'] as Buffer, run.grantedHead);
    const spine = await ledger.open({ snapshotEveryFrames: 0 });
    expect(spine.kernel.taskStatus(run.taskId)).toBe(run.granted.status);
    expect(spine.kernel.stateHash()).toBe(run.granted.hash);
    await spine.close();
  });
});

describe('rolled back to a head the writer once wrote (held)', () => {
  it('every head the spine wrote names the end of a step, never an event: a rollback to any of them leaves no half step; CONTROL: a head on an event frame (as a writer that committed the event alone left it) does', async () => {
    const ledger = ledgerForTest();
    const spine = await ledger.open({ snapshotEveryFrames: 0 });
    const headPath = headPathOf(ledger.logPath);
    const scripts = [new TaskScript(1, 'apply', true), new TaskScript(2, 'deny')];
    const history: { head: Buffer; statuses: (string | undefined)[] }[] = [];
    const remember = () =>
      history.push({ head: readFileSync(headPath), statuses: scripts.map((s) => spine.kernel.taskStatus(s.taskId)) });
    while (scripts.some((s) => !s.done)) {
      await submitBatch(spine, scripts);
      remember();
      await spine.recorder.appendNote('output', scripts[0]?.taskId as TaskId, { between: history.length });
      remember();
    }
    await spine.close();
    const full = readFileSync(ledger.logPath);
    const frames = logFrames(ledger.logPath);
    for (const { head, statuses } of history) {
      const decoded = decodeHead(head.toString('utf8'));
      if (decoded._tag === 'Left') throw new Error(decoded.left.reason);
      const named = frames.find((f) => f.seq === decoded.right.seq) as DecodedFrame;
      expect(named.commit, `head at ${named.seq}`).toBe(true);
      expect(named.kind, `head at ${named.seq}`).toMatch(/^(kernel\.actions|note\.output)$/);
      // The rollback: the log cut back to that head's end, the head file put back.
      writeFileSync(ledger.logPath, full.subarray(0, decoded.right.end));
      writeFileSync(headPath, head);
      const reopened = await ledger.open({ snapshotEveryFrames: 0 });
      // As it stood then (a finished task is compacted by the open).
      const expected = statuses.map((status) =>
        status !== undefined && TERMINAL_STATUSES.has(status as TaskStatus) ? undefined : status,
      );
      expect(
        scripts.map((s) => reopened.kernel.taskStatus(s.taskId)),
        `rolled back to ${named.seq}`,
      ).toEqual(expected);
      await reopened.close();
      expect(ledger.replay().ok, `rolled back to ${named.seq}`).toBe(true);
      expect(recoveredReasons(ledger.logPath), `rolled back to ${named.seq}`).toEqual([]);
    }
    // CONTROL: a head naming an event frame inside a group (MAC'd: only a writer could make it).
    const event = frames.find((f) => f.kind === 'TaskPlanned') as DecodedFrame;
    const end = event.offset + event.length;
    writeFileSync(ledger.logPath, full.subarray(0, end));
    writeFileSync(headPath, encodeHead({ seq: event.seq, hash: toHex(event.hash), end }, ledger.key));
    const reopened = await ledger.open({ snapshotEveryFrames: 0 });
    await reopened.close();
    expect(recoveredReasons(ledger.logPath)).toEqual(['unanswered event']);
  });
});

/** Checks what the spine guarantees of every kernel event in the log: its payload seq is its frame seq, and its answer is the next frame, in the same commit. */
function expectStepsWhole(logPath: string): number {
  const frames = logFrames(logPath);
  let steps = 0;
  frames.forEach((frame, i) => {
    if (!/^[A-Z]/.test(frame.kind)) return;
    steps += 1;
    const answer = frames[i + 1];
    expect(payloadOf(frame).seq, `event ${frame.seq}`).toBe(frame.seq);
    expect(frame.commit, `event ${frame.seq}`).toBe(false);
    expect(answer?.kind, `after event ${frame.seq}`).toBe('kernel.actions');
    expect(payloadOf(answer as DecodedFrame).for, `after event ${frame.seq}`).toBe(frame.seq);
    expect(answer?.commit, `after event ${frame.seq}`).toBe(true);
  });
  return steps;
}

describe('submits, notes and receipts all at once (held)', () => {
  it('four tasks submitting together, with notes and receipts appended before, during and after each step: every event frame carries its own seq and its answer right after it; CONTROL: one append between the seq read and the group leaves a log that never opens again', async () => {
    const ledger = ledgerForTest();
    let spine = await ledger.open({ snapshotEveryFrames: 16 });
    const recorder = spine.recorder;
    const scripts = [
      new TaskScript(1, 'apply', true),
      new TaskScript(2, 'deny', true),
      new TaskScript(3, 'reject'),
      new TaskScript(4, 'apply'),
    ];
    const original = recorder.appendStep.bind(recorder);
    const extra: Promise<unknown>[] = [];
    let calls = 0;
    const receipt = (taskId: TaskId, n: number) =>
      recorder.recordReceipt({
        taskId,
        toolCallId: makeId('ToolCallId', `rc${n}`),
        toolName: 'shell',
        args: { n },
        result: `r${n}`,
        modelText: `r${n}`,
      });
    recorder.appendStep = (pending, step) => {
      const taskId = (pending as { taskId: TaskId }).taskId;
      calls += 1;
      // Queued before the step reads the next seq, and (a microtask later) while its group commits.
      extra.push(recorder.appendNote('output', taskId, { before: calls }));
      const stepped = original(pending, step);
      extra.push(recorder.appendNote('output', taskId, { during: calls }), receipt(taskId, calls));
      queueMicrotask(() => extra.push(recorder.appendNote('output', taskId, { later: calls })));
      return stepped;
    };
    let round = 0;
    while (scripts.some((s) => !s.done)) {
      round += 1;
      const side = scripts.map((s) => recorder.appendNote('output', s.taskId, { round }));
      await Promise.all([submitBatch(spine, scripts), ...side]);
    }
    await Promise.all(extra);
    await spine.close();
    expect(expectStepsWhole(ledger.logPath)).toBe(calls);
    expect(ledger.replay().ok).toBe(true);
    spine = await ledger.open({ snapshotEveryFrames: 16 });

    // CONTROL: a note appended inside the step (after the event read the writer's next seq, before
    // the group took its seqs) would shift the event frame off the seq its payload carries; the
    // recorder's assertion refuses the group before it is written, and the kernel is rolled back.
    const fresh = new TaskScript(5, 'apply');
    const inner = spine.recorder;
    const plain = inner.appendStep.bind(inner);
    inner.appendStep = (pending, step) =>
      plain(pending, (event) => {
        void inner.appendNote('output', fresh.taskId, { slipped: true });
        return step(event);
      });
    const beforeSlip = spine.kernel.stateHash();
    await expect(submitBatch(spine, [fresh])).rejects.toThrow(/ledger seq moved to \d+ under event \d+/);
    inner.appendStep = plain;
    expect(spine.kernel.stateHash()).toBe(beforeSlip);
    await spine.close();
    const reopened = await ledger.open({ snapshotEveryFrames: 16 });
    await reopened.close();
    expect(ledger.replay().ok).toBe(true);
  });
});

/** The spine's writer (private to it), caught on its next append; `refusal` is put back before this returns. */
async function writerOf(spine: LedgerSpine, taskId: TaskId): Promise<LedgerWriter> {
  const proto = LedgerWriter.prototype;
  const refusal = Object.getOwnPropertyDescriptor(proto, 'refusal')?.value as LedgerWriter['refusal'];
  let caught: LedgerWriter | undefined;
  proto.refusal = function (this: LedgerWriter, frames: number) {
    caught ??= this;
    return refusal.call(this, frames);
  };
  try {
    await spine.recorder.appendNote('output', taskId, { catching: true });
  } finally {
    proto.refusal = refusal;
  }
  if (caught === undefined) throw new Error('the spine appended through no LedgerWriter');
  return caught;
}

const note = (n: number): FrameInput => ({
  kind: 'note.output',
  actor: 'runtime',
  visibility: 'user',
  timestampMs: 1,
  payload: { n },
});

/**
 * Fills the writer's queue: one note commits (its write in flight) while a group of all but one
 * frame the queue may hold waits behind it. Nothing resolves before the commit's I/O does, so every
 * microtask until then sees the queue full.
 */
function fillQueue(writer: LedgerWriter): Promise<unknown> {
  const first = writer.append(note(0));
  const rest = writer.appendGroup(Array.from({ length: DEFAULT_MAX_QUEUED_FRAMES - 1 }, (_, i) => note(i + 1)));
  return Promise.all([first, rest]).then(([a, b]) => {
    if (a._tag === 'Left' || b._tag === 'Left') throw new Error('the queue did not take the filler');
  });
}

describe('a writer that would refuse the step (held)', () => {
  it('a full queue refuses the event before the kernel steps; the spine keeps taking events once it drains; CONTROL: without the early question the same full queue leaves the kernel stepped and the spine stopped', async () => {
    const ledger = ledgerForTest();
    const spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    await submitBatch(spine, [script]);
    const writer = await writerOf(spine, script.taskId);
    const ready = { kind: 'WorkspaceReady', taskId: script.taskId, baseCommit: 'base' } as const;
    const before = spine.kernel.stateHash();
    let drained = fillQueue(writer);
    await expect(spine.submit(ready)).rejects.toThrow(/QueueFull/);
    expect(spine.kernel.stateHash()).toBe(before);
    await drained;
    const step = await spine.submit(ready);
    expect(step.actions.map((a) => a.kind)).toContain('PlanTask');

    // CONTROL: the recorder's question answered "no refusal" once (as if it were not asked): the
    // kernel steps, the group is refused as QueueFull, and the kernel is rolled back (the kernel it
    // stepped moved; the spine's is the one before), so the spine takes the event once it drains.
    const planned = spine.kernel.stateHash();
    const proto = LedgerWriter.prototype;
    const refusal = Object.getOwnPropertyDescriptor(proto, 'refusal')?.value as LedgerWriter['refusal'];
    let skip = false;
    proto.refusal = function (this: LedgerWriter, frames: number) {
      if (skip) {
        skip = false;
        return undefined;
      }
      return refusal.call(this, frames);
    };
    const stepped = spine.kernel as unknown as Kernel;
    try {
      drained = fillQueue(writer);
      skip = true;
      await expect(spine.submit({ kind: 'TaskPlanned', taskId: script.taskId, summary: 'plan' })).rejects.toThrow(
        /QueueFull/,
      );
    } finally {
      proto.refusal = refusal;
    }
    expect(stepped.stateHash()).not.toBe(planned);
    expect(spine.kernel.stateHash()).toBe(planned);
    await drained;
    const afterDrain = await spine.submit({ kind: 'TaskPlanned', taskId: script.taskId, summary: 'plan' });
    expect(afterDrain.actions.map((a) => a.kind)).toContain('StartAttempt');
    await spine.close();
    expect(expectStepsWhole(ledger.logPath)).toBe(3);
    expect(ledger.replay().ok).toBe(true);
  });

  it('a closed or failed writer refuses before the kernel steps; an fdatasync that fails under the step rolls the kernel back, the failed writer refuses every later event, and the next open has none of that step', async () => {
    const ledger = ledgerForTest();
    let spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    await submitBatch(spine, [script]);
    const writer = await writerOf(spine, script.taskId);
    const ready = { kind: 'WorkspaceReady', taskId: script.taskId, baseCommit: 'base' } as const;
    const created = spine.kernel.stateHash();
    // The disk fails the group's fdatasync (EIO): the kernel has stepped, the commit fails.
    const handle = await open(ledger.logPath, 'r');
    const fileHandle = Object.getPrototypeOf(handle) as { datasync: () => Promise<void> };
    await handle.close();
    const datasync = fileHandle.datasync;
    fileHandle.datasync = () => Promise.reject(Object.assign(new Error('EIO'), { code: 'EIO' }));
    try {
      await expect(spine.submit(ready)).rejects.toThrow(/LedgerFailed.*EIO/);
    } finally {
      fileHandle.datasync = datasync;
    }
    expect(spine.kernel.stateHash()).toBe(created);
    // The writer has failed: every later event is refused before the kernel steps.
    expect(writer.refusal(2)).toMatchObject({ _tag: 'LedgerFailed', reason: 'EIO' });
    await expect(spine.submit(ready)).rejects.toThrow(/LedgerFailed/);
    expect(spine.kernel.stateHash()).toBe(created);
    await spine.close();
    // The group's bytes were written, never synced under a new head: the next open cuts them.
    spine = await ledger.open({ snapshotEveryFrames: 0 });
    expect(spine.kernel.stateHash()).toBe(created);
    const again = await spine.submit(ready);
    expect(again.actions.map((a) => a.kind)).toContain('PlanTask');
    // A writer closed under the spine (a close racing a submit): refused before the kernel steps.
    const planned = spine.kernel.stateHash();
    await (await writerOf(spine, script.taskId)).close();
    await expect(spine.submit({ kind: 'TaskPlanned', taskId: script.taskId, summary: 'plan' })).rejects.toThrow(
      /LedgerClosed/,
    );
    expect(spine.kernel.stateHash()).toBe(planned);
    await spine.close();
    expect(recoveredReasons(ledger.logPath)).toEqual(['unacknowledged commit']);
    expect(expectStepsWhole(ledger.logPath)).toBe(2);
    expect(ledger.replay().ok).toBe(true);
  });
});

/**
 * run_command calls the model may make: 64 words of 4,096 characters (the agent's own argument
 * bounds, tool-args.ts), which the kernel's codec takes too (MAX_ARGV words of PathText). Bounds
 * count characters; the writer's payload bound (1 MiB) counts bytes of canonical JSON. `event`:
 * U+0001 is six bytes (\u0001), so the ToolCallRequested payload is about 1.5 MiB. `answer`: U+0800
 * is three bytes, so the event (about 0.75 MiB) fits, but the kernel's RequestApproval answer
 * carries the operation twice (about 1.5 MiB) and does not.
 */
const OVERSIZED = { event: '\u0001', answer: '\u0800' } as const;

function oversizedToolCall(taskId: TaskId, which: keyof typeof OVERSIZED): PendingEvent {
  const word = OVERSIZED[which].repeat(ARG_LIMITS.wordChars);
  const argv = Array.from({ length: ARG_LIMITS.argvWords }, (_, i) => (i === 0 ? 'sh' : word));
  return {
    kind: 'ToolCallRequested',
    taskId,
    toolCallId: makeId('ToolCallId', `c-${which}`),
    tool: 'run_command',
    actor: 'agent',
    operation: { op: 'exec', argv, cwd: '/work', profile: 'build', recognizedRunner: false },
    approvalId: makeId('ApprovalId', `a-${which}`),
    nonce: `nonce-${which}`,
  } as PendingEvent;
}

/** A running task (created, workspace ready, planned). */
async function runningTask(spine: LedgerSpine): Promise<TaskScript> {
  const script = new TaskScript(1, 'apply');
  for (let step = 0; step < 3; step++) await submitBatch(spine, [script]);
  return script;
}

const modelTurn = (taskId: TaskId): PendingEvent => ({
  kind: 'ModelOutputReceived',
  taskId,
  inputTokens: 1,
  outputTokens: 1,
  costMicros: 1,
});

/** The spec both FINDING tests check: the tool call refused, the kernel untouched, the spine taking the next event. */
async function expectRefusedAndGoingOn(which: keyof typeof OVERSIZED): Promise<void> {
  const ledger = ledgerForTest();
  const spine = await ledger.open({ snapshotEveryFrames: 0 });
  try {
    const script = await runningTask(spine);
    const before = spine.kernel.stateHash();
    await expect(spine.submit(oversizedToolCall(script.taskId, which))).rejects.toThrow(/payload/);
    expect(spine.kernel.stateHash()).toBe(before);
    expect((await spine.submit(modelTurn(script.taskId))).event.kind).toBe('ModelOutputReceived');
  } finally {
    await spine.close();
  }
}

describe('FIXED: a tool call the model can ask for stopped the spine (the frame bound is met only after the kernel stepped)', () => {
  it('CONTROL: the model can ask for both, the kernel codec takes both; one event is over the frame bound, the other fits and its answer is not; refused before the step (the order before d97ba84), the first leaves the spine taking events', async () => {
    const ledger = ledgerForTest();
    const spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = await runningTask(spine);
    for (const which of ['event', 'answer'] as const) {
      const pending = oversizedToolCall(script.taskId, which);
      const stamped = { ...pending, seq: 99, at: 1 };
      const argv = (pending as unknown as { operation: { argv: string[] } }).operation.argv;
      expect(RunCommandArgs.decode({ argv })._tag, which).toBe('Right');
      expect(decodeKernelEvent(stamped)._tag, which).toBe('Right');
      expect(encodePayload(stamped as never, DEFAULT_MAX_PAYLOAD_BYTES)._tag, which).toBe(
        which === 'event' ? 'Left' : 'Right',
      );
    }
    // Written before the step (appendEvent, the recorder's other door): refused, the kernel untouched.
    const before = spine.kernel.stateHash();
    await expect(spine.recorder.appendEvent(oversizedToolCall(script.taskId, 'event'))).rejects.toThrow(
      /FrameInputError/,
    );
    expect(spine.kernel.stateHash()).toBe(before);
    expect((await spine.submit(modelTurn(script.taskId))).event.kind).toBe('ModelOutputReceived');
    await spine.close();
    expect(ledger.replay().ok).toBe(true);
  });

  // Fixed: the frames' own checks (prepareFrame's payload bound) run inside appendGroup, after the
  // kernel stepped; a refused commit now rolls the kernel back to its state before the event
  // (LedgerSpine #stepAndCommit), so the spine takes the next event.
  it('an event over the frame bound is refused, the kernel left as it was, and the spine takes the next event', () =>
    expectRefusedAndGoingOn('event'));

  // Fixed the same way: the event fits; the kernel's answer (RequestApproval, the operation twice)
  // is what the bound refuses, after the step.
  it('an event whose answer is over the frame bound is refused, the kernel left as it was, and the spine takes the next event', () =>
    expectRefusedAndGoingOn('answer'));
});

/**
 * KernelImpl changes its state in place and checks its invariants after (#assertTask after
 * #dispatch): a KernelInvariantError leaves the kernel moved with nothing logged. The fault is
 * injected (no event is known to trip an invariant); the kernel's own assert would throw the same
 * way. Fixed: the spine rolls the kernel back to the state it had before the event.
 */
function tripAfterStep(spine: LedgerSpine): Kernel {
  const kernel = spine.kernel as unknown as Kernel;
  const step = kernel.step.bind(kernel);
  kernel.step = (event) => {
    step(event);
    kernel.step = step;
    throw new KernelInvariantError('kernel invariant broken: injected after the state changed');
  };
  return kernel;
}

describe('FIXED (fault injection): a step that throws after it changed the kernel left the spine answering from an unlogged state', () => {
  it('the kernel is rolled back, the next event is answered from the logged state, and the ledger replays; CONTROL: the faulty step did move the kernel it ran on', async () => {
    const ledger = ledgerForTest();
    const spine = await ledger.open({ snapshotEveryFrames: 0 });
    const script = new TaskScript(1, 'apply');
    await submitBatch(spine, [script]);
    const created = spine.kernel.stateHash();
    const faulty = tripAfterStep(spine);
    await expect(submitBatch(spine, [script])).rejects.toThrow(/invariant/);
    expect(faulty.stateHash()).not.toBe(created); // CONTROL: moved, nothing written
    expect(spine.kernel.stateHash()).toBe(created);
    // TaskPlanned before WorkspaceReady: the kernel that never saw WorkspaceReady does not start an attempt.
    const planned = await spine.submit({ kind: 'TaskPlanned', taskId: script.taskId, summary: 'plan' });
    expect(planned.actions.map((a) => a.kind)).not.toContain('StartAttempt');
    await spine.close();
    expect(ledger.replay().ok).toBe(true);
    const reopened = await ledger.open({ snapshotEveryFrames: 0 });
    await reopened.close();
  });
});

/** A Node project task: the fix, plus `extra` files, written into a task worktree and extracted. */
async function extracted(fixture: Fixture, worktree: TaskWorktree, extra: Record<string, string>) {
  for (const [file, text] of Object.entries({ 'src/math.js': 'export const add = (a, b) => a + b;\n', ...extra })) {
    mkdirSync(dirname(join(worktree.path, file)), { recursive: true });
    writeFileSync(join(worktree.path, file), text);
  }
  const patch = await extractPatch(worktree, { home: fixture.home });
  if (patch._tag === 'Left' || patch.right === null) throw new Error(`no patch: ${JSON.stringify(patch)}`);
  return patch.right;
}

const POINTER = { 'mod/link-file': 'gitdir: ../../elsewhere/.git\n' };
const NOT_A_POINTER = { 'mod/link-file': 'just text\n' };

function verifyFixture() {
  const fixture = makeRepo(NODE_PROJECT);
  cleanup.push(fixture.cleanup);
  return fixture;
}

describe('integrity read beside the apply, on the tree the patch claims (held)', () => {
  it('bytes that make another tree than the claimed one: the integrity result read on the claimed tree is never kept; CONTROL: that result misses the gitdir pointer the bytes plant, and the true tree carries it through verification', async () => {
    const fixture = verifyFixture();
    const repo = await repoOf(fixture);
    const created = await createTaskWorktree({ repo, taskId: 't_claim', home: fixture.home });
    if (created._tag === 'Left') throw new Error(created.left.message);
    const worktree = created.right;
    // The same task's store holds both trees (and the memo remembers both): the claim is readable.
    const harmless = await extracted(fixture, worktree, NOT_A_POINTER);
    const pointing = await extracted(fixture, worktree, POINTER);
    expect(pointing.files.map((f) => f.path)).toEqual(harmless.files.map((f) => f.path));
    const forged = { ...pointing, treeId: harmless.treeId, risks: harmless.risks };
    const argv = ['node', '--test'] as const;
    const request = { repo, taskId: 't_claim', argv, nowMs: 1, home: fixture.home, save: false };
    const outcome = await verifyPatch(cap('verify'), { ...request, patch: forged });
    expect(outcome).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'TreeMismatch', expected: harmless.treeId, actual: pointing.treeId },
    });
    // CONTROL: read on the claimed tree, the checks find no pointer; on the tree the bytes make, they do.
    const kindsOn = async (treeId: string) =>
      (
        await integrityRisks({
          reader: gitTreeReader(worktreeLocation(worktree)),
          baseCommit: pointing.baseCommit,
          treeId,
          files: pointing.files,
          argv,
        })
      ).map((r) => r.kind);
    expect(await kindsOn(harmless.treeId)).not.toContain('embedded-git-repository');
    expect(await kindsOn(pointing.treeId)).toContain('embedded-git-repository');
    const genuine = await verifyPatch(cap('verify'), { ...request, patch: pointing });
    if (genuine._tag === 'Left' || genuine.right._tag !== 'Verified') throw new Error(JSON.stringify(genuine));
    expect(genuine.right.verified.risks.map((r) => r.kind)).toContain('embedded-git-repository');
    await removeTaskWorktree(worktree);
  });
});

/** The loose object file of `id` in the repository at `dir`. */
const looseObject = (dir: string, id: string): string => join(dir, '.git', 'objects', id.slice(0, 2), id.slice(2));

describe('the tree reader memo and what a worker can reach (fixed: answers are kept per object store)', () => {
  it("a store that lies about a subtree (git checks only the top tree it is asked for) cannot answer for another repository's task: the gitdir pointer is flagged; CONTROL: the liar's own reader gives the lie", async () => {
    const planted = { 'mod/link-file': 'gitdir: ../../poisoned/.git\n' };
    const fix = { 'src/math.js': 'export const add = (a, b) => a + b;\n' };
    // The lying store: the same files (so the same tree id), then `mod`'s tree object swapped for
    // the bytes of another tree (link-file with harmless text) under the same name.
    const liar = makeRepo({ ...NODE_PROJECT, ...fix, ...planted });
    cleanup.push(liar.cleanup);
    const treeId = git(liar.repoDir, 'rev-parse', 'HEAD^{tree}').trim();
    const mod = git(liar.repoDir, 'rev-parse', 'HEAD:mod').trim();
    writeFileSync(join(liar.repoDir, 'mod', 'link-file'), 'just text\n');
    git(liar.repoDir, 'add', '-A');
    const harmlessMod = git(liar.repoDir, 'write-tree', '--prefix=mod/').trim();
    rmSync(looseObject(liar.repoDir, mod), { force: true });
    copyFileSync(looseObject(liar.repoDir, harmlessMod), looseObject(liar.repoDir, mod));
    const lying = gitTreeReader({ gitDir: join(liar.repoDir, '.git'), workTree: null, cwd: liar.repoDir });
    const harmlessBlob = git(liar.repoDir, 'rev-parse', ':mod/link-file').trim();
    expect((await lying.listTree(treeId))?.find((f) => f.path === 'mod/link-file')?.id).toBe(harmlessBlob);
    expect(await lying.grepTree(treeId, '^[[:space:]]*gitdir:', ['mod/link-file', 'src/math.js'])).toEqual([]);
    // The victim: an honest repository and task make that very tree; extraction and verification
    // ask about its id in their own store (the process-wide memo shared answers by id alone before,
    // and gave them the liar's).
    const fixture = verifyFixture();
    const repo = await repoOf(fixture);
    const created = await createTaskWorktree({ repo, taskId: 't_memo', home: fixture.home });
    if (created._tag === 'Left') throw new Error(created.left.message);
    const patch = await extracted(fixture, created.right, planted);
    expect(patch.treeId).toBe(treeId);
    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_memo',
      patch,
      argv: ['node', '--test'],
      nowMs: 1,
      home: fixture.home,
      save: false,
    });
    if (outcome._tag === 'Left' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
    expect(outcome.right.verified.risks.map((r) => r.kind)).toContain('embedded-git-repository');
    // The verified tree has the pointer: git itself, asked in the victim's own stores.
    const found = execFileSync('git', ['--git-dir', join(fixture.repoDir, '.git'), 'grep', '-l', 'gitdir:', treeId], {
      env: { ...process.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: objectStoreDir(fixture.home, repo, 't_memo') },
      encoding: 'utf8',
    });
    expect(found.trim()).toBe(`${treeId}:mod/link-file`);
    await removeTaskWorktree(created.right);
  });
});

/** Host pids whose command line contains `marker` and that are not zombies. */
function livePidsWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) continue;
      const state = /State:\s+(\S)/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (state !== undefined && state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // Gone while scanning.
    }
  }
  return found;
}

/**
 * The worker: tries to plant an object (a lie about a tree, as in the CONTROL above) in every
 * object store its git view names, starts a setsid'd daemon that keeps rewriting worktree files
 * (so, if it outlived the worker, raw, numstat, the binary diff and write-tree could be read while
 * it writes), waits for the daemon's handshake, writes its patch (the fix and a gitdir pointer)
 * and exits while the daemon runs. The daemon's marker is assembled at run time, so only the
 * daemon's own command line carries it.
 */
const daemonWorker = (tag: string): [string, ...string[]] =>
  nodeWorker(
    [
      "const path = require('node:path');",
      "const cp = require('node:child_process');",
      'const report = {};',
      "const gitdir = /^gitdir: (.+)$/m.exec(fs.readFileSync('.git', 'utf8'))[1].trim();",
      "const stores = [path.join(gitdir, 'objects')];",
      "try { stores.push(...fs.readFileSync(path.join(gitdir, 'objects/info/alternates'), 'utf8').split('\\n').filter(Boolean)); } catch (e) { report.alternates = e.code; }",
      'for (const store of stores) {',
      "  try { fs.mkdirSync(path.join(store, 'ee'), { recursive: true }); fs.writeFileSync(path.join(store, 'ee', '0'.repeat(38)), 'lie'); report[store] = 'written'; }",
      '  catch (e) { report[store] = e.code; }',
      '}',
      "const daemonCode = \"const fs = require('node:fs'); fs.mkdirSync('mod', { recursive: true }); fs.writeFileSync('daemon-ready', String(process.pid)); for (let i = 0; ; i++) { fs.writeFileSync('mod/link-file', i % 2 ? 'just text\\\\n' : 'gitdir: ../../daemon/.git\\\\n'); fs.writeFileSync('daemon-count', String(i)); }\";",
      `const marker = 'crustcore-' + 'daemon-' + '${tag}';`,
      "const daemon = cp.spawn(process.execPath, ['-e', daemonCode, marker], { detached: true, stdio: 'ignore' });",
      'daemon.unref();',
      "const count = () => { try { return Number(fs.readFileSync('daemon-count', 'utf8')) || 0; } catch { return 0; } };",
      'while (count() < 2) {}',
      "fs.writeFileSync('src/math.js', 'export const add = (a, b) => a + b;\\n');",
      'try { process.kill(daemon.pid, 0); report.daemonAliveAtExit = true; } catch { report.daemonAliveAtExit = false; }',
      "console.log('REPORT ' + JSON.stringify(report));",
    ].join('\n'),
  );

describe('a worker that keeps running after it exits (held)', () => {
  it('a setsid daemon rewriting the worktree is dead before extraction reads it; nothing is planted in any object store; raw, numstat, the diff and write-tree describe one tree, and its pointer is flagged if it has one', async () => {
    const fixture = verifyFixture();
    const repo = await repoOf(fixture);
    const taskId = 't_daemon';
    const created = await createTaskWorktree({ repo, taskId, home: fixture.home });
    if (created._tag === 'Left') throw new Error(created.left.message);
    const worktree = created.right;
    const tag = `${process.pid}-${Date.now()}`;
    const result = await new ExternalCommandBackend(cap('worker'), { argv: daemonWorker(tag) }).run(
      {
        taskId,
        goal: 'make the tests pass',
        attempt: 1,
        previousDiagnosis: null,
        allowedRoots: [],
        forbiddenPaths: [],
        maxSeconds: 60,
        maxOutputBytes: 1 << 20,
      },
      { worktree, home: fixture.home },
    );
    const line = result.transcript.stdoutText.split('\n').find((l) => l.startsWith('REPORT ')) ?? '';
    expect(line, result.transcript.stderrText).not.toBe('');
    const report = JSON.parse(line.slice('REPORT '.length)) as Record<string, unknown>;
    // CONTROL: the daemon ran, had rewritten the files, and was alive when the worker exited.
    expect(report.daemonAliveAtExit).toBe(true);
    const daemonPid = Number(readFileSync(join(worktree.path, 'daemon-ready'), 'utf8'));
    expect(daemonPid).toBeGreaterThan(0);
    // Dead by the time the backend returned (its pid namespace died with the worker).
    expect(livePidsWith(`crustcore-daemon-${tag}`)).toEqual([]);
    // Every store the worker could name refused the write; the task's own store is not among them.
    const stores = Object.entries(report).filter(([key]) => key.startsWith('/'));
    expect(stores.length).toBeGreaterThanOrEqual(2);
    for (const [store, outcome] of stores) expect(outcome, store).not.toBe('written');
    expect(stores.map(([store]) => store)).not.toContain(objectStoreDir(fixture.home, repo, taskId));
    expect(existsSync(join(fixture.repoDir, '.git', 'objects', 'ee'))).toBe(false);
    // One tree: the bytes applied to the base make it (verify would say TreeMismatch otherwise),
    // and the listed files are exactly the ones git sees between the base and it.
    if (result.patch._tag !== 'Patch') throw new Error(JSON.stringify(result.patch));
    const patch = result.patch.patch;
    const inStores = { ...process.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: objectStoreDir(fixture.home, repo, taskId) };
    const gitHere = (...args: string[]) =>
      execFileSync('git', ['--git-dir', join(fixture.repoDir, '.git'), ...args], { env: inStores, encoding: 'utf8' });
    expect(gitHere('diff-tree', '-r', '--name-only', patch.baseCommit, patch.treeId).trim().split('\n')).toEqual(
      patch.files.map((f) => f.path),
    );
    // (The raw listing's blob ids are abbreviated: the tree's full ids start with them.)
    for (const file of patch.files)
      expect(gitHere('rev-parse', `${patch.treeId}:${file.path}`).startsWith(file.newBlob ?? '-'), file.path).toBe(
        true,
      );
    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId,
      patch,
      argv: ['node', '--test'],
      nowMs: 1,
      home: fixture.home,
      save: false,
    });
    if (outcome._tag === 'Left' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
    const pointing = gitHere('show', `${patch.treeId}:mod/link-file`).startsWith('gitdir:');
    expect(outcome.right.verified.risks.some((r) => r.kind === 'embedded-git-repository')).toBe(pointing);
    await removeTaskWorktree(worktree);
  });
});

/**
 * integrity.ts contentRisks reads package.json (and pyproject.toml, setup.cfg, tox.ini) before and
 * after through TreeReader.readBlob, which answers null for a blob over 1 MiB (or one git cannot
 * name: the ids are the raw diff's abbreviated ones). packageJsonFindings takes null for "no such
 * file", not "cannot tell": a new package.json it cannot read compares as absent, and its install
 * scripts as unchanged. 77f619b made the tree and pointer reads fail safe; these stayed open.
 */
describe('FIXED: a package.json too big to read was compared as absent (integrity failed open)', () => {
  const base = { ...NODE_PROJECT, 'package.json': '{"name":"fixture","type":"module"}\n' };
  const withPostinstall = JSON.stringify(
    {
      name: 'fixture',
      type: 'module',
      scripts: { postinstall: "node -e \"require('fs').writeFileSync('INSTALL-RAN', '')\"" },
    },
    null,
    2,
  );
  // The same JSON, padded past the reader's 1 MiB blob bound with insignificant whitespace.
  const padded = withPostinstall.replace('{', `{${' '.repeat(1024 * 1024)}`);

  async function extractedFrom(pkg: string): Promise<Planted> {
    const fixture = makeRepo(base);
    cleanup.push(fixture.cleanup);
    const repo = await repoOf(fixture);
    const created = await createTaskWorktree({ repo, taskId: 't_pkg', home: fixture.home });
    if (created._tag === 'Left') throw new Error(created.left.message);
    return { fixture, patch: await extracted(fixture, created.right, { 'package.json': pkg }) };
  }

  it('CONTROL: the small package.json needs a person; the padded one is the same JSON and npm install runs its script', async () => {
    expect(JSON.parse(padded)).toEqual(JSON.parse(withPostinstall));
    const small = await extractedFrom(withPostinstall);
    expect(small.patch.risks.map((r) => r.kind)).toContain('package-manager-config-changed');
    expect(needsApproval(small.patch.risks)).toBe(true);
    const big = await extractedFrom(padded);
    const clone = join(big.fixture.base, 'control');
    git(big.fixture.base, 'clone', '-q', big.fixture.repoDir, clone);
    writeFileSync(join(big.fixture.base, 'control.diff'), big.patch.bytes);
    execFileSync('git', ['apply', '--binary', '--whitespace=nowarn', join(big.fixture.base, 'control.diff')], {
      cwd: clone,
      stdio: 'ignore',
    });
    runHost(clone, ['npm', 'install', '--offline', '--no-audit', '--no-fund', '--no-update-notifier']);
    expect(existsSync(join(clone, 'INSTALL-RAN'))).toBe(true);
  });

  // Fixed: extraction and verification gave it `config-changed` (warn) only, so `--approve auto`
  // landed a postinstall the user's next `npm install` runs. A config blob that exists but cannot be
  // read is now "cannot tell" (integrity.ts contentRisks), which needs a person.
  it('the padded package.json with a postinstall script needs a person after verification', async () => {
    const big = await extractedFrom(padded);
    const repo = await repoOf(big.fixture);
    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_pkg',
      patch: big.patch,
      argv: ['node', '--test'],
      nowMs: 1,
      home: big.fixture.home,
      save: false,
    });
    if (outcome._tag === 'Left' || outcome.right._tag !== 'Verified') throw new Error(JSON.stringify(outcome));
    expect(needsApproval(outcome.right.verified.risks)).toBe(true);
  });
});
