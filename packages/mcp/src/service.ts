/**
 * What the MCP tools do, independent of the protocol: each operation takes
 * decoded input and returns a value (`Right` JSON for the caller, or a
 * `ToolFailure` with a stable code and a message that says what to do). The
 * state plane is the authority for a task's phase, staged content and
 * verification runs; its triggers refuse any move out of order.
 *
 *   create_task   INIT → PLAN → IMPLEMENT
 *   stage_diff    (APPROVAL_GATE →) IMPLEMENT, staged diffs + blobs
 *   verify        IMPLEMENT → VERIFY → APPROVAL_GATE (passed) | IMPLEMENT (failed, a revisit) | ABORTED (budget spent)
 *   approve       human token → apply journal opened (PENDING) for the verified content
 *   apply         journal APPLYING → files written atomically → APPLIED, task COMMITTED
 *   export        the verified patch text
 *
 * The `VerifiedPatch` (an unforgeable object minted by the verify package) is
 * held in this process only; after a restart, verify again.
 */
import { realpathSync } from 'node:fs';
import { sep } from 'node:path';
import { err, type Json, makeId, ok, type Result, type TaskId } from '@crustcore/kernel';
import { mintSandboxExecCap } from '@crustcore/sandbox';
import type { Db, StateError } from '@crustcore/state';
import * as state from '@crustcore/state';
import {
  type Argv,
  applyVerifiedPatch,
  detectVerifyCommand,
  journalDir,
  openRepository,
  type Repository,
  recoverJournals,
  resolveCommit,
  splitArgv,
  type VerifiedPatch,
} from '@crustcore/verify';
import { ApprovalTokenBook } from './approval-tokens.js';
import { MCP_LIMITS } from './limits.js';
import { planStagedFiles } from './staging.js';
import { type TaskMetadata, TaskMetadataStore } from './task-metadata.js';
import type { ToolInput } from './tool-inputs.js';
import { patchFromStaged, verifyStaged } from './verification.js';

export type ToolFailureCode =
  | 'invalid-input'
  | 'not-found'
  | 'wrong-phase'
  | 'busy'
  | 'refused'
  | 'not-verified'
  | 'not-approved'
  | 'bad-token'
  | 'drift'
  | 'too-large'
  | 'internal';

export interface ToolFailure {
  readonly code: ToolFailureCode;
  readonly message: string;
}

export type ToolResult = Result<ToolFailure, Json>;

const fail = (code: ToolFailureCode, message: string): Result<ToolFailure, never> => err({ code, message });

export interface McpServiceOptions {
  readonly db: Db;
  /** $CRUSTCORE_HOME: worktrees, patches and the file-level apply journal live here. */
  readonly home: string;
  /** This server's state directory (task metadata). */
  readonly stateDir: string;
  /** Repositories callers may open a task on (real paths); the first is the default. */
  readonly allowedRoots: readonly string[];
  /** A test command a person configured (`crustcore mcp --verify`): approved as typed. */
  readonly verifyArgv?: Argv;
  readonly verifyTimeoutMs?: number;
  readonly clockMs?: () => number;
  readonly randomBody?: () => string;
}

type VerifyOutcome = Extract<Awaited<ReturnType<typeof verifyStaged>>, { _tag: 'Right' }>['right'];
type VerifyRun = VerifyOutcome['run'];
type VerifyDiagnosis = Extract<VerifyOutcome, { _tag: 'Failed' }>['diagnosis'];
type StagedHash = Awaited<ReturnType<typeof state.stagedContentHash>>;
type VerifyPatchInput = Parameters<typeof verifyStaged>[1]['patch'];

interface Verified {
  readonly verified: VerifiedPatch;
  readonly stagedHash: string;
  readonly runId: bigint;
  readonly testsRun: number | null;
}

const describeStateError = (e: StateError): string => {
  switch (e._tag) {
    case 'RevisitBudgetExhausted':
      return `the revisit budget is spent (${e.revisits}/${e.maxRevisits})`;
    case 'PhaseConflict':
      return `the task moved to ${e.actual} meanwhile`;
    case 'IllegalTransition':
      return `the task cannot move from ${e.from} to ${e.to}`;
    default:
      return JSON.stringify(e).slice(0, 500);
  }
};

const clip = (text: string, max: number): { readonly text: string; readonly truncated: boolean } =>
  text.length <= max ? { text, truncated: false } : { text: text.slice(0, max), truncated: true };

export class McpService {
  readonly #o: McpServiceOptions;
  readonly #tasks: TaskMetadataStore;
  readonly #tokens: ApprovalTokenBook;
  readonly #verified = new Map<string, Verified>();
  /** Apply journals opened by `approve` (the task's approval), by task. */
  readonly #approved = new Map<string, bigint>();
  /** Tasks this server created (for `crustcore mcp-token` to find the right server). */
  readonly #owned = new Set<string>();
  #recovery: Promise<void> = Promise.resolve();

  constructor(options: McpServiceOptions) {
    if (options.allowedRoots.length === 0) throw new Error('the MCP service needs at least one repository root');
    this.#o = options;
    this.#tasks = new TaskMetadataStore(options.stateDir);
    this.#tokens = new ApprovalTokenBook(options.clockMs === undefined ? {} : { clockMs: options.clockMs });
  }

  #now(): number {
    return (this.#o.clockMs ?? Date.now)();
  }

  get db(): Db {
    return this.#o.db;
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

  async #context(
    taskId: string,
  ): Promise<Result<ToolFailure, { metadata: TaskMetadata; repo: Repository; task: state.TaskRecord }>> {
    const metadata = this.#tasks.load(taskId);
    if (metadata === null) return fail('not-found', `no task ${taskId} on this server; create one with create_task`);
    const task = await state.getTask(this.#o.db, taskId as TaskId);
    if (task === null) return fail('not-found', `task ${taskId} is not in the state plane`);
    const repo = await openRepository(metadata.repoRoot);
    if (repo._tag === 'Left') return fail('refused', `the task's repository is gone: ${repo.left.message}`);
    return ok({ metadata, repo: repo.right, task });
  }

  #forget(taskId: string): void {
    this.#verified.delete(taskId);
    this.#approved.delete(taskId);
    this.#tokens.revokeTask(taskId);
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
    let verifyArgv: Argv;
    let verifyFromUser = false;
    if (input.verify_command !== undefined) {
      const split = splitArgv(input.verify_command);
      if (split._tag === 'Left') return fail('invalid-input', `verify_command: ${split.left.message}`);
      verifyArgv = split.right;
      // Typed by a person only if it is exactly the configured command.
      verifyFromUser =
        this.#o.verifyArgv !== undefined && JSON.stringify(this.#o.verifyArgv) === JSON.stringify(verifyArgv);
    } else if (this.#o.verifyArgv !== undefined) {
      verifyArgv = this.#o.verifyArgv;
      verifyFromUser = true;
    } else {
      const detected = await detectVerifyCommand(repo.right.root);
      if (detected === null)
        return fail('invalid-input', 'no test command found in the repository; pass verify_command');
      verifyArgv = detected.argv;
    }
    const taskId = this.#newTaskId();
    const db = this.#o.db;
    const created = await state.createTask(db, { id: taskId, title: input.goal.slice(0, 4_000) });
    if (created._tag === 'Left') return fail('internal', describeStateError(created.left));
    for (const phase of ['PLAN', 'IMPLEMENT'] as const) {
      const moved = await state.transitionTask(db, taskId, phase);
      if (moved._tag === 'Left') return fail('internal', describeStateError(moved.left));
    }
    this.#tasks.save({
      v: 1,
      taskId,
      goal: input.goal,
      repoRoot: repo.right.root,
      baseCommit: base.right,
      verifyArgv: [...verifyArgv],
      verifyFromUser,
      createdAtMs: this.#now(),
    });
    this.#owned.add(taskId);
    return ok({
      task_id: taskId,
      phase: 'IMPLEMENT',
      repository: repo.right.root,
      base_commit: base.right,
      verify_command: [...verifyArgv],
      next: 'stage_diff with a unified diff against the base commit, then verify',
    });
  }

  // ── stage_diff ───────────────────────────────────────────────────────────
  async stageDiff(input: ToolInput<'stage_diff'>): Promise<ToolResult> {
    const context = await this.#context(input.task_id);
    if (context._tag === 'Left') return context;
    const { metadata, repo, task } = context.right;
    const db = this.#o.db;
    const taskId = task.id;
    if (task.phase === 'VERIFY') return fail('busy', 'verification is running for this task; wait for it to finish');
    if (task.phase !== 'IMPLEMENT' && task.phase !== 'APPROVAL_GATE') {
      return fail('wrong-phase', `the task is ${task.phase}; nothing more can be staged`);
    }
    const plan = await planStagedFiles(repo, metadata.baseCommit, input.diff);
    if (plan._tag === 'Left') return fail('invalid-input', plan.left.message);
    if (task.phase === 'APPROVAL_GATE') {
      // New content: the verification and any approval of the old content no longer count.
      const journal = this.#approved.get(taskId);
      if (journal !== undefined) await state.advanceApplyJournal(db, journal, 'ROLLED_BACK');
      this.#forget(taskId);
      const back = await state.transitionTask(db, taskId, 'IMPLEMENT', { expectedFrom: 'APPROVAL_GATE' });
      if (back._tag === 'Left') return fail('busy', describeStateError(back.left));
    }
    const staged: Json[] = [];
    for (const file of plan.right) {
      const done = await state.stageDiff(db, {
        taskId,
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
      task_id: taskId,
      staged,
      staged_hash: await state.stagedContentHash(db, taskId),
      next: 'verify',
    });
  }

  // ── verify ───────────────────────────────────────────────────────────────
  async verify(input: ToolInput<'verify'>): Promise<ToolResult> {
    await this.#recovery;
    const context = await this.#context(input.task_id);
    if (context._tag === 'Left') return context;
    const entered = await this.#enterVerify(context.right);
    if (entered._tag === 'Left') return entered;
    const { taskId, stagedHash } = entered.right;
    const settleBack = (why: string): Promise<ToolResult> => this.#settleBack(taskId, why);
    let outcome: Awaited<ReturnType<typeof verifyStaged>>;
    try {
      const cap = mintSandboxExecCap('verify');
      if (cap._tag === 'Left') return await settleBack(`the sandbox is not available: ${cap.left.message}`);
      outcome = await verifyStaged(cap.right, {
        repo: context.right.repo,
        taskId,
        patch: entered.right.patch,
        argv: context.right.metadata.verifyArgv as unknown as Argv,
        argvFromUser: context.right.metadata.verifyFromUser,
        home: this.#o.home,
        nowMs: entered.right.nowMs,
        ...(this.#o.verifyTimeoutMs === undefined ? {} : { timeoutMs: this.#o.verifyTimeoutMs }),
      });
    } catch (error) {
      await settleBack('verification crashed');
      throw error;
    }
    if (outcome._tag === 'Left') return settleBack(`verification could not run: ${outcome.left.message}`);
    const run = outcome.right.run;
    const recorded = await state.recordVerificationRun(this.#o.db, {
      taskId,
      stagedHash,
      argv: [...run.argv],
      sandboxProfile: run.profile,
      exitCode: run.exitCode ?? -1,
      durationMs: Math.max(0, Math.round(run.durationMs)),
      stdoutSha256: run.stdoutSha256 as never,
      stderrSha256: run.stderrSha256 as never,
    });
    if (recorded._tag === 'Left')
      return settleBack(`the run could not be recorded: ${describeStateError(recorded.left)}`);
    if (outcome.right._tag === 'Failed') return this.#verifyFailed(taskId, stagedHash, run, outcome.right.diagnosis);
    return this.#verifyPassed(taskId, stagedHash, run, outcome.right.verified, recorded.right.id);
  }

  /** Phase checks, the patch from the staged content, and the move into VERIFY. */
  async #enterVerify(context: {
    readonly metadata: TaskMetadata;
    readonly repo: Repository;
    readonly task: state.TaskRecord;
  }): Promise<Result<ToolFailure, { taskId: TaskId; stagedHash: StagedHash; nowMs: number; patch: VerifyPatchInput }>> {
    const { metadata, repo, task } = context;
    const db = this.#o.db;
    const taskId = task.id;
    if (task.phase === 'APPROVAL_GATE' && this.#verified.has(taskId)) {
      return fail('wrong-phase', 'the staged content is already verified; ask a person for an approval token');
    }
    if (task.phase !== 'IMPLEMENT' && task.phase !== 'APPROVAL_GATE') {
      return fail(task.phase === 'VERIFY' ? 'busy' : 'wrong-phase', `the task is ${task.phase}`);
    }
    if (task.phase === 'APPROVAL_GATE') {
      // Verified before this server started: verify again to hold a VerifiedPatch here.
      const back = await state.transitionTask(db, taskId, 'IMPLEMENT', { expectedFrom: 'APPROVAL_GATE' });
      if (back._tag === 'Left') return fail('busy', describeStateError(back.left));
    }
    const stagedHash = await state.stagedContentHash(db, taskId);
    const nowMs = this.#now();
    const patch = await patchFromStaged(db, {
      repo,
      taskId,
      baseCommit: metadata.baseCommit,
      home: this.#o.home,
      nowMs,
    });
    if (patch._tag === 'Left') return fail('refused', patch.left.message);
    const entered = await state.transitionTask(db, taskId, 'VERIFY', { expectedFrom: 'IMPLEMENT' });
    if (entered._tag === 'Left') return fail('busy', describeStateError(entered.left));
    return ok({ taskId, stagedHash, nowMs, patch: patch.right });
  }

  /** Back to IMPLEMENT after a verification that did not run (a revisit), or ABORTED when none is left. */
  async #settleBack(taskId: TaskId, why: string): Promise<ToolResult> {
    const db = this.#o.db;
    const back = await state.transitionTask(db, taskId, 'IMPLEMENT', { expectedFrom: 'VERIFY' });
    if (back._tag === 'Left' && back.left._tag === 'RevisitBudgetExhausted') {
      await state.transitionTask(db, taskId, 'ABORTED', { expectedFrom: 'VERIFY' });
      return fail('refused', `${why}; ${describeStateError(back.left)}, so the task is ABORTED`);
    }
    return fail('refused', why);
  }

  async #verifyFailed(taskId: TaskId, stagedHash: StagedHash, run: VerifyRun, d: VerifyDiagnosis): Promise<ToolResult> {
    const db = this.#o.db;
    const back = await state.transitionTask(db, taskId, 'IMPLEMENT', { expectedFrom: 'VERIFY' });
    let phase = 'IMPLEMENT';
    if (back._tag === 'Left') {
      await state.transitionTask(db, taskId, 'ABORTED', { expectedFrom: 'VERIFY' });
      phase = 'ABORTED';
    }
    return ok({
      task_id: taskId,
      passed: false,
      phase,
      staged_hash: stagedHash,
      exit_code: run.exitCode,
      timed_out: run.timedOut,
      diagnosis: {
        kind: d.kind,
        summary: d.summary,
        remediation: d.remediation,
        failing_tests: [...d.failingTests],
        expected: d.expected,
        received: d.received,
      },
      output_tail: `${run.stdoutText}\n${run.stderrText}`.slice(-MCP_LIMITS.maxLogTailChars),
      next:
        phase === 'ABORTED' ? 'the revisit budget is spent; create a new task' : 'stage a corrected diff, then verify',
    });
  }

  async #verifyPassed(
    taskId: TaskId,
    stagedHash: StagedHash,
    run: VerifyRun,
    verified: VerifiedPatch,
    runId: bigint,
  ): Promise<ToolResult> {
    const passedGate = await state.transitionTask(this.#o.db, taskId, 'APPROVAL_GATE', { expectedFrom: 'VERIFY' });
    if (passedGate._tag === 'Left')
      return this.#settleBack(taskId, `the gate refused: ${describeStateError(passedGate.left)}`);
    this.#verified.set(taskId, { verified, stagedHash, runId, testsRun: run.testCounts?.total ?? null });
    return ok({
      task_id: taskId,
      passed: true,
      phase: 'APPROVAL_GATE',
      staged_hash: stagedHash,
      patch_sha256: verified.patchSha256,
      verification_run: runId.toString(),
      command: [...run.argv],
      tests_run: run.testCounts?.total ?? null,
      risks: verified.risks.filter((r) => r.severity !== 'info').map((r) => `${r.kind}: ${r.detail}`),
      next: `ask a person to review and run "crustcore mcp-token ${taskId}", then call approve with the token they give you`,
    });
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
    const context = await this.#context(input.task_id);
    if (context._tag === 'Left') return context;
    const { metadata, task } = context.right;
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
      verified_here: this.#verified.has(task.id),
      approved: this.#approved.has(task.id),
    });
  }

  async diff(input: ToolInput<'diff'>): Promise<ToolResult> {
    const context = await this.#context(input.task_id);
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

  /** The verified state of a task, checked against the database now. */
  async #currentVerified(taskId: TaskId): Promise<Result<ToolFailure, Verified>> {
    const held = this.#verified.get(taskId);
    if (held === undefined) return fail('not-verified', 'the task has no verified content on this server; call verify');
    const db = this.#o.db;
    const current = await state.stagedContentHash(db, taskId);
    const passing = await state.passingRunForCurrentContent(db, taskId);
    if (current !== held.stagedHash || passing === null || passing.id !== held.runId) {
      this.#forget(taskId);
      return fail('not-verified', 'the staged content changed since it was verified; call verify again');
    }
    return ok(held);
  }

  // ── approve / apply / export ─────────────────────────────────────────────
  async approve(input: ToolInput<'approve'>): Promise<ToolResult> {
    // Spend the token first: a guessed or replayed token is gone either way.
    const redeemed = this.#tokens.redeem(input.token, input.task_id);
    if (redeemed._tag === 'Left') {
      const why =
        redeemed.left._tag === 'TokenExpired'
          ? 'the token expired'
          : redeemed.left._tag === 'TokenForAnotherTask'
            ? 'the token was issued for another task (it is now spent)'
            : 'the token is not one a person issued here';
      return fail(
        'bad-token',
        `${why}. Approval needs a person: ask them to run "crustcore mcp-token ${input.task_id}" and give you the token.`,
      );
    }
    const grant = redeemed.right;
    const context = await this.#context(input.task_id);
    if (context._tag === 'Left') return context;
    const taskId = context.right.task.id;
    if (context.right.task.phase !== 'APPROVAL_GATE')
      return fail('wrong-phase', `the task is ${context.right.task.phase}`);
    const held = await this.#currentVerified(taskId);
    if (held._tag === 'Left') return held;
    if (grant.stagedHash !== held.right.stagedHash || grant.verificationRunId !== held.right.runId) {
      return fail('bad-token', 'the token was issued for other content than what is staged now; ask for a new one');
    }
    const journal = await state.openApplyJournal(this.#o.db, { taskId, verificationRunId: held.right.runId });
    if (journal._tag === 'Left') {
      return journal.left._tag === 'AlreadyExists'
        ? fail('refused', 'this content is already approved')
        : fail('refused', describeStateError(journal.left));
    }
    this.#approved.set(taskId, journal.right.id);
    return ok({
      task_id: taskId,
      approved: true,
      staged_hash: grant.stagedHash,
      patch_sha256: grant.patchSha256,
      journal: journal.right.id.toString(),
      next: 'apply (write it to the working tree) or export (get the patch)',
    });
  }

  async apply(input: ToolInput<'apply'>): Promise<ToolResult> {
    await this.#recovery;
    const context = await this.#context(input.task_id);
    if (context._tag === 'Left') return context;
    const { repo, task } = context.right;
    const taskId = task.id;
    const journalId = this.#approved.get(taskId);
    if (journalId === undefined || task.phase !== 'APPROVAL_GATE') {
      return fail(
        'not-approved',
        `nothing approved to apply (phase ${task.phase}); a person must issue a token for approve`,
      );
    }
    const held = await this.#currentVerified(taskId);
    if (held._tag === 'Left') return held;
    const db = this.#o.db;
    // Single use: the journal leaves PENDING before any byte is written.
    this.#approved.delete(taskId);
    const applying = await state.advanceApplyJournal(db, journalId, 'APPLYING');
    if (applying._tag === 'Left') return fail('refused', describeStateError(applying.left));
    const applied = await applyVerifiedPatch(held.right.verified, { repo, home: this.#o.home, nowMs: this.#now() });
    if (applied._tag === 'Left') {
      await state.advanceApplyJournal(db, journalId, 'ROLLED_BACK');
      const e = applied.left;
      if (e._tag === 'Drift') {
        return fail(
          'drift',
          `the working tree changed since the base commit (${e.drifted.map((d) => d.path).join(', ')}); nothing was written. Approve again after rebasing, or export.`,
        );
      }
      return fail('refused', `not applied: ${'message' in e ? e.message : e._tag}; nothing was written`);
    }
    await state.advanceApplyJournal(db, journalId, 'APPLIED');
    const committed = await state.transitionTask(db, taskId, 'COMMITTED', { expectedFrom: 'APPROVAL_GATE' });
    this.#forget(taskId);
    return ok({
      task_id: taskId,
      applied: true,
      files: [...applied.right.paths],
      journal: applied.right.journalId,
      phase: committed._tag === 'Right' ? 'COMMITTED' : 'APPROVAL_GATE',
    });
  }

  async exportPatch(input: ToolInput<'export'>): Promise<ToolResult> {
    const context = await this.#context(input.task_id);
    if (context._tag === 'Left') return context;
    const taskId = context.right.task.id;
    const held = await this.#currentVerified(taskId);
    if (held._tag === 'Left') return held;
    const bytes = held.right.verified.patchBytes();
    if (bytes.length > MCP_LIMITS.maxExportBytes) {
      return fail(
        'too-large',
        `the patch is ${bytes.length} bytes; export it with "crustcore diff --export ${taskId}" instead`,
      );
    }
    return ok({
      task_id: taskId,
      patch_sha256: held.right.verified.patchSha256,
      base_commit: held.right.verified.baseCommit,
      approved: this.#approved.has(taskId),
      patch: Buffer.from(bytes).toString('utf8'),
    });
  }

  /**
   * After a crash mid-apply: the files were already put back (or forward) by
   * the verify package's journal recovery; a state-plane journal of one of
   * this server's tasks left APPLYING is rolled back, so the task can be
   * verified and approved again (a second apply of content already on disk
   * stops at the drift check); a task left in VERIFY goes back to IMPLEMENT.
   * Returns the journals rolled back.
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
    const db = this.#o.db;
    const rolledBack: string[] = [];
    for (const journal of await state.inFlightApplyJournals(db, 100)) {
      if (this.#tasks.load(journal.taskId) === null) continue;
      const moved = await state.advanceApplyJournal(db, journal.id, 'ROLLED_BACK');
      if (moved._tag === 'Right') rolledBack.push(journal.id.toString());
    }
    // A verification cut off by the crash: back to IMPLEMENT (a revisit), or ABORTED when none is left.
    for (const metadata of this.#tasks.list(1_000)) {
      const task = await state.getTask(db, metadata.taskId as TaskId);
      if (task?.phase !== 'VERIFY') continue;
      const back = await state.transitionTask(db, task.id, 'IMPLEMENT', { expectedFrom: 'VERIFY' });
      if (back._tag === 'Left') await state.transitionTask(db, task.id, 'ABORTED', { expectedFrom: 'VERIFY' });
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
      verified: this.#verified.has(taskId),
      goal: metadata.goal.slice(0, 500),
    };
  }

  /** Mints a one-time approval token for a person, with what it approves. */
  async issueApprovalToken(taskId: string): Promise<ToolResult> {
    const context = await this.#context(taskId);
    if (context._tag === 'Left') return context;
    const { metadata, task } = context.right;
    if (task.phase !== 'APPROVAL_GATE')
      return fail('wrong-phase', `task ${taskId} is ${task.phase}, not waiting for approval`);
    const held = await this.#currentVerified(task.id);
    if (held._tag === 'Left') return held;
    const verified = held.right.verified;
    const minted = this.#tokens.mint({
      taskId: task.id,
      stagedHash: held.right.stagedHash,
      verificationRunId: held.right.runId,
      patchSha256: verified.patchSha256,
    });
    if (minted._tag === 'Left') return fail('busy', 'too many live approval tokens; wait for some to expire');
    const diff = clip(Buffer.from(verified.patchBytes()).toString('utf8'), 64 * 1024);
    return ok({
      token: minted.right.token,
      task_id: task.id,
      goal: metadata.goal,
      repository: metadata.repoRoot,
      base_commit: verified.baseCommit,
      staged_hash: held.right.stagedHash,
      patch_sha256: verified.patchSha256,
      verify_command: [...verified.argv],
      tests_run: held.right.testsRun,
      files: verified.files.map((f) => ({ path: f.path, status: f.status })),
      risks: verified.risks.filter((r) => r.severity !== 'info').map((r) => `${r.kind}: ${r.detail}`),
      diff: diff.text,
      diff_truncated: diff.truncated,
      expires_at: new Date(minted.right.grant.expiresAtMs).toISOString(),
    });
  }
}
