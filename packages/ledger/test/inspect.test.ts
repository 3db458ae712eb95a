import { chmodSync, writeFileSync } from 'node:fs';
import { type Hash32, makeId, sha256Hex } from '@crustcore/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ArtifactStore,
  artifactReferences,
  type FrameInput,
  type InspectOptions,
  inspectLog,
  outputHandle,
  ReceiptIssuer,
  renderStory,
  stateDirLayout,
} from '../src/index.js';
import { fakeKernel, recordAdd } from './fake-kernel.js';
import { mustAppend, note, openWriter, TASK, tempDir, testKey } from './helpers.js';

const dirs: Array<{ remove: () => void }> = [];
function dir(): string {
  const d = tempDir('inspect-');
  dirs.push(d);
  return d.path;
}
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const key = testKey(4);
const inspect = <E>(path: string, extra: Partial<InspectOptions<E>> = {}) =>
  inspectLog<E>({ ...stateDirLayout(path), key, ...extra });

describe('artifact store', () => {
  it('stores by hash under ab/cdef…, reads back verified, and is idempotent', async () => {
    const store = new ArtifactStore(stateDirLayout(dir()).artifactsDir);
    const bytes = new TextEncoder().encode('diff --git a/x b/x\n');
    const put = await store.put(bytes);
    if (put._tag !== 'Right') throw new Error('put');
    expect(put.right.hash).toBe(sha256Hex(bytes));
    expect(store.pathOf(put.right.hash)).toMatch(
      new RegExp(`/${put.right.hash.slice(0, 2)}/${put.right.hash.slice(2)}$`),
    );
    expect(store.read(put.right.hash)).toEqual({ _tag: 'Right', right: bytes });
    expect((await store.put(bytes))._tag).toBe('Right');
  });

  it('a replaced artifact is caught on read; a missing one is reported', async () => {
    const store = new ArtifactStore(stateDirLayout(dir()).artifactsDir);
    const put = await store.put(new TextEncoder().encode('original'));
    if (put._tag !== 'Right') throw new Error('put');
    const path = store.pathOf(put.right.hash);
    chmodSync(path, 0o644);
    writeFileSync(path, 'replaced');
    expect(store.read(put.right.hash)).toMatchObject({ _tag: 'Left', left: { _tag: 'ArtifactCorrupt' } });
    expect(store.read(sha256Hex('nope'))).toMatchObject({ _tag: 'Left', left: { _tag: 'ArtifactMissing' } });
    expect(store.read('../../etc/passwd')).toMatchObject({ _tag: 'Left', left: { _tag: 'ArtifactBadName' } });
  });

  it('outputHandle inlines small UTF-8 and hands off big or binary output with a preview', () => {
    const small = new TextEncoder().encode('ok\n');
    expect(outputHandle(small, 100)).toEqual({ _tag: 'Inline', text: 'ok\n', sizeBytes: 3 });
    const big = new TextEncoder().encode(`${'a'.repeat(5000)}MIDDLE${'z'.repeat(5000)}`);
    const handle = outputHandle(big, 1000, { previewBytes: 64 });
    expect(handle).toEqual({
      _tag: 'Handle',
      artifact: sha256Hex(big),
      sizeBytes: big.length,
      head: 'a'.repeat(64),
      tail: 'z'.repeat(64),
    });
    expect(outputHandle(new Uint8Array([0xff, 0xfe, 0x00]), 100)._tag).toBe('Handle');
  });

  it('putOutput stores only what it hands off', async () => {
    const store = new ArtifactStore(stateDirLayout(dir()).artifactsDir);
    const out = await store.putOutput(new Uint8Array(10_000).fill(65), 1000);
    expect(
      out._tag === 'Right' && out.right._tag === 'Handle' && store.check(out.right.artifact)._tag === 'Right',
    ).toBe(true);
  });
});

describe('artifact references in payloads', () => {
  it('follows the naming convention at any depth and ignores non-hash values', () => {
    const a = sha256Hex('a');
    const b = sha256Hex('b');
    const c = sha256Hex('c');
    const d = sha256Hex('d');
    expect(
      [
        ...artifactReferences({
          artifact: a,
          nested: [{ stdoutArtifact: b }],
          artifacts: [c, 'x'],
          other: d,
          artifactNote: 'x',
        }),
      ].sort(),
    ).toEqual([a, b, c].sort());
  });

  it('inspect fails on a missing or replaced referenced artifact', async () => {
    const path = dir();
    const store = new ArtifactStore(stateDirLayout(path).artifactsDir);
    const put = await store.put(new TextEncoder().encode('npm test output'));
    if (put._tag !== 'Right') throw new Error('put');
    const writer = await openWriter(path, { key });
    await mustAppend(writer, note(1, { stdoutArtifact: put.right.hash }));
    await writer.close();
    expect(inspect(path).failure).toBeUndefined();
    expect(inspect(path).artifactsChecked).toBe(1);

    chmodSync(store.pathOf(put.right.hash), 0o644);
    writeFileSync(store.pathOf(put.right.hash), 'all tests passed (really)');
    expect(inspect(path).failure).toMatchObject({ reason: 'bad-artifact', seq: 1 });

    const other = dir();
    const w2 = await openWriter(other, { key });
    await mustAppend(w2, note(1));
    await mustAppend(w2, note(2, { artifact: sha256Hex('never stored') }));
    await w2.close();
    expect(inspect(other).failure).toMatchObject({ reason: 'missing-artifact', seq: 2 });
  });
});

describe('receipt checks in inspect', () => {
  const toolCallId = makeId('ToolCallId', 'c1');
  const request = { taskId: TASK, toolCallId, toolName: 'read_file', args: {}, result: 'x', modelText: 'x' };

  it('a reference to a receipt the log does not hold fails; one it holds passes', async () => {
    const path = dir();
    const writer = await openWriter(path, { key });
    const out = await new ReceiptIssuer(key).record(writer, request, { timestampMs: 1 });
    if (out._tag !== 'Right') throw new Error('record');
    await mustAppend(writer, note(2, { toolCallId, receiptHash: out.right.receiptHash }));
    await mustAppend(writer, note(3, { toolCallId, receiptHash: sha256Hex('made up') }));
    await writer.close();
    expect(inspect(path).failure).toMatchObject({ reason: 'bad-receipt', seq: 3 });
  });

  it('a receipt for another tool call does not cover this one', async () => {
    const path = dir();
    const writer = await openWriter(path, { key });
    const out = await new ReceiptIssuer(key).record(writer, request, { timestampMs: 1 });
    if (out._tag !== 'Right') throw new Error('record');
    await mustAppend(
      writer,
      note(2, { toolCallId: makeId('ToolCallId', 'other'), receiptHash: out.right.receiptHash }),
    );
    await writer.close();
    expect(inspect(path).failure).toMatchObject({ reason: 'bad-receipt', seq: 2 });
  });

  it('receipts cannot be checked without the key, and that is a failure, not a pass', async () => {
    const path = dir();
    const writer = await openWriter(path);
    await new ReceiptIssuer(key).record(writer, request, { timestampMs: 1 });
    await writer.close();
    const report = inspectLog({ ...stateDirLayout(path) });
    expect(report.failure).toMatchObject({ reason: 'bad-receipt', seq: 1 });
    expect(report.failure?.detail).toMatch(/no receipt key/);
  });
});

describe('replay (fake kernel)', () => {
  const other = makeId('TaskId', 'other');

  async function story(path: string, tamper?: Parameters<typeof recordAdd>[4]): Promise<void> {
    const writer = await openWriter(path, { key, mode: 'batched' });
    const kernel = fakeKernel.createKernel();
    await recordAdd(writer, kernel, TASK, 2);
    await mustAppend(writer, note(writer.nextSeq)); // informational frames are skipped
    await recordAdd(writer, kernel, other, 5);
    await recordAdd(writer, kernel, TASK, 3, tamper);
    await writer.close();
  }

  it('reproduces the recorded actions and state', async () => {
    const path = dir();
    await story(path);
    const report = inspect(path, { kernel: fakeKernel, replay: true });
    expect(report.failure).toBeUndefined();
    expect(report.replay).toMatchObject({ events: 3, actions: 3, unanswered: [] });
    expect(report.kernelEventsChecked).toBe(3);
  });

  it('different recorded actions or state are a replay divergence at the event', async () => {
    const actions = dir();
    await story(actions, { actions: [{ kind: 'Added', taskId: TASK, total: 6 }] });
    expect(inspect(actions, { kernel: fakeKernel, replay: true }).failure).toMatchObject({
      reason: 'replay-divergence',
      seq: 6,
    });
    const state = dir();
    await story(state, { state: sha256Hex('other state') });
    expect(inspect(state, { kernel: fakeKernel, replay: true }).failure).toMatchObject({
      reason: 'replay-divergence',
      seq: 6,
    });
    // Without --replay the same logs are intact: the chain is fine, only the decisions differ.
    expect(inspect(state, { kernel: fakeKernel }).failure).toBeUndefined();
  });

  it('an event whose payload disagrees with its frame header is a bad payload', async () => {
    const path = dir();
    const writer = await openWriter(path, { key });
    await mustAppend(writer, {
      kind: 'Add',
      actor: 'runtime',
      visibility: 'internal',
      timestampMs: 1000,
      taskId: TASK,
      payload: { kind: 'Add', seq: 7, at: 1000, taskId: TASK, amount: 1 },
    });
    await writer.close();
    expect(inspect(path, { kernel: fakeKernel }).failure).toMatchObject({ reason: 'bad-payload', seq: 1 });
  });

  it('a missing actions frame is a divergence, except at the very end (the runtime stopped)', async () => {
    const path = dir();
    const writer = await openWriter(path, { key });
    const add = (seq: number) => ({
      kind: 'Add',
      actor: 'runtime' as const,
      visibility: 'internal' as const,
      timestampMs: 1000 + seq,
      taskId: TASK,
      payload: { kind: 'Add', seq, at: 1000 + seq, taskId: TASK, amount: 1 },
    });
    await mustAppend(writer, add(1));
    const atEnd = inspect(path, { kernel: fakeKernel, replay: true });
    expect(atEnd.failure).toBeUndefined();
    expect(atEnd.replay?.unanswered).toEqual([1]);
    await mustAppend(writer, add(2));
    await writer.close();
    expect(inspect(path, { kernel: fakeKernel, replay: true }).failure).toMatchObject({
      reason: 'replay-divergence',
      seq: 1,
    });
  });
});

describe('story', () => {
  /** A frame of the task, one second per seq; `payload` as it is. */
  const storyFrame = (seq: number, kind: string, payload: object): FrameInput => ({
    kind,
    actor: 'runtime',
    visibility: 'internal',
    timestampMs: 1_733_000_000_000 + seq * 1000,
    taskId: TASK,
    payload: payload as FrameInput['payload'],
  });
  /** A kernel event's frame: its payload carries the event's own kind, seq, time and task. */
  const frame = (seq: number, kind: string, fields: object): FrameInput =>
    storyFrame(seq, kind, { kind, seq, at: 1_733_000_000_000 + seq * 1000, taskId: TASK, ...fields });

  it("tells a task's goal, commands, verification, approvals and outcome from the kernel's fields", async () => {
    const path = dir();
    const writer = await openWriter(path, { key });
    const h = (s: string) => sha256Hex(s) as Hash32;
    await mustAppend(
      writer,
      frame(1, 'TaskCreated', { goal: 'Fix the parser', profile: 'supervised', approvalMode: 'ask', canAsk: true }),
    );
    await mustAppend(
      writer,
      frame(2, 'CommandCompleted', {
        argv: ['npm', 'test'],
        exitCode: 1,
        outputBytes: 10,
        durationMs: 900,
        purpose: 'baseline',
      }),
    );
    await mustAppend(
      writer,
      frame(3, 'PatchVerified', {
        patchHash: h('p'),
        treeHash: h('t'),
        argv: ['npm', 'test'],
        exitCode: 0,
        profile: 'bwrap',
        risks: [],
      }),
    );
    await mustAppend(writer, {
      ...frame(4, 'kernel.actions', {}),
      payload: {
        for: 3,
        state: h('s'),
        actions: [{ kind: 'RequestApproval', approvalId: 'a_1', description: 'integrate patch', requiresHuman: true }],
      },
    });
    await mustAppend(writer, frame(5, 'ApprovalResolved', { approvalId: 'a_1', decision: 'granted', by: 'human' }));
    await mustAppend(writer, {
      ...frame(6, 'kernel.actions', {}),
      payload: {
        for: 5,
        state: h('s'),
        actions: [{ kind: 'TaskFinished', outcome: 'completed', reason: 'applied', patchHash: h('p') }],
      },
    });
    await mustAppend(writer, frame(7, 'SomethingNew', {}));
    await writer.close();
    const [story] = inspect(path).tasks;
    expect(story).toMatchObject({
      taskId: TASK,
      goal: 'Fix the parser',
      outcome: 'completed',
      patchHash: h('p'),
      approvals: [{ approvalId: 'a_1', decision: 'granted', by: 'human', description: 'integrate patch' }],
      commands: [{ argv: ['npm', 'test'], exitCode: 1, purpose: 'baseline' }],
      verification: { treeHash: h('t'), exitCode: 0 },
    });
    const text = renderStory(story!).join('\n');
    expect(text).toContain('goal: "Fix the parser"');
    expect(text).toContain('baseline: npm test → exit 1');
    expect(text).toContain('verify evidence: npm test → exit 0');
    expect(text).toContain('approvals: a_1 granted by human');
    expect(text).toContain('SomethingNew #7');
    expect(inspect(path, { taskId: 't_nobody' }).tasks).toEqual([]);
  });

  it("tells the runtime's notes and a compaction in words, a note's text quoted", async () => {
    const path = dir();
    const writer = await openWriter(path, { key });
    await mustAppend(writer, frame(1, 'TaskCreated', { goal: 'g' }));
    await mustAppend(
      writer,
      storyFrame(2, 'note.backend.result', {
        backend: 'external-command',
        attempt: 1,
        exitCode: 0,
        selfClaimedDone: true,
      }),
    );
    // A diagnosis quotes test output: a control character in it is shown escaped, never sent to the terminal.
    await mustAppend(writer, storyFrame(3, 'note.verify.diagnosis', { summary: 'expected 5\u001b[2J got 1' }));
    await mustAppend(
      writer,
      storyFrame(4, 'note.verify.evidence', { patchSha256: 'ab'.repeat(32), treeId: 'cd'.repeat(20) }),
    );
    await mustAppend(writer, storyFrame(5, 'note.tool.refused', { tool: 'run_command', reason: 'too large' }));
    await mustAppend(writer, frame(6, 'TaskCompacted', {}));
    await writer.close();
    const text = renderStory(inspect(path).tasks[0]!).join('\n');
    expect(text).toContain('worker result of attempt 1 recorded (external-command, exit 0, says done)');
    expect(text).toContain('failure diagnosis recorded: "expected 5\\u001b[2J got 1"');
    expect(text).not.toContain('\u001b');
    expect(text).toContain(`verification evidence recorded (patch ${'ab'.repeat(6)}, git tree ${'cd'.repeat(6)})`);
    expect(text).toContain('tool call refused, nothing ran: "run_command" was too large to record');
    expect(text).toContain('finished: dropped from the live kernel state');
    // None of them falls back to its raw kind and seq (what a kind nobody describes shows).
    expect(text).not.toMatch(/note\.\w+\.\w+ #\d/);
  });
});
