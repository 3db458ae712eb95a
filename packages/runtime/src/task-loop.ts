/**
 * The effect executor for one task: events in, kernel decides, actions out.
 *
 *   pending event ─► recorder.appendEvent (durable) ─► kernel.step ─► actions
 *        ▲                                                             │
 *        └──────────── outcome of performing each action ◄─────────────┘
 *
 * The ledger is written before anything acts on an event, and the kernel's
 * answer is recorded right after, so `crustcore inspect --replay` can prove the
 * run. The loop never decides anything itself: it only performs actions and
 * reports their outcomes.
 */
import {
  type Action,
  type ApprovalId,
  type BudgetName,
  createKernel,
  type Diagnosis,
  type Hash32,
  type Kernel,
  type KernelEvent,
  type RiskProfile,
  type TaskId,
  type ToolCallId,
} from '@crustcore/kernel';
import { LedgerRefusedFrame } from './ledger-recorder.js';
import type {
  ApprovalAnswer,
  ApprovalChannel,
  ApprovalContext,
  ApprovalRequest,
  AttemptResult,
  Attempts,
  CommandRecord,
  Integrator,
  Narrator,
  PendingEvent,
  Recorder,
  Verifier,
  VerifyOutcome,
  WorkerRun,
  Workspace,
} from './ports.js';
import type { RuntimeIds } from './runtime-ids.js';
import type { ModelUsage, ToolCallOutcome, ToolCallRequest, ToolGate } from './tool-gate-types.js';

/** Why a tool call the ledger could not record was refused: the model reads it and can try smaller. */
export const TOO_LARGE_TO_RECORD =
  'not recorded: the call is larger than the ledger records in one frame (1 MiB of JSON); run a smaller command, or write long content to a file first';

export interface TaskSpec {
  readonly taskId: TaskId;
  readonly goal: string;
  readonly profile: RiskProfile;
  readonly approvalMode: 'auto' | 'ask' | 'deny';
  readonly canAsk: boolean;
  readonly maxRevisits: number;
  readonly limits?: Partial<Record<BudgetName, number>>;
}

export interface TaskPorts {
  readonly recorder: Recorder;
  readonly workspace: Workspace;
  readonly attempts: Attempts;
  readonly verifier: Verifier;
  readonly approvals: ApprovalChannel;
  readonly integrator: Integrator;
  readonly narrator: Narrator;
  readonly ids: RuntimeIds;
  /**
   * The ledger's one kernel (LedgerSpine): records, steps and records the answer,
   * serialized with every other task of the ledger. Without it the loop steps
   * `kernel` (or a fresh one) through `recorder` itself: for tests with fake ports.
   */
  readonly steps?: KernelSteps;
  readonly kernel?: Kernel;
}

export interface KernelSteps {
  submit(pending: PendingEvent): Promise<{ readonly event: KernelEvent; readonly actions: readonly Action[] }>;
}

export type TaskOutcomeKind =
  | 'completed'
  | 'verify-failed'
  | 'budget-exhausted'
  | 'denied'
  | 'drift'
  | 'killed'
  | 'environment'
  | 'internal';

export interface TaskOutcome {
  readonly taskId: TaskId;
  readonly kind: TaskOutcomeKind;
  readonly reason: string;
  readonly patchHash: Hash32 | null;
  readonly journalId: string | null;
  readonly attempts: number;
  readonly lastDiagnosis: Diagnosis | null;
  /** Every risk the verified patch carried (the worker's patch risks and those found at verify). */
  readonly risks: readonly string[];
  /** How the last worker run ended, when there was one. */
  readonly worker: WorkerRun | null;
}

interface AttemptMemory {
  files: Extract<AttemptResult, { kind: 'patch' }>['files'];
  evidence: string | null;
}

export class TaskLoop {
  readonly #spec: TaskSpec;
  readonly #ports: TaskPorts;
  readonly #kernel: Kernel;
  readonly #abort = new AbortController();
  #finished: { outcome: 'completed' | 'failed' | 'killed'; reason: string; patchHash: Hash32 | null } | null = null;
  #journalId: string | null = null;
  #attempts = 0;
  #lastDiagnosis: Diagnosis | null = null;
  #budgetExhausted: BudgetName | null = null;
  #integrationFailure: { readonly reason: 'drift' | 'io' | 'approval'; readonly detail: string } | null = null;
  #approvalDenied = false;
  /** Refused grants handed to the kernel (resolutionEvents) whose Rejected answers are still to come. */
  #refusalsInFlight = 0;
  #verifyFailed = false;
  readonly #memory: AttemptMemory = { files: [], evidence: null };
  /** Patch hash → the attempt whose verify rejected it: the same patch is never verified twice. */
  readonly #rejectedPatches = new Map<Hash32, number>();
  #lastNoPatch: { readonly fingerprint: string; readonly attempt: number } | null = null;
  /** Why the task stopped early on its own (environment on the base, a repeated patch), for the outcome. */
  #stoppedEarly: { readonly kind: TaskOutcomeKind; readonly reason: string } | null = null;
  #proposedRisks: readonly string[] = [];
  #risks: readonly string[] = [];
  #worker: WorkerRun | null = null;
  /** Serializes record → step → record so nested submissions (tool calls) stay ordered. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Settles once TaskCreated was stepped (or the task failed before): stops wait for it. */
  #markCreated: () => void = () => undefined;
  readonly #created: Promise<void> = new Promise((resolve) => {
    this.#markCreated = resolve;
  });

  constructor(spec: TaskSpec, ports: TaskPorts) {
    this.#spec = spec;
    this.#ports = ports;
    this.#kernel = ports.kernel ?? createKernel();
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Asks the task to stop at the next safe boundary (Ctrl+C, `crustcore cancel`). */
  async cancel(reason: string): Promise<void> {
    // A stop that comes before the kernel knows the task (a --timeout or Ctrl+C during start-up)
    // waits for TaskCreated: sent first, it would be refused as an unknown task and lost.
    await this.#created;
    if (this.#finished !== null) return;
    // The kernel answers with StopTask (aborting the running backend or verify) and TaskFinished.
    await this.#drive(await this.submit({ kind: 'TaskCancelled', taskId: this.#spec.taskId, reason }));
  }

  /**
   * Stops the task because the verify command cannot pass on the unmodified
   * base for an environment reason (no worker can fix that). `reason` says
   * what is missing and how to fix it.
   */
  async failForEnvironment(reason: string, commands: readonly CommandRecord[] = []): Promise<void> {
    if (this.#finished !== null || this.#stoppedEarly !== null) return;
    this.#stoppedEarly = { kind: 'environment', reason };
    // The failed base run goes in the log first: it is the evidence for stopping.
    await this.#commandEvents(commands);
    await this.#drive(
      await this.submit({
        kind: 'TaskFailed',
        taskId: this.#spec.taskId,
        reason: 'environment: the verify command fails on the unmodified base',
        detail: reason.slice(0, 3_000),
      }),
    );
  }

  /** Stops the task hard, now (`crustcore kill`): the kernel answers StopTask {hard} and TaskFinished. */
  async kill(reason: string): Promise<void> {
    await this.#created;
    if (this.#finished !== null) return;
    await this.#drive(await this.submit({ kind: 'TaskKilled', taskId: this.#spec.taskId, reason }));
  }

  async run(): Promise<TaskOutcome> {
    const s = this.#spec;
    try {
      const created = await this.submit({
        kind: 'TaskCreated',
        taskId: s.taskId,
        goal: s.goal,
        profile: s.profile,
        approvalMode: s.approvalMode,
        canAsk: s.canAsk,
        maxRevisits: s.maxRevisits,
        onBudgetExhausted: 'fail',
        ...(s.limits ? { limits: s.limits } : {}),
      } as PendingEvent);
      this.#markCreated();
      await this.#drive(created);
    } catch (error) {
      this.#markCreated();
      // An unexpected failure is recorded as an event too, so the log tells the whole story.
      const detail = error instanceof Error ? error.message : String(error);
      if (this.#finished === null) {
        await this.#drive(
          await this.submit({
            kind: 'TaskFailed',
            taskId: s.taskId,
            reason: 'internal-error',
            detail: detail.slice(0, 3_000),
          }),
        );
      }
      if (this.#finished === null)
        this.#finished = { outcome: 'failed', reason: `internal error: ${detail}`, patchHash: null };
      this.#abort.abort();
      await this.#ports.workspace.cleanup().catch(() => undefined);
      return this.#outcome('internal');
    }
    await this.#ports.workspace.cleanup().catch(() => undefined);
    return this.#outcome();
  }

  #outcome(forced?: TaskOutcomeKind): TaskOutcome {
    const f = this.#finished ?? {
      outcome: 'failed' as const,
      reason: 'the task stopped without finishing',
      patchHash: null,
    };
    let kind: TaskOutcomeKind = forced ?? 'internal';
    const early = this.#stoppedEarly;
    if (forced === undefined) {
      if (early !== null && f.outcome === 'failed') kind = early.kind;
      else if (f.outcome === 'completed') kind = 'completed';
      else if (f.outcome === 'killed') kind = 'killed';
      else if (this.#budgetExhausted !== null) kind = 'budget-exhausted';
      else if (this.#integrationFailure?.reason === 'drift') kind = 'drift';
      else if (this.#approvalDenied || /denied|no one can be asked/.test(f.reason)) kind = 'denied';
      else if (this.#verifyFailed) kind = 'verify-failed';
    }
    const reason =
      early !== null && f.outcome === 'failed'
        ? early.reason
        : this.#integrationFailure !== null
          ? `${f.reason} — ${this.#integrationFailure.detail}`
          : f.reason;
    return {
      taskId: this.#spec.taskId,
      kind,
      reason,
      patchHash: f.patchHash,
      journalId: this.#journalId,
      attempts: this.#attempts,
      lastDiagnosis: this.#lastDiagnosis,
      risks: this.#risks,
      worker: this.#worker,
    };
  }

  /** Records an event, steps the kernel, records its answer. Serialized. */
  submit(pending: PendingEvent): Promise<readonly Action[]> {
    const steps = this.#ports.steps;
    if (steps !== undefined) {
      return steps.submit(pending).then(({ event, actions }) => {
        this.#ports.narrator.event(event, actions);
        return actions;
      });
    }
    const next = this.#chain.then(async () => {
      const event: KernelEvent = await this.#ports.recorder.appendEvent(pending);
      const actions = this.#kernel.step(event);
      await this.#ports.recorder.appendActions(event.seq, actions, this.#kernel.stateHash());
      this.#ports.narrator.event(event, actions);
      return actions;
    });
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /**
   * The gate a native agent uses for every tool call: the kernel decides,
   * approvals come from the approval channel, results come back receipted.
   */
  toolGate(): ToolGate {
    return {
      call: (request) => this.#toolCall(request),
      modelTurn: (usage) => this.#modelTurn(usage),
      spawnSubagent: (role) => this.#spawnSubagent(role),
      steered: (text) => this.#steered(text),
    };
  }

  /** A steering line as a kernel event: its text (redacted by the recorder) is an artifact, the event names its hash. */
  async #steered(text: string): Promise<{ accepted: boolean }> {
    const textHash = await this.#ports.recorder.storeArtifact(text);
    const actions = await this.submit({
      kind: 'UserSteered',
      taskId: this.#spec.taskId,
      textHash,
      bytes: new TextEncoder().encode(text).length,
    });
    return { accepted: !actions.some((a) => a.kind === 'Rejected') };
  }

  #finishedReason(): string | null {
    return this.#finished === null ? null : this.#finished.reason;
  }

  #stopped(): ToolCallOutcome | null {
    if (this.#finished !== null) return { kind: 'stopped', reason: this.#finished.reason };
    if (this.#abort.signal.aborted) return { kind: 'stopped', reason: 'the task is stopping' };
    return null;
  }

  /** Performs every action except the ones about `toolCallId`, which it returns. */
  async #settle(actions: readonly Action[], mine: (a: Action) => boolean): Promise<Action[]> {
    const found: Action[] = [];
    for (const action of actions) {
      if (mine(action)) found.push(action);
      else {
        const follow = await this.#perform(action);
        for (const event of follow) await this.#drive(await this.submit(event));
      }
    }
    return found;
  }

  /**
   * The kernel's answer to a tool call request, or null when the ledger refused to record the call
   * (larger than a frame holds): nothing ran, the kernel did not keep the step, the task goes on.
   */
  async #requestTool(request: ToolCallRequest, toolCallId: ToolCallId): Promise<readonly Action[] | null> {
    const taskId = this.#spec.taskId;
    try {
      return await this.submit({
        kind: 'ToolCallRequested',
        taskId,
        toolCallId,
        tool: request.tool.slice(0, 200),
        actor: request.actor,
        operation: request.operation,
        approvalId: this.#ports.ids.approvalId(),
        nonce: this.#ports.ids.nonce(),
      } as PendingEvent);
    } catch (error) {
      if (!(error instanceof LedgerRefusedFrame)) throw error;
      await this.#ports.recorder
        .appendNote('tool.refused', taskId, { tool: request.tool.slice(0, 200), reason: TOO_LARGE_TO_RECORD })
        .catch(() => undefined);
      return null;
    }
  }

  async #toolCall(request: ToolCallRequest): Promise<ToolCallOutcome> {
    const stopped = this.#stopped();
    if (stopped !== null) return stopped;
    const taskId = this.#spec.taskId;
    const toolCallId = this.#ports.ids.toolCallId();
    const aboutThisCall = (a: Action): boolean =>
      (a.kind === 'ExecuteTool' || a.kind === 'DenyTool' || a.kind === 'DeliverToolResult') &&
      a.toolCallId === toolCallId;
    const isMyApproval = (a: Action): boolean => a.kind === 'RequestApproval' && a.subject === 'tool';
    const requested = await this.#requestTool(request, toolCallId);
    if (requested === null) return { kind: 'denied', reason: TOO_LARGE_TO_RECORD };
    let mine = await this.#settle(requested, (a) => aboutThisCall(a) || isMyApproval(a));
    const approval = mine.find((a) => a.kind === 'RequestApproval');
    if (approval?.kind === 'RequestApproval') {
      const answer = await this.#ports.approvals.resolve(approval, {
        goal: this.#spec.goal,
        diffText: null,
        files: [],
        evidence: null,
        toolCall: { tool: request.tool.slice(0, 200), arguments: argumentsPreview(request.args) },
      });
      const events = resolutionEvents(approval, answer);
      const genuine = events.pop() as PendingEvent;
      for (const refused of events) await this.submit(refused);
      mine = await this.#settle(await this.submit(genuine), aboutThisCall);
    }
    const decision = mine.find((a) => a.kind === 'ExecuteTool' || a.kind === 'DenyTool');
    if (decision?.kind === 'DenyTool') return { kind: 'denied', reason: decision.reason };
    if (decision?.kind !== 'ExecuteTool')
      return this.#stopped() ?? { kind: 'denied', reason: 'the kernel did not allow this call' };
    if (decision.approved !== null && decision.approved.consume()._tag === 'Left')
      return { kind: 'denied', reason: 'approval already used' };
    const execution = await request.execute(this.#abort.signal);
    const artifactHashes: Hash32[] = [];
    for (const bytes of execution.artifacts ?? []) artifactHashes.push(await this.#ports.recorder.storeArtifact(bytes));
    const output = await this.#ports.recorder.recordReceipt({
      taskId,
      toolCallId,
      toolName: request.tool,
      args: request.args,
      result: execution.text,
      modelText: execution.text,
      artifactHashes,
    });
    const delivered = await this.#settle(
      await this.submit({
        kind: 'ToolCallCompleted',
        taskId,
        toolCallId,
        ok: execution.ok,
        outputBytes: execution.outputBytes,
        receiptHash: output.receiptHash,
      }),
      aboutThisCall,
    );
    if (!delivered.some((a) => a.kind === 'DeliverToolResult'))
      return this.#stopped() ?? { kind: 'stopped', reason: 'result not delivered' };
    return { kind: 'result', output };
  }

  async #modelTurn(usage: ModelUsage): Promise<{ stop: boolean; reason: string | null }> {
    if (this.#finished !== null) return { stop: true, reason: this.#finished.reason };
    await this.#drive(
      await this.submit({
        kind: 'ModelOutputReceived',
        taskId: this.#spec.taskId,
        inputTokens: Math.max(0, Math.round(usage.inputTokens)),
        outputTokens: Math.max(0, Math.round(usage.outputTokens)),
        costMicros: Math.max(0, Math.round(usage.costMicros)),
      }),
    );
    // Re-read after the await: performing the kernel's actions may have finished the task.
    const finished = this.#finishedReason();
    if (finished !== null) return { stop: true, reason: finished };
    if (this.#budgetExhausted !== null) return { stop: true, reason: `budget exhausted: ${this.#budgetExhausted}` };
    return { stop: false, reason: null };
  }

  async #spawnSubagent(role: string): Promise<{ allowed: boolean; reason: string | null; subagentId: string }> {
    const subagentId = `sa-${this.#ports.ids.nonce().slice(0, 12)}`;
    const found = await this.#settle(
      await this.submit({ kind: 'SubagentRequested', taskId: this.#spec.taskId, subagentId, role: role.slice(0, 200) }),
      (a) => (a.kind === 'SpawnSubagent' || a.kind === 'DenySubagent') && a.subagentId === subagentId,
    );
    const answer = found[0];
    if (answer?.kind === 'SpawnSubagent') return { allowed: true, reason: null, subagentId };
    return { allowed: false, reason: answer?.kind === 'DenySubagent' ? answer.reason : 'not allowed', subagentId };
  }

  async #drive(actions: readonly Action[]): Promise<void> {
    for (const action of actions) {
      const follow = await this.#perform(action);
      for (const event of follow) await this.#drive(await this.submit(event));
    }
  }

  async #perform(action: Action): Promise<PendingEvent[]> {
    const taskId = this.#spec.taskId;
    switch (action.kind) {
      case 'PrepareWorkspace': {
        const ws = await this.#ports.workspace.prepare();
        return [{ kind: 'WorkspaceReady', taskId, baseCommit: ws.baseCommit }];
      }
      case 'PlanTask':
        // External workers plan for themselves; the plan is the goal.
        return [{ kind: 'TaskPlanned', taskId, summary: this.#spec.goal.slice(0, 3_000) }];
      case 'StartAttempt':
        return this.#attempt(action.attempt, action.diagnosis);
      case 'StartVerify':
        return this.#verify(action.patchHash);
      case 'RequestApproval':
        return this.#approve(action);
      case 'ApplyPatch': {
        const result = await this.#ports.integrator.apply(action.approved, action.patchHash);
        if (result.kind === 'applied') {
          this.#journalId = result.journalId;
          return [{ kind: 'PatchApplied', taskId, patchHash: action.patchHash, journalId: result.journalId }];
        }
        this.#integrationFailure = { reason: result.reason, detail: result.detail };
        return [{ kind: 'IntegrationFailed', taskId, reason: result.reason, detail: result.detail.slice(0, 3_000) }];
      }
      case 'TaskFinished':
        this.#finished = { outcome: action.outcome, reason: action.reason, patchHash: action.patchHash };
        return [];
      case 'StopTask':
        this.#abort.abort();
        return [];
      case 'BudgetExhausted':
        this.#budgetExhausted = action.budget;
        return [];
      case 'Rejected':
        // After a cancel or kill, outcomes of work that was already running arrive late
        // and are refused; that is expected. Otherwise the loop only sends events the
        // kernel asked for, so a rejection is a bug.
        if (this.#finished !== null) return [];
        // A grant the approval channel refused, handed over so the refusal is recorded: expected.
        if (action.eventKind === 'ApprovalResolved' && this.#refusalsInFlight > 0) {
          this.#refusalsInFlight -= 1;
          return [];
        }
        throw new Error(`kernel rejected ${action.eventKind} (seq ${action.seq}): ${action.reason} — ${action.detail}`);
      default:
        return [];
    }
  }

  async #commandEvents(commands: readonly CommandRecord[]): Promise<void> {
    for (const c of commands) {
      if (this.#finished !== null) return;
      await this.#drive(
        await this.submit({
          kind: 'CommandCompleted',
          taskId: this.#spec.taskId,
          argv: c.argv.slice(0, 256).map((a) => a.slice(0, 4_096)),
          exitCode: c.exitCode,
          outputBytes: c.outputBytes,
          durationMs: Math.round(c.durationMs),
          purpose: c.purpose,
          timedOut: c.timedOut,
          ...(c.stdoutArtifact ? { stdoutArtifact: c.stdoutArtifact } : {}),
          ...(c.stderrArtifact ? { stderrArtifact: c.stderrArtifact } : {}),
        } as PendingEvent),
      );
    }
  }

  async #attempt(attempt: number, diagnosis: Diagnosis | null): Promise<PendingEvent[]> {
    const taskId = this.#spec.taskId;
    this.#attempts = attempt;
    const result = await this.#ports.attempts.run(attempt, diagnosis, this.#abort.signal);
    if (result.worker !== undefined) this.#worker = result.worker;
    await this.#commandEvents(result.commands);
    if (this.#finished !== null) return [];
    const repeated = this.#repeatedAttempt(attempt, result);
    if (repeated !== null) return [repeated];
    if (result.kind === 'no-patch') {
      this.#lastDiagnosis = { category: result.category, summary: result.summary, failingTests: [] };
      this.#verifyFailed = true;
      return [
        {
          kind: 'PatchRejected',
          taskId,
          category: result.category,
          summary: result.summary.slice(0, 3_000),
          failingTests: [],
        },
      ];
    }
    this.#memory.files = result.files;
    this.#proposedRisks = result.risks;
    return [
      {
        kind: 'PatchProposed',
        taskId,
        patchHash: result.patchHash,
        selfClaimedDone: result.selfClaimedDone,
        filesChanged: result.filesChanged,
        risks: [...result.risks],
      },
    ];
  }

  /**
   * A deterministic worker gives the same patch (or fails the same way) every
   * time: once that patch was rejected, another attempt only repeats it.
   */
  #repeatedAttempt(attempt: number, result: AttemptResult): PendingEvent | null {
    let reason: string | null = null;
    if (result.kind === 'patch') {
      const earlier = this.#rejectedPatches.get(result.patchHash);
      if (earlier !== undefined)
        reason = `attempt ${attempt} proposed the same patch as attempt ${earlier}, which failed verify: not retrying`;
    } else if (result.fingerprint !== undefined) {
      const earlier = this.#lastNoPatch;
      if (earlier !== null && earlier.fingerprint === result.fingerprint)
        reason = `attempt ${attempt} ended exactly like attempt ${earlier.attempt} (${(result.summary.split('\n')[0] ?? '').slice(0, 80)}): not retrying`;
      this.#lastNoPatch = { fingerprint: result.fingerprint, attempt };
    }
    if (reason === null) return null;
    this.#verifyFailed = true;
    this.#stoppedEarly = { kind: 'verify-failed', reason };
    return { kind: 'TaskFailed', taskId: this.#spec.taskId, reason: reason.slice(0, 200), detail: reason };
  }

  async #verify(patchHash: Hash32): Promise<PendingEvent[]> {
    const taskId = this.#spec.taskId;
    const outcome = await this.#ports.verifier.verify(patchHash, this.#abort.signal);
    await this.#commandEvents(outcome.commands);
    if (this.#finished !== null) return [];
    if (outcome.kind === 'failed' && outcome.environmentBlocked !== undefined) {
      // Not a rejection to revisit: every attempt would meet the same environment.
      this.#verifyFailed = true;
      this.#stoppedEarly = { kind: 'environment', reason: outcome.environmentBlocked };
      const reason = 'environment: the verify environment cannot be set up';
      return [{ kind: 'TaskFailed', taskId, reason, detail: outcome.environmentBlocked.slice(0, 3_000) }];
    }
    if (outcome.kind === 'failed') {
      this.#verifyFailed = true;
      if (!this.#rejectedPatches.has(patchHash)) this.#rejectedPatches.set(patchHash, this.#attempts);
      this.#lastDiagnosis = {
        category: outcome.category,
        summary: outcome.summary,
        failingTests: outcome.failingTests,
      };
      return [
        {
          kind: 'PatchRejected',
          taskId,
          patchHash,
          category: outcome.category,
          summary: outcome.summary.slice(0, 3_000),
          failingTests: outcome.failingTests.slice(0, 256).map((t) => t.slice(0, 200)),
        },
      ];
    }
    this.#verifyFailed = false;
    this.#risks = [...new Set([...this.#proposedRisks, ...outcome.risks])].sort();
    this.#memory.evidence = `${outcome.argv.join(' ')} → exit 0 in the ${outcome.profile} sandbox${outcome.testsRun === null ? '' : ` (${outcome.testsRun} tests)`}`;
    const approvalId: ApprovalId = this.#ports.ids.approvalId();
    return [patchVerifiedEvent(taskId, patchHash, outcome, approvalId, this.#ports.ids.nonce())];
  }

  async #approve(request: Extract<Action, { kind: 'RequestApproval' }>): Promise<PendingEvent[]> {
    const context: ApprovalContext = {
      goal: this.#spec.goal,
      diffText:
        request.subject === 'integrate' && request.operation.op === 'integrate'
          ? await this.#ports.integrator.diffText(request.operation.patchHash)
          : null,
      files: this.#memory.files,
      evidence: this.#memory.evidence,
    };
    const answer = await this.#ports.approvals.resolve(request, context);
    if (answer.decision === 'denied') this.#approvalDenied = true;
    const events = resolutionEvents(request, answer);
    this.#refusalsInFlight += events.length - 1;
    return events;
  }
}

/** A nonce no approval ever has: what a refused answer carries, since the channel never gave it the real one. */
const REFUSED_NONCE = 'refused-by-the-approval-channel';
const HASH_SHAPE = /^[0-9a-f]{64}$/;
const MAX_REFUSED_RECORDED = 32;

/**
 * The channel's answer as kernel events: first each answer it refused, as the
 * grant it pretended to be (the kernel rejects it — wrong nonce, and the
 * operation hash it presented — and the ledger records that), then the answer.
 */
export function resolutionEvents(request: ApprovalRequest, answer: ApprovalAnswer): PendingEvent[] {
  const refused = (answer.refused ?? []).slice(0, MAX_REFUSED_RECORDED).map(
    (attempt): PendingEvent => ({
      kind: 'ApprovalResolved',
      taskId: request.taskId,
      approvalId: request.approvalId,
      decision: 'granted',
      by: 'human',
      nonce: REFUSED_NONCE,
      opHash: (HASH_SHAPE.test(attempt.opHash) ? attempt.opHash : '0'.repeat(64)) as Hash32,
    }),
  );
  const genuine: PendingEvent = {
    kind: 'ApprovalResolved',
    taskId: request.taskId,
    approvalId: request.approvalId,
    decision: answer.decision,
    by: answer.by,
    nonce: request.nonce,
    opHash: request.opHash,
  };
  return [...refused, genuine];
}

/** The kernel event for a passed verification; every surface that verifies sends this one shape. */
export function patchVerifiedEvent(
  taskId: TaskId,
  patchHash: Hash32,
  outcome: Extract<VerifyOutcome, { kind: 'passed' }>,
  approvalId: ApprovalId,
  nonce: string,
): PendingEvent {
  return {
    kind: 'PatchVerified',
    taskId,
    patchHash,
    treeHash: outcome.treeHash,
    baseCommit: outcome.baseCommit,
    argv: [...outcome.argv],
    profile: outcome.profile,
    exitCode: 0,
    stdoutHash: outcome.stdoutHash,
    stderrHash: outcome.stderrHash,
    risks: [...outcome.risks],
    approvalId,
    nonce,
  };
}

/** A call's arguments as a person reads them in an approval: JSON, cut at 2,000 characters. */
function argumentsPreview(args: unknown): string {
  const text = JSON.stringify(args) ?? 'null';
  return text.length <= 2_000 ? text : `${text.slice(0, 2_000)}… (${text.length} characters)`;
}
