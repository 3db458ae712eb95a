/**
 * The MCP adapter over the runtime's ports: tool calls become kernel events,
 * and the kernel's actions are performed here — the same actions the
 * runtime's TaskLoop performs for `crustcore run`, with the same
 * VerifySession (its workspace, verify and integration), except that three
 * of them wait for the MCP side instead of a local worker:
 *
 *   StartAttempt     → the client stages (stage_diff) and calls verify
 *   RequestApproval  → a person mints a token; the client calls approve
 *   ApplyPatch       → the client calls apply (the kernel-minted Approved is held until then)
 *
 * The kernel decides every move; the state plane's phase follows the
 * kernel's StatusChanged actions (its triggers stay as defence in depth),
 * and a refusal the state plane makes is an internal error, never a decision.
 */
import type { Action, Hash32, TaskId } from '@crustcore/kernel';
import {
  type ApprovalRequest,
  type CommandRecord,
  type PendingEvent,
  patchVerifiedEvent,
  randomIds,
  type VerifyOutcome,
  type VerifySession,
} from '@crustcore/runtime';
import type { Db, TaskPhase } from '@crustcore/state';
import * as state from '@crustcore/state';
import type { LedgerCall } from './mcp-ledger.js';
import type { VerifyProgress } from './verify-progress.js';

export type ApplyAction = Extract<Action, { kind: 'ApplyPatch' }>;
export type RejectedAction = Extract<Action, { kind: 'Rejected' }>;
export type FinishedAction = Extract<Action, { kind: 'TaskFinished' }>;

/** What the last verification of a task said, for the verify tool's answer. */
export interface LastVerify {
  readonly outcome: VerifyOutcome | { readonly kind: 'no-patch'; readonly category: string; readonly summary: string };
  readonly stagedHash: Hash32;
  readonly runId: bigint | null;
}

/** One MCP task this server is driving: the runtime session and what the kernel asked for last. */
export interface LiveTask {
  readonly taskId: TaskId;
  readonly goal: string;
  readonly session: VerifySession;
  phase: TaskPhase;
  /** The attempt the kernel started and waits for (the client's next verify). */
  attempt: number | null;
  approval: ApprovalRequest | null;
  apply: ApplyAction | null;
  finished: FinishedAction | null;
  lastVerify: LastVerify | null;
  /** The staged content hash when the current attempt was read from the state plane. */
  attemptStagedHash: Hash32 | null;
  /** Set while this process runs a verification (a task left Verifying without it was cut off). */
  verifying: boolean;
  /** Set from the moment a verify call is accepted until it answers (a second one is busy). */
  verifyCall: boolean;
  /** Why the client cancelled the running verify (the task then ends: TaskCancelled), or null. */
  cancelled: string | null;
  /** Where the current verify call's progress goes (null: the client asked for none). */
  progress: VerifyProgress | null;
  readonly abort: AbortController;
}

export interface StepReport {
  readonly rejected: readonly RejectedAction[];
}

/** Performs the kernel's actions for one task, feeding outcomes back as events (as TaskLoop does). */
export class TaskDriver {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Submits an event and performs everything the kernel answers; reports the refusals. */
  async submit(call: LedgerCall, live: LiveTask, pending: PendingEvent): Promise<StepReport> {
    const rejected: RejectedAction[] = [];
    await this.#drive(call, live, await call.submit(pending), rejected);
    if (live.finished !== null) await call.spine.compact(live.taskId);
    return { rejected };
  }

  async #drive(
    call: LedgerCall,
    live: LiveTask,
    actions: readonly Action[],
    rejected: RejectedAction[],
  ): Promise<void> {
    for (const action of actions) {
      const follow = await this.#perform(live, action, rejected);
      for (const event of follow) await this.#drive(call, live, await call.submit(event), rejected);
    }
  }

  async #perform(live: LiveTask, action: Action, rejected: RejectedAction[]): Promise<PendingEvent[]> {
    const taskId = live.taskId;
    switch (action.kind) {
      case 'StatusChanged':
        await this.#mirror(live, action.phase);
        return [];
      case 'PrepareWorkspace': {
        const ws = await live.session.prepare();
        return [{ kind: 'WorkspaceReady', taskId, baseCommit: ws.baseCommit }];
      }
      case 'PlanTask':
        // The MCP client plans for itself; the plan is the goal.
        return [{ kind: 'TaskPlanned', taskId, summary: live.goal.slice(0, 3_000) }];
      case 'StartAttempt':
        live.attempt = action.attempt;
        live.approval = null;
        return [];
      case 'StartVerify':
        return this.#verify(live, action.patchHash);
      case 'RequestApproval':
        live.approval = action;
        return [];
      case 'ApplyPatch':
        live.apply = action;
        live.approval = null;
        return [];
      case 'TaskFinished':
        live.finished = action;
        live.approval = null;
        live.apply = null;
        return [];
      case 'StopTask':
        live.abort.abort();
        return [];
      case 'Rejected':
        rejected.push(action);
        return [];
      default:
        return [];
    }
  }

  /** The state plane follows the kernel's phase; a refusal there is a bug, reported loudly. */
  async #mirror(live: LiveTask, phase: TaskPhase): Promise<void> {
    if (live.phase === phase) return;
    const moved = await state.transitionTask(this.#db, live.taskId, phase, { expectedFrom: live.phase });
    if (moved._tag === 'Left')
      throw new Error(`the state plane refused ${live.phase} → ${phase}: ${JSON.stringify(moved.left).slice(0, 300)}`);
    live.phase = phase;
  }

  async #verify(live: LiveTask, patchHash: Hash32): Promise<PendingEvent[]> {
    const taskId = live.taskId;
    const stagedHash = live.attemptStagedHash ?? (await state.stagedContentHash(this.#db, taskId));
    live.verifying = true;
    live.progress?.step('the kernel started verification: a fresh worktree with exactly the patch');
    let outcome: VerifyOutcome;
    try {
      outcome = await live.session.verify(patchHash, live.abort.signal);
    } finally {
      live.verifying = false;
    }
    const events: PendingEvent[] = outcome.commands.map((c) => commandEvent(taskId, c));
    const runId = await this.#recordRun(taskId, stagedHash, outcome);
    live.lastVerify = { outcome, stagedHash, runId };
    if (live.cancelled !== null) {
      // The client cancelled: the sandbox was killed, so this outcome says nothing about the patch.
      events.push({ kind: 'TaskCancelled', taskId, reason: live.cancelled });
      return events;
    }
    if (outcome.kind === 'failed') {
      events.push({
        kind: 'PatchRejected',
        taskId,
        patchHash,
        category: outcome.category.slice(0, 200),
        summary: outcome.summary.slice(0, 3_000),
        failingTests: outcome.failingTests.slice(0, 256).map((t) => t.slice(0, 200)),
      });
      return events;
    }
    events.push(patchVerifiedEvent(taskId, patchHash, outcome, randomIds.approvalId(), randomIds.nonce()));
    return events;
  }

  /** The state plane's verification run (its APPROVAL_GATE trigger wants a passing one for this content). */
  async #recordRun(taskId: TaskId, stagedHash: Hash32, outcome: VerifyOutcome): Promise<bigint | null> {
    const run = outcome.commands.find((c) => c.purpose === 'verify');
    if (run === undefined) return null;
    const recorded = await state.recordVerificationRun(this.#db, {
      taskId,
      stagedHash,
      argv: [...run.argv],
      sandboxProfile: outcome.kind === 'passed' ? outcome.profile : 'verify',
      exitCode: run.exitCode ?? -1,
      durationMs: Math.max(0, Math.round(run.durationMs)),
      ...(outcome.kind === 'passed' ? { stdoutSha256: outcome.stdoutHash, stderrSha256: outcome.stderrHash } : {}),
    });
    if (recorded._tag === 'Left')
      throw new Error(`the verification run could not be recorded: ${JSON.stringify(recorded.left).slice(0, 300)}`);
    return recorded.right.id;
  }
}

export function commandEvent(taskId: TaskId, c: CommandRecord): PendingEvent {
  return {
    kind: 'CommandCompleted',
    taskId,
    argv: c.argv.slice(0, 256).map((a) => a.slice(0, 4_096)),
    exitCode: c.exitCode,
    outputBytes: c.outputBytes,
    durationMs: Math.round(c.durationMs),
    purpose: c.purpose,
    timedOut: c.timedOut,
    ...(c.stdoutArtifact ? { stdoutArtifact: c.stdoutArtifact } : {}),
    ...(c.stderrArtifact ? { stderrArtifact: c.stderrArtifact } : {}),
  } as PendingEvent;
}
