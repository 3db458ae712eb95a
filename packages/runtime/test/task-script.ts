/**
 * A scripted task for spine tests: each call gives the task's next event, built from the
 * kernel's last answer (approval ids, nonces), so scripts of several tasks can be interleaved.
 */
import { type Action, type Hash32, makeId, type Operation, type TaskId } from '@crustcore/kernel';
import type { LedgerSpine, PendingEvent } from '../src/index.js';

export const hash = (n: number, salt: string): Hash32 =>
  (n.toString(16).padStart(8, '0') + salt).padEnd(64, '0').slice(0, 64) as Hash32;

/** One task's script: each call gives the next event, from the kernel's last answer. */
export class TaskScript {
  readonly taskId: TaskId;
  #step = 0;
  #approval: Extract<Action, { kind: 'RequestApproval' }> | null = null;
  readonly #n: number;
  #fate: 'apply' | 'deny' | 'reject';
  /** With tools: after planning, one tool call the policy asks about (left pending) and one it allows. */
  readonly #tools: PendingEvent[];
  done = false;

  constructor(n: number, fate: 'apply' | 'deny' | 'reject', tools = false) {
    this.#n = n;
    this.taskId = makeId('TaskId', `t${n}`);
    this.#fate = fate;
    this.#tools = tools ? toolCalls(this.taskId, n) : [];
  }

  answer(actions: readonly Action[]): void {
    for (const a of actions) if (a.kind === 'RequestApproval') this.#approval = a;
    if (actions.some((a) => a.kind === 'TaskFinished')) this.#step = 99;
  }

  next(): PendingEvent | null {
    if (this.#step === 3 && this.#tools.length > 0) return this.#tools.shift() ?? null;
    const taskId = this.taskId;
    const patchHash = hash(this.#n, 'aa');
    switch (this.#step++) {
      case 0:
        return {
          kind: 'TaskCreated',
          taskId,
          goal: `goal ${this.#n}`,
          profile: 'supervised',
          approvalMode: 'ask',
          canAsk: true,
        } as PendingEvent;
      case 1:
        return { kind: 'WorkspaceReady', taskId, baseCommit: 'base' };
      case 2:
        return { kind: 'TaskPlanned', taskId, summary: 'plan' };
      case 3:
        return { kind: 'ModelOutputReceived', taskId, inputTokens: 10 * this.#n, outputTokens: 5, costMicros: 1 };
      case 4:
        return { kind: 'PatchProposed', taskId, patchHash, selfClaimedDone: true, filesChanged: 1, risks: [] };
      case 5:
        if (this.#fate === 'reject') {
          // Rejected once: the kernel starts a new attempt, which is then verified and applied.
          this.#step = 3;
          this.#fate = 'apply';
          return {
            kind: 'PatchRejected',
            taskId,
            patchHash,
            category: 'test-failure',
            summary: 'red',
            failingTests: [],
          };
        }
        return {
          kind: 'PatchVerified',
          taskId,
          patchHash,
          treeHash: hash(this.#n, 'bb'),
          baseCommit: 'base',
          argv: ['npm', 'test'],
          profile: 'verify',
          exitCode: 0,
          stdoutHash: hash(1, 'cc'),
          stderrHash: hash(2, 'cc'),
          risks: [],
          approvalId: makeId('ApprovalId', `a${this.#n}`),
          nonce: `nonce-${this.#n}`,
        };
      case 6: {
        const request = this.#approval;
        if (request === null) throw new Error('the kernel asked for no approval');
        return {
          kind: 'ApprovalResolved',
          taskId,
          approvalId: request.approvalId,
          decision: this.#fate === 'deny' ? 'denied' : 'granted',
          by: 'human',
          nonce: request.nonce,
          opHash: request.opHash,
        };
      }
      case 7:
        return { kind: 'PatchApplied', taskId, patchHash, journalId: `j${this.#n}` };
      default:
        this.done = true;
        return null;
    }
  }
}

/** Submits `batch` next events at once (each task at most once), then feeds the answers back. */
export async function submitBatch(spine: LedgerSpine, scripts: readonly TaskScript[]): Promise<void> {
  const pending = scripts.map((s) => ({ s, event: s.next() })).filter((p) => p.event !== null);
  const steps = await Promise.all(pending.map((p) => spine.submit(p.event as PendingEvent)));
  steps.forEach((step, i) => {
    pending[i]?.s.answer(step.actions);
  });
}

function toolCalls(taskId: TaskId, n: number): PendingEvent[] {
  const call = (k: number, operation: Operation) =>
    ({
      kind: 'ToolCallRequested',
      taskId,
      toolCallId: makeId('ToolCallId', `c${n}x${k}`),
      tool: 'shell',
      actor: 'agent',
      operation,
      approvalId: makeId('ApprovalId', `tool${n}x${k}`),
      nonce: `tool-nonce-${n}-${k}`,
    }) as PendingEvent;
  return [
    call(1, { op: 'exec', argv: ['make', `t${n}`], cwd: '.', profile: 'test', recognizedRunner: false }),
    call(2, { op: 'fs.read', path: `src/f${n}.ts` }),
  ];
}
