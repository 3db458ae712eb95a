/**
 * Binds the task loop's ports to `@crustcore/verify`: one task worktree for
 * the backend, a fresh worktree per verification, the apply journal (or a
 * commit on a new branch) for integration. Holds what one task has produced
 * so far: the unverified patch, the VerifiedPatch (minted only by verify),
 * the last rich diagnosis, and the baseline test counts.
 */
import { createHash } from 'node:crypto';
import type { Approved, Hash32, Diagnosis as KernelDiagnosis } from '@crustcore/kernel';
import type { RunObserver, SandboxExecCap } from '@crustcore/sandbox';
import {
  type Argv,
  applyVerifiedPatch,
  type BackendResult,
  type BaselineRun,
  baselineBlocker,
  type CodingBackend,
  commitVerifiedPatch,
  copyExtraFiles,
  createTaskWorktree,
  type Diagnosis,
  describeViewConcerns,
  diagnoseFailure,
  type EnvironmentBlocker,
  type EnvironmentContext,
  type PriorObservation,
  type Repository,
  removeObjectStore,
  removeTaskWorktree,
  runBaselineVerify,
  type TaskWorktree,
  type UnverifiedPatch,
  type VerifiedPatch,
  type VerifyRun,
  verifyPatch,
  viewPatch,
  type WorkerInput,
} from '@crustcore/verify';
import type { Redact } from './ledger-recorder.js';
import type {
  AttemptResult,
  Attempts,
  CommandRecord,
  IntegrationResult,
  Integrator,
  Recorder,
  Verifier,
  VerifyOutcome,
  WorkerRun,
  Workspace,
} from './ports.js';
import { taskWorkspace, type WorkspaceMade } from './warm-workspace.js';

export interface VerifySessionOptions {
  readonly repo: Repository;
  readonly taskId: string;
  readonly goal: string;
  /** Prior context for the worker (repository memory), fenced as untrusted by the prompt builders. */
  readonly priorObservations?: readonly PriorObservation[];
  readonly home: string;
  readonly backend: CodingBackend;
  readonly verifyArgv: Argv;
  readonly verifyCap: SandboxExecCap;
  readonly recorder: Recorder;
  /** The runtime redactor, for worker text that is shown or returned rather than recorded. */
  readonly redact?: Redact;
  readonly clockMs: () => number;
  /** `--commit`: integrate as a commit on crustcore/<task> instead of writing the working tree. */
  readonly commitMode: boolean;
  readonly ref?: string;
  /** The worker's slot made ready beforehand (run-task.ts WarmWorkspace); prepare makes one otherwise. */
  readonly takeWorkspace?: () => WorkspaceMade | null;
  readonly maxSeconds?: number;
  readonly verifyTimeoutMs?: number;
  /** Hashes of verify argvs a person approved (typing `--verify` is that approval). */
  readonly approvedArgvHashes?: ReadonlySet<string>;
  /** Run the verify command on the base first, so fewer tests after the patch is caught. */
  readonly baseline?: boolean;
  /** Called when the base itself fails for an environment reason no patch can fix (stop the task). */
  readonly onEnvironmentBlocker?: (blocker: EnvironmentBlocker, baseline: CommandRecord) => void;
  /** Dependencies and toolchain for verify and baseline runs (see docs/environments.md). */
  readonly environment?: EnvironmentContext;
  /** Ignored files the project's config names, copied into the task worktree. */
  readonly environmentFiles?: readonly string[];
  /** Told what the baseline and verify runs do while they run (a waiting client shows it). */
  readonly progress?: (event: VerifyProgressEvent) => void;
}

/** A live event of a verify-sandbox run: it started, its output grew (running total), it finished. */
export type VerifyProgressEvent =
  | { readonly kind: 'command-started'; readonly purpose: 'baseline' | 'verify'; readonly argv: readonly string[] }
  | { readonly kind: 'command-output'; readonly purpose: 'baseline' | 'verify'; readonly outputBytes: number }
  | {
      readonly kind: 'command-finished';
      readonly purpose: 'baseline' | 'verify';
      readonly exitCode: number | null;
      readonly outputBytes: number;
      readonly timedOut: boolean;
    };

const STDERR_TAIL_CHARS = 2_000;

/** The last lines of a worker's stderr, at most STDERR_TAIL_CHARS. */
export function stderrTail(text: string): string {
  const trimmed = text.trimEnd();
  if (trimmed.length <= STDERR_TAIL_CHARS) return trimmed;
  const tail = trimmed.slice(-STDERR_TAIL_CHARS);
  const newline = tail.indexOf('\n');
  return newline === -1 || newline > 400 ? tail : tail.slice(newline + 1);
}

/** What the worker was and how it ended; argv is the host command when the backend ran one. */
function workerRunOf(result: BackendResult, redact: Redact): WorkerRun {
  const host = result.commandsRun.find((command) => command.source === 'host');
  return {
    argv: host === undefined ? [result.backend] : [...host.argv],
    exitCode: result.exit.exitCode,
    signal: result.exit.signal,
    // The tail leaves the recorder's reach (it is printed and returned in --json): redact it here,
    // the whole text before cutting, so a cut never separates a credential from the name that marks it.
    stderrTail: stderrTail(redact(result.transcript.stderrText)),
  };
}

/** "the worker changed nothing" plus how it ended and what it printed last, so the cause is visible. */
function noChangeSummary(result: BackendResult, worker: WorkerRun): string {
  const claimed = result.selfClaimedDone ? 'claimed it was done but ' : '';
  const ended =
    worker.exitCode !== null && worker.exitCode !== 0
      ? `exited ${worker.exitCode} and `
      : worker.signal !== null
        ? `was killed (${worker.signal}) and `
        : '';
  const tail =
    worker.stderrTail === '' ? '' : `; its stderr ends with:\n${worker.stderrTail.split('\n').slice(-12).join('\n')}`;
  return `the worker ${claimed}${ended}changed nothing${tail}`;
}

const fingerprintOf = (category: string, result: BackendResult): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        category,
        result.exit.exitCode,
        result.exit.signal,
        result.transcript.stderrSha256,
        result.failure,
      ]),
    )
    .digest('hex');

const bytesOf = (text: string): number => Buffer.byteLength(text);

const describeIntegrateError = (e: object & { readonly _tag: string }): string =>
  'message' in e && typeof e.message === 'string'
    ? e.message
    : 'reason' in e && typeof e.reason === 'string'
      ? `${e._tag}: ${e.reason}`
      : e._tag;

/** Git tree ids are SHA-1; the kernel's tree hash is SHA-256 of the tree id and patch hash, binding both. */
function treeHashOf(verified: VerifiedPatch): Hash32 {
  return createHash('sha256')
    .update(`git-tree:${verified.treeId}\npatch:${verified.patchSha256}`)
    .digest('hex') as Hash32;
}
/** The sandbox observer of one run, reporting to `progress` (no observer without a listener). */
function observerFor(
  progress: ((event: VerifyProgressEvent) => void) | undefined,
  purpose: 'baseline' | 'verify',
  argv: readonly string[],
): { readonly observer?: RunObserver } {
  if (progress === undefined) return {};
  const totals = { stdout: 0, stderr: 0 };
  return {
    observer: {
      started: () => progress({ kind: 'command-started', purpose, argv }),
      output: (stream, totalBytes) => {
        totals[stream] = totalBytes;
        progress({ kind: 'command-output', purpose, outputBytes: totals.stdout + totals.stderr });
      },
    },
  };
}

export class VerifySession implements Workspace, Attempts, Verifier, Integrator {
  readonly #o: VerifySessionOptions;
  #worktree: TaskWorktree | null = null;
  #patch: UnverifiedPatch | null = null;
  #verified: VerifiedPatch | null = null;
  #diagnosis: Diagnosis | null = null;
  #baseline: BaselineRun | null = null;
  /** The baseline runs on the base while the backend works; verify awaits it. */
  #baselineRun: Promise<CommandRecord | null> | null = null;
  /** The base the baseline runs on, once the workspace is prepared; null after it started. */
  #baselineBase: string | null = null;
  /** Stops the baseline if the task ends before verification needs it. */
  readonly #baselineAbort = new AbortController();
  /** A verify slot reset to the base while the backend works, so verification starts with the patch. */
  #warmVerify: Promise<TaskWorktree | null> | null = null;
  #cleaned = false;

  constructor(options: VerifySessionOptions) {
    this.#o = options;
  }

  get worktree(): TaskWorktree | null {
    return this.#worktree;
  }
  get lastDiagnosis(): Diagnosis | null {
    return this.#diagnosis;
  }
  get verified(): VerifiedPatch | null {
    return this.#verified;
  }

  async prepare(): Promise<{ baseCommit: string; worktreePath: string }> {
    // The same call either way: made ready beforehand (run-task.ts), or made now.
    const created = await (this.#o.takeWorkspace?.() ?? taskWorkspace(this.#o, this.#o.repo, this.#o.clockMs()));
    if (created._tag === 'Left') throw new Error(`could not create the task worktree: ${created.left.message}`);
    this.#worktree = created.right;
    if (this.#o.environmentFiles !== undefined && this.#o.environmentFiles.length > 0)
      copyExtraFiles(this.#o.repo.root, created.right.path, this.#o.environmentFiles);
    // Started beside the worker (#besideWorker), so the worker's own start waits for none of its git calls;
    // at once when the work happens before `run` (an MCP client's edits).
    if (this.#o.baseline !== false) this.#baselineBase = created.right.baseCommit;
    if (this.#o.backend.worksBeforeRun === true) this.#startBaseline();
    return { baseCommit: created.right.baseCommit, worktreePath: created.right.path };
  }

  async cleanup(): Promise<void> {
    if (this.#cleaned) return;
    this.#cleaned = true;
    this.#baselineAbort.abort();
    await this.#baselineRun;
    const unused = await this.#takeWarmVerify();
    if (unused !== null) await removeTaskWorktree(unused);
    if (this.#worktree !== null) await removeTaskWorktree(this.#worktree);
    // Every object the task's worktrees wrote lives in its store; integration is over, so it goes.
    removeObjectStore(this.#o.home, this.#o.repo, this.#o.taskId);
  }

  async #storeRun(run: VerifyRun, purpose: CommandRecord['purpose']): Promise<CommandRecord> {
    const stdoutArtifact = run.stdoutText ? await this.#o.recorder.storeArtifact(run.stdoutText) : undefined;
    const stderrArtifact = run.stderrText ? await this.#o.recorder.storeArtifact(run.stderrText) : undefined;
    return {
      argv: run.argv,
      exitCode: run.exitCode,
      outputBytes: bytesOf(run.stdoutText) + bytesOf(run.stderrText),
      durationMs: run.durationMs,
      timedOut: run.timedOut,
      purpose,
      ...(stdoutArtifact ? { stdoutArtifact } : {}),
      ...(stderrArtifact ? { stderrArtifact } : {}),
    };
  }

  /** What the backend is asked for this attempt (the previous attempt's diagnosis included). */
  #workerInput(attempt: number): WorkerInput {
    return {
      taskId: this.#o.taskId,
      goal: this.#o.goal,
      attempt,
      previousDiagnosis: this.#diagnosis,
      allowedRoots: [],
      forbiddenPaths: [],
      maxSeconds: this.#o.maxSeconds ?? 1_800,
      maxOutputBytes: 16 * 1024 * 1024,
      ...(this.#o.priorObservations === undefined ? {} : { priorObservations: this.#o.priorObservations }),
    };
  }

  /** Starts the baseline on the base, once per task (when the worker started, or when verification needs it). */
  #startBaseline(): void {
    const base = this.#baselineBase;
    if (base === null || this.#cleaned) return;
    this.#baselineBase = null;
    this.#baselineRun = this.#runBaseline(base, this.#baselineAbort.signal).catch(() => null);
  }

  /**
   * What verification needs, readied while the worker works: the baseline and a verify slot. Each
   * spawn blocks this thread for a few milliseconds, so they start after the worker's process did.
   */
  #besideWorker(baseCommit: string): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#startBaseline();
      this.#warmVerifySlot(baseCommit);
    };
  }

  /** Starts resetting a verify slot for this attempt's patch, unless one is already on its way. */
  #warmVerifySlot(baseCommit: string): void {
    if (this.#warmVerify !== null || this.#cleaned) return;
    this.#warmVerify = createTaskWorktree({
      repo: this.#o.repo,
      taskId: this.#o.taskId,
      ref: baseCommit,
      purpose: 'verify',
      home: this.#o.home,
      pool: true,
      nowMs: this.#o.clockMs(),
    }).then(
      (made) => (made._tag === 'Right' ? made.right : null),
      () => null,
    );
  }

  async #takeWarmVerify(): Promise<TaskWorktree | null> {
    const warm = this.#warmVerify;
    this.#warmVerify = null;
    return warm === null ? null : await warm;
  }

  async run(attempt: number, _diagnosis: KernelDiagnosis | null, signal: AbortSignal): Promise<AttemptResult> {
    const worktree = this.#worktree;
    if (worktree === null) throw new Error('attempt before the workspace was prepared');
    const besideWorker = this.#besideWorker(worktree.baseCommit);
    const commands: CommandRecord[] = [];
    const result = await this.#o.backend
      .run(this.#workerInput(attempt), { worktree, signal, home: this.#o.home, onStarted: besideWorker })
      .finally(besideWorker);
    const transcript = `${result.transcript.stdoutText}${result.transcript.stderrText ? `\n--- stderr ---\n${result.transcript.stderrText}` : ''}`;
    const transcriptArtifact = transcript.trim() ? await this.#o.recorder.storeArtifact(transcript) : undefined;
    const stderrArtifact = result.transcript.stderrText.trim()
      ? await this.#o.recorder.storeArtifact(result.transcript.stderrText)
      : undefined;
    const worker = workerRunOf(result, this.#o.redact ?? ((text) => text));
    if (result.failure === null || result.exit.exitCode !== null) {
      commands.push({
        // The program the user named (not just the backend's name), so the log shows what ran.
        argv: worker.argv,
        exitCode: result.exit.exitCode,
        outputBytes: result.transcript.stdoutBytes + result.transcript.stderrBytes,
        durationMs: result.exit.durationMs,
        timedOut: result.exit.timedOut,
        purpose: 'worker',
        ...(transcriptArtifact ? { stdoutArtifact: transcriptArtifact } : {}),
        ...(stderrArtifact ? { stderrArtifact } : {}),
      });
    }
    await this.#o.recorder.appendNote('backend.result', this.#o.taskId as never, {
      backend: result.backend,
      attempt,
      summary: result.summary.slice(0, 2_000),
      selfClaimedDone: result.selfClaimedDone,
      workerRisks: [...result.workerRisks],
      failure: result.failure,
      argv: worker.argv,
      exitCode: worker.exitCode,
      ...(worker.stderrTail === '' ? {} : { stderrTail: worker.stderrTail }),
      ...(transcriptArtifact ? { transcriptArtifact } : {}),
      ...(stderrArtifact ? { stderrArtifact } : {}),
    });
    const outcome = result.patch;
    if (result.failure !== null && outcome._tag === 'NoChanges') {
      return {
        kind: 'no-patch',
        category: 'worker-failed',
        summary:
          worker.stderrTail === '' ? result.failure : `${result.failure}; its stderr ends with:\n${worker.stderrTail}`,
        selfClaimedDone: result.selfClaimedDone,
        commands,
        worker,
        fingerprint: fingerprintOf('worker-failed', result),
      };
    }
    switch (outcome._tag) {
      case 'NoChanges':
        return {
          kind: 'no-patch',
          category: 'no-changes',
          summary: noChangeSummary(result, worker),
          selfClaimedDone: result.selfClaimedDone,
          commands,
          worker,
          fingerprint: fingerprintOf('no-changes', result),
        };
      case 'Rejected':
        return {
          kind: 'no-patch',
          category: 'patch-rejected',
          summary: outcome.rejection.problems
            .map((p) => `${p.reason}: ${p.path}`)
            .join('; ')
            .slice(0, 2_000),
          selfClaimedDone: result.selfClaimedDone,
          commands,
          worker,
        };
      case 'ExtractFailed':
        return {
          kind: 'no-patch',
          category: 'extract-failed',
          summary: outcome.message,
          selfClaimedDone: result.selfClaimedDone,
          commands,
          worker,
        };
      case 'Patch': {
        const patch = outcome.patch;
        this.#patch = patch;
        await this.#o.recorder.storeArtifact(patch.bytes);
        return {
          kind: 'patch',
          patchHash: patch.sha256 as Hash32,
          filesChanged: patch.files.length,
          selfClaimedDone: result.selfClaimedDone,
          risks: [...new Set(result.risks.filter((r) => r.severity !== 'info').map((r) => r.kind))],
          summary: result.summary,
          files: patch.files.map((f) => ({ path: f.path, status: f.status, fileClass: f.fileClass })),
          commands,
          worker,
        };
      }
    }
  }

  async #runBaseline(baseCommit: string, signal: AbortSignal): Promise<CommandRecord | null> {
    const base = await runBaselineVerify(this.#o.verifyCap, {
      repo: this.#o.repo,
      taskId: this.#o.taskId,
      argv: this.#o.verifyArgv,
      baseCommit,
      home: this.#o.home,
      signal,
      nowMs: this.#o.clockMs(),
      ...(this.#o.environment ? { environment: this.#o.environment } : {}),
      pool: true,
      ...(this.#o.approvedArgvHashes ? { approvedArgvHashes: this.#o.approvedArgvHashes } : {}),
      ...(this.#o.verifyTimeoutMs ? { timeoutMs: this.#o.verifyTimeoutMs } : {}),
      ...observerFor(this.#o.progress, 'baseline', this.#o.verifyArgv),
    });
    if (base._tag === 'Left') return null;
    this.#baseline = base.right;
    const stored = await this.#storeRun(base.right.run, 'baseline');
    this.#finished('baseline', stored);
    this.#checkBaseline(base.right, stored);
    return stored;
  }

  /** A base that cannot pass for an environment reason stops the task (see baselineBlocker). */
  #checkBaseline(base: BaselineRun, stored: CommandRecord): void {
    const run = base.run;
    if (run.exitCode === 0 || this.#baselineAbort.signal.aborted || this.#o.onEnvironmentBlocker === undefined) return;
    const diagnosis = diagnoseFailure({
      exitCode: run.exitCode,
      signal: run.signal,
      timedOut: run.timedOut,
      stdout: run.stdoutText,
      stderr: run.stderrText,
    });
    const blocker = baselineBlocker(diagnosis, this.#o.verifyArgv);
    if (blocker !== null) this.#o.onEnvironmentBlocker(blocker, stored);
  }

  /** Tells the progress listener a run finished; returns the run. */
  #finished(purpose: 'baseline' | 'verify', run: CommandRecord): CommandRecord {
    this.#o.progress?.({
      kind: 'command-finished',
      purpose,
      exitCode: run.exitCode,
      outputBytes: run.outputBytes,
      timedOut: run.timedOut,
    });
    return run;
  }

  /**
   * A stopped verification stops the baseline it waits for: otherwise the stop would wait for
   * the baseline to run to its end (or its timeout).
   */
  #stopBaselineWith(signal: AbortSignal): void {
    if (signal.aborted) this.#baselineAbort.abort();
    else signal.addEventListener('abort', () => this.#baselineAbort.abort(), { once: true });
  }

  #verifyRequest(patch: UnverifiedPatch, signal: AbortSignal): Parameters<typeof verifyPatch>[1] {
    return {
      repo: this.#o.repo,
      taskId: this.#o.taskId,
      patch,
      argv: this.#o.verifyArgv,
      nowMs: this.#o.clockMs(),
      baseline: this.#baseline,
      home: this.#o.home,
      signal,
      ...(this.#o.environment ? { environment: this.#o.environment } : {}),
      pool: true,
      ...(this.#o.approvedArgvHashes ? { approvedArgvHashes: this.#o.approvedArgvHashes } : {}),
      ...(this.#o.verifyTimeoutMs ? { timeoutMs: this.#o.verifyTimeoutMs } : {}),
      ...observerFor(this.#o.progress, 'verify', this.#o.verifyArgv),
    };
  }

  /**
   * The baseline (the same command on the base) and this verification run side by side, the
   * verification in the slot warmed while the backend worked; test counts are compared after.
   */
  async #verifyBesideBaseline(patch: UnverifiedPatch, signal: AbortSignal) {
    this.#startBaseline();
    this.#stopBaselineWith(signal);
    const baselinePending = this.#baselineRun;
    this.#baselineRun = null;
    const prepared = await this.#takeWarmVerify();
    return Promise.all([
      baselinePending ?? Promise.resolve(null),
      verifyPatch(this.#o.verifyCap, { ...this.#verifyRequest(patch, signal), prepared }),
    ]);
  }

  async verify(patchHash: Hash32, signal: AbortSignal): Promise<VerifyOutcome> {
    const patch = this.#patch;
    if (patch === null || patch.sha256 !== patchHash)
      throw new Error('verify asked for a patch this task did not produce');
    const [baselineCommand, outcome] = await this.#verifyBesideBaseline(patch, signal);
    const commands: CommandRecord[] = baselineCommand === null ? [] : [baselineCommand];
    if (outcome._tag === 'Left') {
      const e = outcome.left;
      const summary = describeIntegrateError(e);
      return {
        kind: 'failed',
        category: `verify-${e._tag}`,
        summary,
        failingTests: [],
        firstError: null,
        commands,
        ...(e._tag === 'EnvironmentFailed' && !changesEnvironmentInputs(patch)
          ? {
              environmentBlocked: `${summary}. The patch changes no dependency file, so another attempt would meet the same environment: nothing was retried`,
            }
          : {}),
      };
    }
    const run = outcome.right.run;
    commands.push(this.#finished('verify', await this.#storeRun(run, 'verify')));
    if (outcome.right._tag === 'Failed') {
      const d = outcome.right.diagnosis;
      this.#diagnosis = d;
      await this.#o.recorder.appendNote('verify.diagnosis', this.#o.taskId as never, JSON.parse(JSON.stringify(d)));
      const where = d.firstErrorLocation ? ` (${d.firstErrorLocation.file}:${d.firstErrorLocation.line ?? '?'})` : '';
      const names = d.failingTests.length ? d.failingTests.slice(0, 3).join(', ') : null;
      const expected =
        d.expected !== null && d.received !== null ? `expected ${d.expected}, received ${d.received}` : null;
      // One readable line for people and for the next attempt's prompt; the full diagnosis is in the ledger.
      const summaryLine =
        names && expected ? `${names}: ${expected}${where}` : `${d.summary}${expected ? ` — ${expected}` : ''}${where}`;
      return {
        kind: 'failed',
        category: d.kind,
        summary: summaryLine.slice(0, 2_000),
        failingTests: d.failingTests,
        firstError: d.firstErrorLocation ? `${d.firstErrorLocation.file}:${d.firstErrorLocation.line ?? '?'}` : null,
        commands,
      };
    }
    const verified = outcome.right.verified;
    this.#verified = verified;
    this.#diagnosis = null;
    const evidence = verified.evidence();
    await this.#o.recorder.appendNote('verify.evidence', this.#o.taskId as never, JSON.parse(JSON.stringify(evidence)));
    const risks = new Set(verified.risks.filter((r) => r.severity !== 'info').map((r) => r.kind as string));
    const before = this.#baseline?.run.testCounts ?? null;
    const after = run.testCounts;
    // Fewer tests than on the base (or no count at all) needs a person, as verify itself decides when it had the baseline.
    if (before !== null && (after === null || after.total < before.total)) risks.add('tests-weakened');
    return {
      kind: 'passed',
      treeHash: treeHashOf(verified),
      baseCommit: verified.baseCommit,
      argv: verified.argv,
      profile: verified.profile,
      stdoutHash: run.stdoutSha256 as Hash32,
      stderrHash: run.stderrSha256 as Hash32,
      risks: [...risks],
      testsRun: run.testCounts?.total ?? null,
      commands,
    };
  }

  async diffText(patchHash: Hash32): Promise<string | null> {
    const patch = this.#patch;
    if (patch === null || patch.sha256 !== patchHash) return null;
    // What a person reads must be the bytes that will be written: no lossy decoding, every hiding
    // character escaped, and a warning line first for each file that hides something.
    const view = viewPatch(patch.bytes);
    const warnings = describeViewConcerns(view).map((line) => `warning: ${line}`);
    return [...warnings, ...view.lines].join('\n');
  }

  async apply(approved: Approved, patchHash: Hash32): Promise<IntegrationResult> {
    const verified = this.#verified;
    if (verified === null || verified.patchSha256 !== patchHash) {
      return { kind: 'failed', reason: 'approval', detail: 'no verified patch matches the approval' };
    }
    if (approved.value.op !== 'integrate' || approved.value.patchHash !== patchHash) {
      return { kind: 'failed', reason: 'approval', detail: 'the approval is for another operation' };
    }
    // Single use: the token is spent right before the write.
    const consumed = approved.consume();
    if (consumed._tag === 'Left') return { kind: 'failed', reason: 'approval', detail: 'approval already used' };
    if (this.#o.commitMode) {
      const committed = await commitVerifiedPatch(verified, {
        repo: this.#o.repo,
        nowMs: this.#o.clockMs(),
        home: this.#o.home,
      });
      if (committed._tag === 'Left')
        return { kind: 'failed', reason: 'io', detail: describeIntegrateError(committed.left) };
      return {
        kind: 'applied',
        journalId: `commit ${committed.right.commit.slice(0, 12)} on ${committed.right.branch}`,
        detail: committed.right.branch,
      };
    }
    const applied = await applyVerifiedPatch(verified, {
      repo: this.#o.repo,
      home: this.#o.home,
      nowMs: this.#o.clockMs(),
    });
    if (applied._tag === 'Left') {
      const e = applied.left;
      if (e._tag === 'Drift') {
        const files = e.drifted.map((d) => d.path).join(', ');
        return {
          kind: 'failed',
          reason: 'drift',
          detail: `your tree changed since the base: ${files}; nothing was written`,
        };
      }
      return { kind: 'failed', reason: 'io', detail: describeIntegrateError(e) };
    }
    return {
      kind: 'applied',
      journalId: `journal ${applied.right.journalId}`,
      detail: `${applied.right.paths.length} file(s)`,
    };
  }
}

/** Classes of the files an environment is set up from (manifests, lockfiles, package-manager config). */
const ENVIRONMENT_INPUT_CLASSES: ReadonlySet<string> = new Set(['lockfile', 'config', 'package-manager-config']);
/**
 * The same files by name, wherever they are and whatever else they are classed as (`.npmrc` is a
 * secret-looking file, a workspace's package.json under `test/` a test): the setup reads them.
 */
const ENVIRONMENT_INPUT_NAMES =
  /^(?:package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|pnpm-workspace\.yaml|bun\.lockb?|\.npmrc|\.yarnrc(?:\.yml)?|\.pnpmfile\.cjs|\.nvmrc|\.node-version|pyproject\.toml|poetry\.lock|uv\.lock|Pipfile(?:\.lock)?|requirements[^/]*\.txt|setup\.py|setup\.cfg)$/;

const isEnvironmentInput = (path: string | null, fileClass: string): boolean =>
  ENVIRONMENT_INPUT_CLASSES.has(fileClass) ||
  (path !== null && ENVIRONMENT_INPUT_NAMES.test(path.slice(path.lastIndexOf('/') + 1)));

/** Whether the patch touches what the environment is set up from: then its failure may be the patch's. */
const changesEnvironmentInputs = (patch: UnverifiedPatch): boolean =>
  patch.files.some(
    (file) => isEnvironmentInput(file.path, file.fileClass) || isEnvironmentInput(file.oldPath ?? null, ''),
  );
