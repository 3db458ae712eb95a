/**
 * What the MCP tools do, independent of the protocol: each operation takes
 * decoded input and returns a value (`Right` JSON for the caller, or a
 * `ToolFailure` with a stable code and a message that says what to do).
 *
 * Every MCP task is a kernel task in the repository's one ledger (the one
 * `crustcore run` writes), driven through the runtime's spine:
 *
 *   create_task   TaskCreated → WorkspaceReady → TaskPlanned → (kernel: StartAttempt; the client is the worker)
 *   stage_diff    staged diffs + blobs in the state plane (the attempt in progress)
 *   verify        PatchProposed → VerifySession.verify → PatchVerified (kernel: RequestApproval) | PatchRejected
 *   approve       a person's token → ApprovalResolved (kernel: ApplyPatch with a kernel-minted Approved)
 *   apply         that Approved → VerifySession.apply → PatchApplied | IntegrationFailed
 *   export        the verified patch text
 *
 * The kernel decides every move, the revisit budget and the approval; the
 * state plane keeps the staged content, verification runs and apply
 * journals, and its phase follows the kernel's. A refused attempt (a bad
 * token, an apply without approval, a re-stage of verified content) is sent
 * to the kernel as the event it stands for, so the ledger records the refusal.
 */
import { realpathSync } from 'node:fs';
import { sep } from 'node:path';
import { type Json, makeId, ok, type Result, sha256Hex, type TaskId } from '@crustcore/kernel';
import { type Redact, VerifySession } from '@crustcore/runtime';
import { argvHash, mintSandboxExecCap } from '@crustcore/sandbox';
import type { Db, StateError } from '@crustcore/state';
import * as state from '@crustcore/state';
import {
  type Argv,
  detectVerifyCommand,
  journalDir,
  openRepository,
  type Repository,
  recoverJournals,
  resolveCommit,
  splitArgv,
} from '@crustcore/verify';
import { ApprovalTokenBook } from './approval-tokens.js';
import { MCP_LIMITS } from './limits.js';
import { type LedgerCall, LedgerUnavailable, McpLedgers } from './mcp-ledger.js';
import { StagedContentBackend } from './staged-backend.js';
import { planStagedFiles } from './staging.js';
import { commandEvent, type LiveTask, type RejectedAction, TaskDriver } from './task-driver.js';
import {
  describeRejections,
  fail,
  type TaskContext,
  type TaskHost,
  type ToolCallContext,
  type ToolFailure,
  type ToolResult,
} from './task-host.js';
import { type TaskMetadata, TaskMetadataStore } from './task-metadata.js';
import { applyTask, approvalTokenFor, approveTask, exportTask } from './tool-approval.js';
import type { ToolInput } from './tool-inputs.js';
import { verifyAnswer } from './verify-answer.js';

export interface McpServiceOptions {
  readonly db: Db;
  /** $CRUSTCORE_HOME: the ledgers, worktrees, patches and the file-level apply journal live here. */
  readonly home: string;
  /** The environment (the ledger's receipt key may come from it). */
  readonly env: NodeJS.ProcessEnv;
  /** This server's state directory (task metadata). */
  readonly stateDir: string;
  /** Repositories callers may open a task on (real paths); the first is the default. */
  readonly allowedRoots: readonly string[];
  /** A test command a person configured (`crustcore mcp --verify`): approved as typed. */
  readonly verifyArgv?: Argv;
  readonly verifyTimeoutMs?: number;
  readonly clockMs?: () => number;
  readonly randomBody?: () => string;
  /** The runtime redactor for what the ledger records. */
  readonly redact?: Redact;
}

const describeStateError = (e: StateError): string => JSON.stringify(e).slice(0, 500);

const clip = (text: string, max: number): { readonly text: string; readonly truncated: boolean } =>
  text.length <= max ? { text, truncated: false } : { text: text.slice(0, max), truncated: true };

export class McpService implements TaskHost {
  readonly #o: McpServiceOptions;
  readonly #tasks: TaskMetadataStore;
  readonly tokens: ApprovalTokenBook;
  readonly ledgers: McpLedgers;
  readonly driver: TaskDriver;
  /** The tasks this server drives (their VerifySession lives here; after a restart, create a new task). */
  readonly #live = new Map<string, LiveTask>();
  /** Tasks this server created (for `crustcore mcp-token` to find the right server). */
  readonly #owned = new Set<string>();
  #recovery: Promise<void> = Promise.resolve();

  constructor(options: McpServiceOptions) {
    if (options.allowedRoots.length === 0) throw new Error('the MCP service needs at least one repository root');
    this.#o = options;
    this.#tasks = new TaskMetadataStore(options.stateDir);
    this.tokens = new ApprovalTokenBook(options.clockMs === undefined ? {} : { clockMs: options.clockMs });
    this.ledgers = new McpLedgers({
      home: options.home,
      env: options.env,
      clockMs: this.#clock(),
      redact: options.redact ?? ((text) => text),
    });
    this.driver = new TaskDriver(options.db);
  }

  #clock(): () => number {
    return this.#o.clockMs ?? Date.now;
  }

  get db(): Db {
    return this.#o.db;
  }

  get home(): string {
    return this.#o.home;
  }

  #newTaskId(): TaskId {
    const body = this.#o.randomBody?.() ?? Buffer.from(crypto.getRandomValues(new Uint8Array(10))).toString('hex');
    return makeId('TaskId', body);
  }

  #allowedDir(dir: string): string | null {
    let real: string;
    try {
      real = realpathSync(dir);
    } catch {
      return null;
    }
    return this.#o.allowedRoots.some(
      (root) => real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`),
    )
      ? real
      : null;
  }

  async context(taskId: string): Promise<Result<ToolFailure, TaskContext>> {
    const metadata = this.#tasks.load(taskId);
    if (metadata === null) return fail('not-found', `no task ${taskId} on this server; create one with create_task`);
    const task = await state.getTask(this.#o.db, taskId as TaskId);
    if (task === null) return fail('not-found', `task ${taskId} is not in the state plane`);
    const repo = await openRepository(metadata.repoRoot);
    if (repo._tag === 'Left') return fail('refused', `the task's repository is gone: ${repo.left.message}`);
    return ok({ metadata, repo: repo.right, task, live: this.#live.get(taskId) ?? null });
  }

  /** Runs a tool call with the task's ledger open; a busy or broken ledger is a tool error. */
  async withLedger(repo: Repository, work: (call: LedgerCall) => Promise<ToolResult>): Promise<ToolResult> {
    try {
      return await this.ledgers.with(repo, work);
    } catch (error) {
      if (error instanceof LedgerUnavailable) return fail(error.busy ? 'busy' : 'refused', error.message);
      throw error;
    }
  }

  /** A finished task's session is cleaned up and forgotten; its tokens are revoked. */
  async settle(live: LiveTask): Promise<void> {
    if (live.finished === null) return;
    this.#live.delete(live.taskId);
    this.tokens.revokeTask(live.taskId);
    await live.session.cleanup();
  }

  #verifyArgvOf(input: ToolInput<'create_task'>, detected: Argv | null): { argv: Argv; fromUser: boolean } | string {
    if (input.verify_command !== undefined) {
      const split = splitArgv(input.verify_command);
      if (split._tag === 'Left') return `verify_command: ${split.left.message}`;
      // Typed by a person only if it is exactly the configured command.
      const fromUser =
        this.#o.verifyArgv !== undefined && JSON.stringify(this.#o.verifyArgv) === JSON.stringify(split.right);
      return { argv: split.right, fromUser };
    }
    if (this.#o.verifyArgv !== undefined) return { argv: this.#o.verifyArgv, fromUser: true };
    if (detected === null) return 'no test command found in the repository; pass verify_command';
    return { argv: detected, fromUser: false };
  }

  // ── create_task ──────────────────────────────────────────────────────────
  async createTask(input: ToolInput<'create_task'>): Promise<ToolResult> {
    const dir = this.#allowedDir(input.dir ?? (this.#o.allowedRoots[0] as string));
    if (dir === null) {
      return fail(
        'refused',
        `dir must be inside a repository this server was started for: ${this.#o.allowedRoots.join(', ')}`,
      );
    }
    const repo = await openRepository(dir);
    if (repo._tag === 'Left') return fail('invalid-input', `${dir} is not a git repository`);
    const base = await resolveCommit(repo.right, 'HEAD');
    if (base._tag === 'Left')
      return fail('refused', `the repository has no commit to start from: ${base.left.message}`);
    const needsDetection = input.verify_command === undefined && this.#o.verifyArgv === undefined;
    const detected = needsDetection ? ((await detectVerifyCommand(repo.right.root))?.argv ?? null) : null;
    const verify = this.#verifyArgvOf(input, detected);
    if (typeof verify === 'string') return fail('invalid-input', verify);
    const taskId = this.#newTaskId();
    const created = await state.createTask(this.#o.db, {
      id: taskId,
      title: input.goal.slice(0, 4_000),
      maxRevisits: MCP_LIMITS.maxRevisits,
    });
    if (created._tag === 'Left') return fail('internal', describeStateError(created.left));
    const metadata: TaskMetadata = {
      v: 1,
      taskId,
      goal: input.goal,
      repoRoot: repo.right.root,
      baseCommit: base.right,
      verifyArgv: [...verify.argv],
      verifyFromUser: verify.fromUser,
      createdAtMs: this.#clock()(),
    };
    this.#tasks.save(metadata);
    this.#owned.add(taskId);
    return this.#startTask(metadata, repo.right);
  }

  #liveTask(metadata: TaskMetadata, repo: Repository): LiveTask {
    const taskId = metadata.taskId as TaskId;
    const verifyCap = mintSandboxExecCap('verify');
    if (verifyCap._tag === 'Left') throw new Error(`sandbox: ${verifyCap.left.message}. Run "crustcore doctor".`);
    const argv = metadata.verifyArgv as unknown as Argv;
    // The session reports its sandbox runs to whichever verify call is listening now.
    let live: LiveTask | undefined;
    const session = new VerifySession({
      repo,
      taskId,
      goal: metadata.goal,
      home: this.#o.home,
      backend: new StagedContentBackend(this.#o.db, taskId),
      verifyArgv: argv,
      verifyCap: verifyCap.right,
      recorder: this.ledgers.recorderFor(repo),
      ...(this.#o.redact === undefined ? {} : { redact: this.#o.redact }),
      clockMs: this.#clock(),
      commitMode: false,
      ref: metadata.baseCommit,
      ...(metadata.verifyFromUser ? { approvedArgvHashes: new Set([argvHash(argv)]) } : {}),
      ...(this.#o.verifyTimeoutMs === undefined ? {} : { verifyTimeoutMs: this.#o.verifyTimeoutMs }),
      progress: (event) => live?.progress?.event(event),
    });
    live = {
      taskId,
      goal: metadata.goal,
      session,
      phase: 'INIT',
      attempt: null,
      approval: null,
      apply: null,
      finished: null,
      lastVerify: null,
      attemptStagedHash: null,
      verifying: false,
      verifyCall: false,
      cancelled: null,
      progress: null,
      abort: new AbortController(),
    };
    return live;
  }

  /** TaskCreated in the repository's ledger; the kernel prepares and plans, then waits for the client. */
  async #startTask(metadata: TaskMetadata, repo: Repository): Promise<ToolResult> {
    const live = this.#liveTask(metadata, repo);
    this.#live.set(live.taskId, live);
    const started = await this.withLedger(repo, async (call) => {
      const report = await this.driver.submit(call, live, {
        kind: 'TaskCreated',
        taskId: live.taskId,
        goal: metadata.goal.slice(0, 16_000),
        profile: 'supervised',
        approvalMode: 'ask',
        canAsk: true,
        maxRevisits: MCP_LIMITS.maxRevisits,
        onBudgetExhausted: 'fail',
        limits: { wallTimeMs: MCP_LIMITS.taskWallTimeMs },
        approvalTtlMs: MCP_LIMITS.approvalTtlMs,
      });
      if (report.rejected.length > 0) return fail('internal', describeRejections(report.rejected));
      return ok({
        task_id: live.taskId,
        phase: live.phase,
        repository: repo.root,
        base_commit: metadata.baseCommit,
        verify_command: [...metadata.verifyArgv],
        next: 'stage_diff with a unified diff against the base commit, then verify',
      });
    });
    if (started._tag === 'Left') {
      this.#live.delete(live.taskId);
      await live.session.cleanup();
    }
    return started;
  }

  // ── stage_diff ───────────────────────────────────────────────────────────
  async stageDiff(input: ToolInput<'stage_diff'>): Promise<ToolResult> {
    const context = await this.context(input.task_id);
    if (context._tag === 'Left') return context;
    const { metadata, repo, task } = context.right;
    if (task.phase === 'VERIFY') return fail('busy', 'verification is running for this task; wait for it to finish');
    const plan = await planStagedFiles(repo, metadata.baseCommit, input.diff);
    if (plan._tag === 'Left') return fail('invalid-input', plan.left.message);
    if (task.phase === 'APPROVAL_GATE') return this.#restageRefused(context.right, input.diff, plan.right.length);
    if (task.phase !== 'IMPLEMENT') return fail('wrong-phase', `the task is ${task.phase}; nothing more can be staged`);
    const staged: Json[] = [];
    for (const file of plan.right) {
      const done = await state.stageDiff(this.#o.db, {
        taskId: task.id,
        filePath: file.path,
        base: file.base,
        staged: file.staged,
        diff: file.diffText,
        explanation: input.explanation ?? '',
      });
      if (done._tag === 'Left') return fail('refused', `${file.path}: ${describeStateError(done.left)}`);
      staged.push({ path: file.path, kind: file.kind, staged_sha256: done.right.stagedSha256 });
    }
    return ok({
      task_id: task.id,
      staged,
      staged_hash: await state.stagedContentHash(this.#o.db, task.id),
      next: 'verify',
    });
  }

  /**
   * New content for a task whose patch is verified (or approved) is a new
   * patch proposed while the kernel waits for a person: the kernel refuses
   * it, the ledger records that, and nothing is staged.
   */
  async #restageRefused(context: TaskContext, diff: string, files: number): Promise<ToolResult> {
    const { repo, task, live } = context;
    if (live === null) return fail('wrong-phase', 'the task waits for approval of content this server no longer holds');
    return this.withLedger(repo, async (call) => {
      const status = call.spine.kernel.taskStatus(task.id);
      if (status !== 'AwaitingApproval' && status !== 'Integrating')
        return fail('wrong-phase', `the task is ${status ?? 'unknown to the kernel'}`);
      const report = await this.driver.submit(call, live, {
        kind: 'PatchProposed',
        taskId: task.id,
        patchHash: sha256Hex(diff),
        selfClaimedDone: false,
        filesChanged: files,
        risks: [],
      });
      return fail(
        'wrong-phase',
        `the verified content waits for a person's approval; new content is a new task (${describeRejections(report.rejected)}). Nothing was staged.`,
      );
    });
  }

  // ── verify ───────────────────────────────────────────────────────────────
  /**
   * `call.progress` hears each step; `call.signal` aborting (the client's
   * notifications/cancelled) kills the verify sandbox and ends the task with
   * TaskCancelled — nothing is written to the user's tree.
   */
  async verify(input: ToolInput<'verify'>, call: ToolCallContext = {}): Promise<ToolResult> {
    await this.#recovery;
    const context = await this.context(input.task_id);
    if (context._tag === 'Left') return context;
    const { repo, task, live } = context.right;
    if (live !== null && task.phase === 'APPROVAL_GATE')
      return fail('wrong-phase', 'the staged content is already verified; ask a person for an approval token');
    if (live === null)
      return fail('not-verified', 'this server no longer drives the task (it restarted); create a new task');
    if (task.phase !== 'IMPLEMENT' && task.phase !== 'VERIFY') return fail('wrong-phase', `the task is ${task.phase}`);
    if (live.verifying || live.verifyCall)
      return fail('busy', 'verification is running for this task; wait for it to finish');
    if ((await state.listStagedDiffs(this.#o.db, task.id, { activeOnly: true })).length === 0)
      return fail('refused', 'nothing is staged for this task; call stage_diff first');
    const progress = call.progress ?? null;
    const onCancel = (): void => {
      // The client forgot this request: no more progress for it, only the kill and the kernel event.
      progress?.stop();
      live.progress = null;
      this.#cancel(live, 'the MCP client cancelled verify');
    };
    live.verifyCall = true;
    live.progress = progress;
    call.signal?.addEventListener('abort', onCancel, { once: true });
    if (call.signal?.aborted === true) onCancel();
    progress?.startKeepAlive();
    progress?.step('verify accepted: waiting for the repository ledger');
    try {
      return await this.withLedger(repo, (ledger) => this.#verifyHeld(ledger, live, repo));
    } finally {
      call.signal?.removeEventListener('abort', onCancel);
      progress?.stop();
      live.progress = null;
      live.verifyCall = false;
    }
  }

  async #verifyHeld(ledger: LedgerCall, live: LiveTask, repo: Repository): Promise<ToolResult> {
    await this.#interrupted(ledger, live);
    if (live.finished !== null) {
      await this.settle(live);
      return fail('refused', `the kernel ended the task (${live.finished.reason}); create a new task`);
    }
    live.progress?.step('ledger held: writing the staged content into the task worktree');
    const rejected = live.cancelled === null ? await this.#attempt(ledger, live) : [];
    if (live.cancelled !== null && live.finished === null)
      await this.driver.submit(ledger, live, { kind: 'TaskCancelled', taskId: live.taskId, reason: live.cancelled });
    if (live.finished !== null) await this.settle(live);
    if (live.cancelled !== null)
      return fail('cancelled', `${live.cancelled}: the sandbox was stopped and the task ended; create a new task`);
    if (rejected.length > 0 && live.lastVerify === null) return fail('internal', describeRejections(rejected));
    const outcome = live.lastVerify?.outcome.kind ?? 'unknown';
    // Written before the answer: a client stops hearing a request's progress once it has the answer.
    await live.progress?.step(`verification ${outcome === 'passed' ? 'passed' : `ended: ${outcome}`}`);
    return verifyAnswer(this, live, repo);
  }

  /** The client gave up on the running verify: its sandbox is killed; the verify call ends the task. */
  #cancel(live: LiveTask, reason: string): void {
    if (live.cancelled !== null || live.finished !== null) return;
    live.cancelled = reason;
    live.abort.abort();
  }

  /** A verification that did not finish (it threw) is a rejected patch for the kernel: a revisit, or the end. */
  async #interrupted(call: LedgerCall, live: LiveTask): Promise<void> {
    if (call.spine.kernel.taskStatus(live.taskId) !== 'Verifying' || live.verifying) return;
    await this.driver.submit(call, live, {
      kind: 'PatchRejected',
      taskId: live.taskId,
      category: 'verify-interrupted',
      summary: 'the last verification of this task did not finish',
      failingTests: [],
    });
  }

  /** The client's attempt: the staged content as the session's patch, proposed to the kernel. */
  async #attempt(call: LedgerCall, live: LiveTask): Promise<RejectedAction[]> {
    live.lastVerify = null;
    // What is staged now is what the session writes: the verification run is bound to this hash.
    live.attemptStagedHash = await state.stagedContentHash(this.#o.db, live.taskId);
    const result = await live.session.run(live.attempt ?? 1, null, live.abort.signal);
    if (result.kind === 'patch')
      live.progress?.step(`patch extracted (${result.filesChanged} file(s)); proposing it to the kernel`);
    const rejected: RejectedAction[] = [];
    for (const c of result.commands)
      rejected.push(...(await this.driver.submit(call, live, commandEvent(live.taskId, c))).rejected);
    if (result.kind === 'no-patch') {
      live.lastVerify = {
        outcome: { kind: 'no-patch', category: result.category, summary: result.summary },
        stagedHash: live.attemptStagedHash,
        runId: null,
      };
      const report = await this.driver.submit(call, live, {
        kind: 'PatchRejected',
        taskId: live.taskId,
        category: result.category,
        summary: result.summary.slice(0, 3_000),
        failingTests: [],
      });
      return [...rejected, ...report.rejected];
    }
    const report = await this.driver.submit(call, live, {
      kind: 'PatchProposed',
      taskId: live.taskId,
      patchHash: result.patchHash,
      selfClaimedDone: result.selfClaimedDone,
      filesChanged: result.filesChanged,
      risks: [...result.risks],
    });
    return [...rejected, ...report.rejected];
  }

  // ── status / diff ────────────────────────────────────────────────────────
  async status(input: ToolInput<'status'>): Promise<ToolResult> {
    const db = this.#o.db;
    if (input.task_id === undefined) {
      const tasks: Json[] = [];
      for (const metadata of this.#tasks.list(MCP_LIMITS.maxTasksListed)) {
        const task = await state.getTask(db, metadata.taskId as TaskId);
        tasks.push({ task_id: metadata.taskId, goal: metadata.goal.slice(0, 200), phase: task?.phase ?? 'unknown' });
      }
      return ok({ tasks });
    }
    const context = await this.context(input.task_id);
    if (context._tag === 'Left') return context;
    const { metadata, task, live } = context.right;
    const diffs = await state.listStagedDiffs(db, task.id, { activeOnly: true });
    const runs = await state.listVerificationRuns(db, task.id, 3);
    const passing = await state.passingRunForCurrentContent(db, task.id);
    return ok({
      task_id: task.id,
      goal: metadata.goal,
      phase: task.phase,
      revisits: task.revisits,
      max_revisits: task.maxRevisits,
      repository: metadata.repoRoot,
      base_commit: metadata.baseCommit,
      verify_command: metadata.verifyArgv,
      staged_hash: await state.stagedContentHash(db, task.id),
      staged: diffs.map((d) => ({
        path: d.filePath,
        status: d.status,
        base_sha256: d.baseSha256,
        staged_sha256: d.stagedSha256,
      })),
      verification_runs: runs.map((r) => ({
        id: r.id.toString(),
        passed: r.passed,
        exit_code: r.exitCode,
        staged_hash: r.stagedHash,
        current: r.stagedHash === passing?.stagedHash,
      })),
      verified_here: live?.session.verified != null,
      approved: live?.apply != null,
    });
  }

  async diff(input: ToolInput<'diff'>): Promise<ToolResult> {
    const context = await this.context(input.task_id);
    if (context._tag === 'Left') return context;
    const diffs = await state.listStagedDiffs(this.#o.db, context.right.task.id, { activeOnly: true });
    const clipped = clip(diffs.map((d) => d.diff).join(''), MCP_LIMITS.maxOutputChars);
    return ok({
      task_id: context.right.task.id,
      files: diffs.map((d) => d.filePath),
      staged_hash: await state.stagedContentHash(this.#o.db, context.right.task.id),
      diff: clipped.text,
      truncated: clipped.truncated,
    });
  }

  // ── approve / apply / export (tool-approval.ts) ──────────────────────────
  approve(input: ToolInput<'approve'>): Promise<ToolResult> {
    return approveTask(this, input);
  }

  async apply(input: ToolInput<'apply'>): Promise<ToolResult> {
    await this.#recovery;
    return applyTask(this, input);
  }

  exportPatch(input: ToolInput<'export'>): Promise<ToolResult> {
    return exportTask(this, input);
  }

  /**
   * After a crash mid-apply: the files were already put back (or forward) by
   * the verify package's journal recovery; a state-plane journal of one of
   * this server's tasks left APPLYING is rolled back. The kernel task it
   * belonged to waits in the ledger; create a new task to try again (content
   * already on disk is refused by the drift check). Returns the journals
   * rolled back.
   */
  recoverInterruptedApplies(): Promise<readonly string[]> {
    const recovery = this.#recover();
    // An apply in this process waits for recovery, so recovery never rolls back a live apply.
    this.#recovery = recovery.then(
      () => undefined,
      () => undefined,
    );
    return recovery;
  }

  async #recover(): Promise<readonly string[]> {
    recoverJournals({ journalRoot: journalDir(this.#o.home) });
    const rolledBack: string[] = [];
    for (const journal of await state.inFlightApplyJournals(this.#o.db, 100)) {
      if (this.#tasks.load(journal.taskId) === null) continue;
      const moved = await state.advanceApplyJournal(this.#o.db, journal.id, 'ROLLED_BACK');
      if (moved._tag === 'Right') rolledBack.push(journal.id.toString());
    }
    return rolledBack;
  }

  // ── the human side (admin socket, never an MCP tool) ─────────────────────
  /** Whether this server knows the task, and whether it created it. */
  async describeTask(taskId: string): Promise<Json> {
    const metadata = this.#tasks.load(taskId);
    if (metadata === null) return { known: false, owned: false };
    const task = await state.getTask(this.#o.db, taskId as TaskId);
    return {
      known: task !== null,
      owned: this.#owned.has(taskId),
      phase: task?.phase ?? null,
      verified: this.#live.get(taskId)?.session.verified != null,
      goal: metadata.goal.slice(0, 500),
    };
  }

  /** Mints a one-time approval token for a person, with what it approves. */
  issueApprovalToken(taskId: string): Promise<ToolResult> {
    return approvalTokenFor(this, taskId);
  }

  /** Cleans up every live task's worktrees (server exit); the kernel tasks stay in the ledger. */
  async close(): Promise<void> {
    for (const live of this.#live.values()) await live.session.cleanup().catch(() => undefined);
    this.#live.clear();
  }
}
