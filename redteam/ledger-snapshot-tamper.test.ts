/**
 * Kernel snapshot frames let opening skip the replay of everything they
 * cover — so a snapshot that lies would hand the runtime a kernel that never
 * existed. Attacks: a snapshot whose state marks a task's integration as
 * approved or as not needing a person (with its real or a matching hash); a
 * genuine snapshot that covers another prefix (replayed later in the log,
 * re-pointed at the last frame, or brought from another ledger); a truncated
 * snapshot (tasks cut from its state, fields cut, no state); a forgery
 * consistent in every way but MACed by another installation's key. Each is
 * appended as frames that chain correctly (the attacker writes through the
 * ledger writer), so only the snapshot checks stand in the way.
 *
 * Each must not be trusted: `LedgerSpine.open` reports it and rebuilds past
 * it, the kernel gives the genuine answer to the probe event, `inspect` lists
 * it, and `inspect --replay` fails with replay-divergence at its seq.
 * CONTROL: a kernel restored naively from the forged state gives another
 * answer to the same probe (applies, completes, re-creates) — so the test would
 * fail if the snapshot were trusted.
 */

import { PassThrough } from 'node:stream';
import { type Action, hashJson, type Json, type KernelEvent, type TaskId } from '@crustcore/kernel';
import {
  ACTIONS_KIND,
  type FrameInput,
  inspectLog,
  kernelOpening,
  kernelReplay,
  LedgerWriter,
  nodeSha256,
  ReceiptKey,
  rebuildKernel,
  restoreKernel,
  SNAPSHOT_KIND,
  SNAPSHOT_MAC_DOMAIN,
  type SnapshotCovers,
  scanFile,
  snapshotMacMessage,
  toHex,
} from '@crustcore/ledger';
import type { LedgerSpine, PendingEvent } from '@crustcore/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { INSPECT_EXIT } from '../packages/crustcore/src/cli/exit-codes.js';
import { type Io, makeStyle } from '../packages/crustcore/src/cli/output.js';
import { inspectCommand } from '../packages/crustcore/src/commands/inspect.js';
import { type TempLedger, tempLedger } from '../packages/runtime/test/spine-helpers.js';
import { hash, TaskScript } from '../packages/runtime/test/task-script.js';

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

type State = {
  v: 1;
  lastAt: number;
  tasks: Record<string, Record<string, Json>>;
  approvals: Record<string, Record<string, Json>>;
  jobs: Record<string, never>;
};
type RequestApproval = Extract<Action, { kind: 'RequestApproval' }>;

interface Scene {
  readonly ledger: TempLedger;
  readonly taskId: string;
  readonly n: number;
  readonly request: RequestApproval;
  /** The state of the log as a full replay from seq 1 gives it. */
  readonly state: State;
}

async function step(spine: LedgerSpine, script: TaskScript): Promise<readonly Action[]> {
  const event = script.next();
  if (event === null) throw new Error('script ended');
  const { actions } = await spine.submit(event);
  script.answer(actions);
  return actions;
}

/** A task waiting for a person to approve its verified patch; `every` = the spine's snapshot interval. */
async function awaitingApproval(n: number, every: number): Promise<Scene> {
  const current = tempLedger();
  ledger = current;
  const spine = await current.open({ snapshotEveryFrames: every });
  // Another finished task first, so the state holds more than the one under attack.
  const other = new TaskScript(n + 100, 'apply');
  for (let done = false; !done; ) done = await stepOrDone(spine, other);
  await spine.compact(other.taskId);
  const script = new TaskScript(n, 'apply');
  let request: RequestApproval | undefined;
  for (let i = 0; i < 6; i++) {
    for (const a of await step(spine, script)) if (a.kind === 'RequestApproval') request = a;
  }
  await spine.close();
  if (request === undefined) throw new Error('no approval was requested');
  return { ledger: current, taskId: script.taskId, n, request, state: replayedState(current.logPath) };
}

async function stepOrDone(spine: LedgerSpine, script: TaskScript): Promise<boolean> {
  const event = script.next();
  if (event === null) return true;
  script.answer((await spine.submit(event)).actions);
  return false;
}

const replayedState = (logPath: string): State => {
  const full = rebuildKernel(logPath, kernelReplay());
  if (full.failure !== undefined) throw new Error(JSON.stringify(full.failure));
  return JSON.parse(JSON.stringify(full.kernel.snapshot())) as State;
};

function lastActions(logPath: string): SnapshotCovers {
  let covers: SnapshotCovers | undefined;
  scanFile(logPath, 0, nodeSha256, (frame) => {
    if (frame.kind === ACTIONS_KIND) covers = { seq: frame.seq, hash: toHex(frame.hash) };
    return true;
  });
  if (covers === undefined) throw new Error('no actions frame');
  return covers;
}

/** Snapshot frames as found in the log: seq and payload. */
function snapshotsIn(logPath: string): { seq: number; payload: Record<string, Json> }[] {
  const found: { seq: number; payload: Record<string, Json> }[] = [];
  scanFile(logPath, 0, nodeSha256, (frame) => {
    if (frame.kind === SNAPSHOT_KIND) {
      const text = new TextDecoder().decode(frame.bytes.subarray(frame.headerLength, frame.length - 36));
      found.push({ seq: frame.seq, payload: JSON.parse(text) });
    }
    return true;
  });
  return found;
}

const snapshotPayload = (key: ReceiptKey, covers: SnapshotCovers, state: Json, stateHash: string): Json => ({
  v: 1,
  covers: { seq: covers.seq, hash: covers.hash },
  stateHash,
  state,
  mac: key.mac(SNAPSHOT_MAC_DOMAIN, snapshotMacMessage(covers, stateHash)),
});

const snapshotInput = (payload: Json): FrameInput => ({
  kind: SNAPSHOT_KIND,
  actor: 'runtime',
  visibility: 'internal',
  timestampMs: 5_000_000,
  payload,
});

/**
 * The attacker appends frames that chain correctly (through the writer, which also keeps the
 * head in step); `build` gets the seq the first one will have. Returns the seq of the last one.
 */
async function append(
  scene: Scene,
  frames: readonly FrameInput[] | ((nextSeq: number) => readonly FrameInput[]),
): Promise<number> {
  const opened = await LedgerWriter.open({ logPath: scene.ledger.logPath, mode: 'durable', key: scene.ledger.key });
  if (opened._tag === 'Left') throw new Error(JSON.stringify(opened.left));
  const writer = opened.right;
  let seq = 0;
  for (const frame of typeof frames === 'function' ? frames(writer.nextSeq) : frames) {
    const ack = await writer.append(frame);
    if (ack._tag === 'Left') throw new Error(JSON.stringify(ack.left));
    seq = ack.right.seq;
  }
  await writer.close();
  return seq;
}

/** What a kernel restored, without any check, from `state` answers to `probe`. */
function naiveAnswer(state: Json, probe: PendingEvent): readonly Action[] {
  const restored = restoreKernel(kernelOpening().config, state);
  if (restored._tag === 'Left') throw new Error(restored.left);
  const lastAt = (state as { lastAt: number }).lastAt;
  return restored.right.step({ ...probe, seq: 900_000, at: lastAt + 1 } as KernelEvent);
}

/** Opens the attacked ledger as the runtime does and sends `probe`: what does the kernel answer? */
async function openAndProbe(scene: Scene, forgedSeq: number, probe: PendingEvent) {
  const spine = await scene.ledger.open({ snapshotEveryFrames: 0 });
  const report = spine.openReport;
  const { actions } = await spine.submit(probe);
  await spine.close();
  expect(report.untrustedSnapshots.map((s) => s.seq)).toContain(forgedSeq);
  expect(report.resumedAtSnapshot).not.toBe(forgedSeq);
  const inspected = inspectLog({ logPath: scene.ledger.logPath, key: scene.ledger.key, kernel: kernelReplay() });
  expect(inspected.ok).toBe(true);
  expect(inspected.snapshots.untrusted.map((s) => s.seq)).toContain(forgedSeq);
  const replayed = scene.ledger.replay();
  expect(replayed.failure?.reason).toBe('replay-divergence');
  expect(replayed.failure?.seq).toBe(forgedSeq);
  return { actions, reason: report.untrustedSnapshots.find((s) => s.seq === forgedSeq)?.reason ?? '' };
}

/** `crustcore inspect` on the attacked ledger, as a user runs it. */
async function inspectCli(scene: Scene, extra: string[]): Promise<{ code: number; stdout: string }> {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const env = { CRUSTCORE_HOME: scene.ledger.dir, NO_COLOR: '1' };
  const io: Io = {
    stdout,
    stderr: new PassThrough(),
    stdin: new PassThrough(),
    env,
    cwd: scene.ledger.dir,
    out: makeStyle(stdout, env),
    err: makeStyle(new PassThrough(), env),
  };
  const code = await inspectCommand.run(['--log', scene.ledger.logPath, ...extra], io);
  return { code, stdout: Buffer.concat(chunks).toString() };
}

const kinds = (actions: readonly Action[]): string[] => actions.map((a) => a.kind);
const rejected = (actions: readonly Action[]): string | undefined =>
  actions.length === 1 && actions[0]?.kind === 'Rejected' ? actions[0].reason : undefined;

/** The task's integration marked as approved and under way: its approval spent, status Integrating. */
function markIntegrating(scene: Scene): State {
  const state = structuredClone(scene.state);
  const task = state.tasks[scene.taskId];
  if (task === undefined) throw new Error('task not in state');
  task.status = 'Integrating';
  delete state.approvals[scene.request.approvalId];
  return state;
}

/** The integration approval no longer needs a person: policy-auto may grant it. */
function dropHumanReview(scene: Scene): State {
  const state = structuredClone(scene.state);
  const approval = state.approvals[scene.request.approvalId];
  if (approval === undefined) throw new Error('approval not in state');
  approval.requiresHuman = false;
  return state;
}

const applyProbe = (scene: Scene): PendingEvent => ({
  kind: 'PatchApplied',
  taskId: scene.taskId as TaskId,
  patchHash: hash(scene.n, 'aa'),
  journalId: 'forged-journal',
});

const autoGrantProbe = (scene: Scene): PendingEvent => ({
  kind: 'ApprovalResolved',
  taskId: scene.taskId as TaskId,
  approvalId: scene.request.approvalId,
  decision: 'granted',
  by: 'policy-auto',
  nonce: scene.request.nonce,
  opHash: scene.request.opHash,
});

describe('forged snapshot state', () => {
  const cases = [
    {
      name: 'integration marked approved, self-consistent hash',
      forge: markIntegrating,
      probe: applyProbe,
      claim: 'own',
      n: 1,
    },
    {
      name: 'integration marked approved, claiming the genuine hash',
      forge: markIntegrating,
      probe: applyProbe,
      claim: 'genuine',
      n: 2,
    },
    {
      name: 'human review dropped, self-consistent hash',
      forge: dropHumanReview,
      probe: autoGrantProbe,
      claim: 'own',
      n: 3,
    },
    {
      name: 'human review dropped, claiming the genuine hash',
      forge: dropHumanReview,
      probe: autoGrantProbe,
      claim: 'genuine',
      n: 4,
    },
  ] as const;

  for (const c of cases) {
    it(`${c.name}: not trusted; the kernel answers as the log says`, async () => {
      const scene = await awaitingApproval(c.n, 3 + c.n);
      const forged = c.forge(scene);
      const claimed =
        c.claim === 'own' ? hashJson(forged as unknown as Json) : hashJson(scene.state as unknown as Json);
      const probe = c.probe(scene);
      // CONTROL: trusted as is, the forged state would let the probe through.
      const naive = naiveAnswer(forged as unknown as Json, probe);
      expect(rejected(naive)).toBeUndefined();
      expect(kinds(naive)).toContain(c.probe === applyProbe ? 'TaskFinished' : 'ApplyPatch');

      const covers = lastActions(scene.ledger.logPath);
      const seq = await append(scene, [
        snapshotInput(snapshotPayload(scene.ledger.key, covers, forged as unknown as Json, claimed)),
      ]);
      const { actions, reason } = await openAndProbe(scene, seq, probe);
      expect(rejected(actions)).toBe(c.probe === applyProbe ? 'illegal-transition' : 'approval-needs-human');
      expect(reason).toMatch(c.claim === 'own' ? /not the one recorded at seq/ : /does not hash to its state hash/);
      // The user sees it: inspect names the snapshot; --replay fails on it.
      const shown = await inspectCli(scene, []);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`untrusted snapshot: seq ${seq}:`);
      expect((await inspectCli(scene, ['--replay'])).code).toBe(INSPECT_EXIT['replay-divergence']);
    }, 60_000);
  }

  it('consistent in every way (its own event, answer and state) but MACed by another key: not trusted', async () => {
    const scene = await awaitingApproval(5, 4);
    const forged = markIntegrating(scene);
    const forgedHash = hashJson(forged as unknown as Json);
    const other = ReceiptKey.fromBytes(new Uint8Array(32).fill(7));
    if (other._tag === 'Left') throw new Error('key');
    // The attacker's own kernel event, and a kernel.actions frame recording the forged state.
    const at = 4_000_000;
    const taskId = scene.taskId as TaskId;
    await append(scene, (seq) => [
      {
        kind: 'ModelOutputReceived',
        ...{ actor: 'runtime', visibility: 'internal', timestampMs: at, taskId },
        payload: { kind: 'ModelOutputReceived', taskId, inputTokens: 1, outputTokens: 1, costMicros: 0, seq, at },
      },
      {
        kind: ACTIONS_KIND,
        ...{ actor: 'kernel', visibility: 'internal', timestampMs: at, taskId },
        payload: { for: seq, actions: [], state: forgedHash },
      },
    ]);
    const probe = applyProbe(scene);
    const covers = lastActions(scene.ledger.logPath);
    const seq = await append(scene, [
      snapshotInput(snapshotPayload(other.right, covers, forged as unknown as Json, forgedHash)),
    ]);
    const spine = await scene.ledger.open({ snapshotEveryFrames: 0 }).catch((e: Error) => e);
    // The forged actions frame makes the full replay diverge, so the ledger does not open at all —
    // and, above all, it did not open on the forged snapshot.
    expect(spine).toBeInstanceOf(Error);
    expect(String(spine)).toMatch(/does not replay/);
    const inspected = inspectLog({ logPath: scene.ledger.logPath, key: scene.ledger.key, kernel: kernelReplay() });
    expect(inspected.snapshots.untrusted).toEqual([{ seq, reason: expect.stringMatching(/MAC does not verify/) }]);
    // CONTROL: the same frames MACed with this installation's key would be trusted by open (the
    // key is the trust root, as for the head file) — which is why the MAC is checked first.
    const genuineMac = snapshotPayload(scene.ledger.key, covers, forged as unknown as Json, forgedHash);
    await append(scene, [snapshotInput(genuineMac)]);
    const naive = await scene.ledger.open({ snapshotEveryFrames: 0 });
    const { actions } = await naive.submit(probe);
    await naive.close();
    expect(kinds(actions)).toContain('TaskFinished');
    // …and inspect --replay still catches it.
    expect(scene.ledger.replay().failure?.reason).toBe('replay-divergence');
  }, 60_000);
});

describe('a genuine snapshot that covers another prefix', () => {
  /** The task waited for approval (snapshots were taken then), then a person denied it. */
  async function deniedAfterSnapshots(
    n: number,
  ): Promise<{ scene: Scene; stale: { seq: number; payload: Record<string, Json> } }> {
    const scene = await awaitingApproval(n, 2);
    const stale = snapshotsIn(scene.ledger.logPath).at(-1);
    if (stale === undefined) throw new Error('no snapshot was written');
    const spine = await scene.ledger.open({ snapshotEveryFrames: 0 });
    const deny = { ...autoGrantProbe(scene), decision: 'denied', by: 'human' } as PendingEvent;
    expect(kinds((await spine.submit(deny)).actions)).toContain('TaskFinished');
    await spine.close();
    return { scene: { ...scene, state: replayedState(scene.ledger.logPath) }, stale };
  }

  const grant = (scene: Scene): PendingEvent => ({
    kind: 'ApprovalResolved',
    taskId: scene.taskId as TaskId,
    approvalId: scene.request.approvalId,
    decision: 'granted',
    by: 'human',
    nonce: scene.request.nonce,
    opHash: scene.request.opHash,
  });

  it('replayed later in the same log, as it was: not trusted', async () => {
    const { scene, stale } = await deniedAfterSnapshots(11);
    // CONTROL: trusting the stale state, the person's denial is forgotten and the patch is applied.
    expect(kinds(naiveAnswer(stale.payload.state as Json, grant(scene)))).toContain('ApplyPatch');
    const seq = await append(scene, [snapshotInput(stale.payload)]);
    const { actions, reason } = await openAndProbe(scene, seq, grant(scene));
    // Open compacted the finished task: the kernel no longer knows it at all.
    expect(rejected(actions)).toBe('unknown-task');
    expect(reason).toMatch(/claims to follow seq \d+/);
  }, 60_000);

  it('re-pointed at the last actions frame (and re-MACed): not trusted', async () => {
    const { scene, stale } = await deniedAfterSnapshots(12);
    expect(kinds(naiveAnswer(stale.payload.state as Json, grant(scene)))).toContain('ApplyPatch');
    const covers = lastActions(scene.ledger.logPath);
    const moved = snapshotPayload(
      scene.ledger.key,
      covers,
      stale.payload.state as Json,
      String(stale.payload.stateHash),
    );
    const seq = await append(scene, [snapshotInput(moved)]);
    const { actions, reason } = await openAndProbe(scene, seq, grant(scene));
    // Open compacted the finished task: the kernel no longer knows it at all.
    expect(rejected(actions)).toBe('unknown-task');
    expect(reason).toMatch(/not the one recorded at seq/);
  }, 60_000);

  it('brought from another ledger of the same installation, at the same seq: not trusted', async () => {
    const { scene } = await deniedAfterSnapshots(13);
    const victim = scene.ledger;
    // Another repository's ledger, same key, where the same task id still waits for approval.
    const elsewhere = await awaitingApproval(13, 2);
    const foreign = snapshotsIn(elsewhere.ledger.logPath).at(-1);
    if (foreign === undefined) throw new Error('no snapshot');
    ledger = victim;
    const covers = lastActions(victim.logPath);
    // Same seq as this log's last actions frame, the other log's frame hash: the state is genuine there.
    const spliced = snapshotPayload(
      victim.key,
      { seq: covers.seq, hash: String((foreign.payload.covers as { hash: string }).hash) },
      foreign.payload.state as Json,
      String(foreign.payload.stateHash),
    );
    expect(kinds(naiveAnswer(foreign.payload.state as Json, grant(scene)))).toContain('ApplyPatch');
    const seq = await append(scene, [snapshotInput(spliced)]);
    const { actions, reason } = await openAndProbe(scene, seq, grant(scene));
    // Open compacted the finished task: the kernel no longer knows it at all.
    expect(rejected(actions)).toBe('unknown-task');
    expect(reason).toMatch(/claims to follow seq/);
    elsewhere.ledger.remove();
  }, 60_000);
});

describe('a truncated snapshot', () => {
  it('tasks cut from its state (hash recomputed): not trusted; the task id cannot be created again', async () => {
    const scene = await awaitingApproval(21, 5);
    const cut = structuredClone(scene.state);
    delete cut.tasks[scene.taskId];
    delete cut.approvals[scene.request.approvalId];
    const probe = {
      kind: 'TaskCreated',
      taskId: scene.taskId,
      goal: 'again, with a fresh budget',
      profile: 'full',
      approvalMode: 'auto',
      canAsk: false,
    } as PendingEvent;
    // CONTROL: trusting the cut state, the task is created afresh (its approval and history gone).
    expect(kinds(naiveAnswer(cut as unknown as Json, probe))).toEqual(['PrepareWorkspace']);
    const seq = await append(scene, [
      snapshotInput(
        snapshotPayload(
          scene.ledger.key,
          lastActions(scene.ledger.logPath),
          cut as unknown as Json,
          hashJson(cut as unknown as Json),
        ),
      ),
    ]);
    const { actions } = await openAndProbe(scene, seq, probe);
    expect(rejected(actions)).toBe('duplicate-task');
  }, 60_000);

  const layouts: Record<string, (state: State, scene: Scene) => Json> = {
    'fields cut from a task': (state, scene) => {
      const task = { ...state.tasks[scene.taskId] };
      for (const field of ['verified', 'toolCalls', 'subagents', 'usage']) delete task[field];
      return { ...state, tasks: { ...state.tasks, [scene.taskId]: task } } as unknown as Json;
    },
    'state cut to its first members': (state) => ({ v: state.v, lastAt: state.lastAt }) as Json,
    'state cut to a string prefix of its JSON': (state) => JSON.stringify(state).slice(0, 120),
    'no state at all': () => null,
  };
  for (const [name, cut] of Object.entries(layouts)) {
    it(`${name}: not trusted (does not decode); CONTROL: the uncut snapshot is trusted`, async () => {
      const scene = await awaitingApproval(30 + name.length, 5);
      const covers = lastActions(scene.ledger.logPath);
      const genuineHash = hashJson(scene.state as unknown as Json);
      const seq = await append(scene, [
        snapshotInput(snapshotPayload(scene.ledger.key, covers, cut(scene.state, scene), genuineHash)),
      ]);
      const { actions, reason } = await openAndProbe(scene, seq, applyProbe(scene));
      expect(rejected(actions)).toBe('illegal-transition');
      expect(reason).toMatch(/does not decode/);
      scene.ledger.remove();
      // CONTROL: the same frame with the whole state, at the same place, is trusted.
      const fresh = await awaitingApproval(60 + name.length, 5);
      const whole = await append(fresh, [
        snapshotInput(
          snapshotPayload(
            fresh.ledger.key,
            lastActions(fresh.ledger.logPath),
            fresh.state as unknown as Json,
            hashJson(fresh.state as unknown as Json),
          ),
        ),
      ]);
      const spine = await fresh.ledger.open({ snapshotEveryFrames: 0 });
      expect(spine.openReport.resumedAtSnapshot).toBe(whole);
      expect(spine.openReport.untrustedSnapshots).toEqual([]);
      await spine.close();
    }, 60_000);
  }
});
