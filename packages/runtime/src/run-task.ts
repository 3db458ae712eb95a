/**
 * Wires one task end to end on the real packages: the user's repository,
 * the ledger and artifact store under $CRUSTCORE_HOME, sandbox capabilities,
 * a backend, the verify session and the task loop. Used by `crustcore run`
 * and `crustcore demo`.
 */
import { join } from 'node:path';
import type { BudgetName, RiskProfile, TaskId } from '@crustcore/kernel';
import {
  ArtifactStore,
  describeReceiptKeyError,
  type InspectReport,
  inspectLog,
  kernelReplay,
  openReceiptKey,
  type ReceiptKey,
} from '@crustcore/ledger';
import { argvHash, mintSandboxExecCap, type SandboxExecCap } from '@crustcore/sandbox';
import {
  type Argv,
  type CodingBackend,
  commitTree,
  type EnvironmentContext,
  journalDir,
  openRepository,
  type PreparedEnvironment,
  type PriorObservation,
  prepareEnvironment,
  type Repository,
  recoverJournals,
  resolveCommit,
  userNpmRegistry,
} from '@crustcore/verify';
import type { Redact } from './ledger-recorder.js';
import { LedgerOpenFailed, LedgerSpine, type OpenSpineOptions } from './ledger-spine.js';
import type { ApprovalChannel, Narrator } from './ports.js';
import type { RuntimeIds } from './runtime-ids.js';
import { loadRuntimeRedactor } from './runtime-redactor.js';
import { TaskLoop, type TaskOutcome } from './task-loop.js';
import type { ToolGate } from './tool-gate-types.js';
import { VerifySession } from './verify-session.js';
import { WarmWorkspace } from './warm-workspace.js';

export interface RunTaskOptions {
  readonly dir: string;
  readonly goal: string;
  /** Prior context for the worker (repository memory, the capsule): untrusted data, never authority. */
  readonly priorObservations?: readonly PriorObservation[];
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly verifyArgv: Argv;
  /** True when a person typed the verify command: that is the approval of its exact argv. */
  readonly verifyArgvFromUser: boolean;
  readonly makeBackend: (context: {
    readonly workerCap: () => SandboxExecCap;
    /** PATH for the worker inside its worktree (dependency bins, toolchain), or null without an environment. */
    readonly workerPathFor: ((worktreeRoot: string) => string) | null;
    /** Appends an informational frame to the task's ledger; flushed before the log closes. */
    readonly note: (kind: string, payload: Readonly<Record<string, unknown>>) => void;
    /** Bound to the task loop once it exists; native agents call tools only through it. */
    readonly toolGate: ToolGate;
  }) => CodingBackend | Promise<CodingBackend>;
  readonly approvals: ApprovalChannel;
  readonly approvalMode: 'auto' | 'ask' | 'deny';
  readonly canAsk: boolean;
  readonly narrator: Narrator;
  readonly ids: RuntimeIds;
  readonly taskId: TaskId;
  readonly profile?: RiskProfile;
  readonly maxRevisits?: number;
  readonly limits?: Partial<Record<BudgetName, number>>;
  readonly commitMode?: boolean;
  readonly ref?: string;
  readonly clockMs?: () => number;
  readonly redact?: Redact;
  readonly verifyTimeoutMs?: number;
  readonly signal?: AbortSignal;
  /** `--setup ARGV`: the dependency setup to run when installed dependencies do not match. */
  readonly setupArgv?: Argv | null;
  /** A person approved dependency install scripts (`--allow-install-scripts`). */
  readonly allowInstallScripts?: boolean;
  /** False: no dependency or toolchain binds (the sandboxes see only the system). Default true. */
  readonly environment?: boolean;
  /** `openRepository(dir)` when the caller already started it (each open costs a git process). */
  readonly opened?: ReturnType<typeof openRepository>;
}

export interface RunTaskResult {
  readonly outcome: TaskOutcome;
  /** Risks of the verified patch (also those only found at verify time, like tests-weakened). */
  readonly risks: readonly string[];
  /** How the last worker run ended (argv, exit, stderr tail), or null. */
  readonly worker: TaskOutcome['worker'];
  readonly repo: Repository;
  readonly projectDir: string;
  readonly logPath: string;
  readonly verifiedEvidence: Record<string, unknown> | null;
  readonly inspect: InspectReport | null;
}

/** A setup problem the user can fix; the message says how. */
/** Abort a task's signal with this to kill it (TaskKilled, hard stop) instead of cancelling it. */
export class TaskKillRequest extends Error {
  override readonly name = 'TaskKillRequest';
}

export class SetupError extends Error {
  override readonly name = 'SetupError';
}

/** Opens the repository's ledger, turning a damaged or unreplayable log into a SetupError. */
async function openSpine(options: OpenSpineOptions): Promise<LedgerSpine> {
  try {
    return await LedgerSpine.open(options);
  } catch (error) {
    // A busy ledger stays a LedgerBusyError: callers tell "try again" from "fix something".
    if (error instanceof LedgerOpenFailed) throw new SetupError(error.message);
    throw error;
  }
}

export const projectDirOf = (home: string, repo: Repository): string => join(home, 'projects', repo.repoId);

/** Why a task was stopped, in words: a TimeoutError is the time limit, not the user. */
function abortReasonText(value: unknown): string {
  const reason = value as { name?: unknown; message?: unknown } | undefined;
  if (reason?.name === 'TimeoutError') return 'stopped: the time limit (--timeout) ran out';
  return typeof reason?.message === 'string' && reason.message !== '' ? reason.message : 'interrupted by the user';
}

/** The backend is made before the task loop that owns the gate: its calls go to the loop's gate once bound. */
function lateBoundToolGate(): { readonly toolGate: ToolGate; readonly bind: (gate: ToolGate) => void } {
  let bound: ToolGate | null = null;
  const gateOf = (): ToolGate => {
    if (bound === null) throw new Error('tool gate used before the task loop started');
    return bound;
  };
  const toolGate: ToolGate = {
    call: (request) => gateOf().call(request),
    modelTurn: (usage) => gateOf().modelTurn(usage),
    spawnSubagent: (role) => gateOf().spawnSubagent(role),
    steered: (text) => gateOf().steered(text),
  };
  return {
    toolGate,
    bind: (gate) => {
      bound = gate;
    },
  };
}

export async function runTask(options: RunTaskOptions): Promise<RunTaskResult> {
  const clockMs = options.clockMs ?? Date.now;
  const opened = await (options.opened ?? openRepository(options.dir));
  if (opened._tag === 'Left') {
    throw new SetupError(
      `${options.dir} is not a git repository (${opened.left.message}). Run "git init" there, or pass --dir.`,
    );
  }
  const repo = opened.right;
  // Finish any apply a crash interrupted before touching the tree again.
  const recovered = recoverJournals({ journalRoot: journalDir(options.home) });
  if (recovered._tag === 'Left')
    throw new SetupError(`apply journal recovery failed: ${JSON.stringify(recovered.left)}. Run "crustcore recover".`);

  const key = openReceiptKey({ ...options.env, CRUSTCORE_HOME: options.home });
  if (key._tag === 'Left') throw new SetupError(describeReceiptKeyError(key.left));
  const projectDir = projectDirOf(options.home, repo);
  const logPath = join(projectDir, 'events.log');
  const warm = WarmWorkspace.forTask(options, repo, clockMs());
  const { spine, redact, environment, workerEnvironment } = await warm.releasedIfThrows(() =>
    openLedgerAndEnvironment(options, repo, { logPath, projectDir, key: key.right, clockMs }),
  );
  const recorder = spine.recorder;
  const verifyCap = mintSandboxExecCap('verify');
  if (verifyCap._tag === 'Left') {
    await Promise.all([warm.release(), spine.close()]);
    throw new SetupError(`sandbox: ${verifyCap.left.message}. Run "crustcore doctor".`);
  }
  const workerCap = (): SandboxExecCap => {
    const cap = mintSandboxExecCap(
      'worker',
      workerEnvironment === null ? {} : { environment: workerEnvironment.binds },
    );
    if (cap._tag === 'Left') throw new SetupError(`sandbox: ${cap.left.message}. Run "crustcore doctor".`);
    return cap.right;
  };
  let outcome: TaskOutcome;
  let session: VerifySession | null = null;
  let backend: CodingBackend | null = null;
  const pendingNotes: Promise<void>[] = [];
  try {
    const { toolGate, bind } = lateBoundToolGate();
    const note = (kind: string, payload: Readonly<Record<string, unknown>>): void => {
      pendingNotes.push(
        recorder.appendNote(kind, options.taskId, JSON.parse(JSON.stringify(payload))).catch(() => undefined),
      );
    };
    const workerPathFor = workerEnvironment?.pathFor ?? null;
    backend = await options.makeBackend({ workerCap, workerPathFor, toolGate, note });
    let loopRef: TaskLoop | null = null;
    session = new VerifySession({
      repo,
      redact,
      takeWorkspace: () => warm.take(),
      taskId: options.taskId,
      goal: options.goal,
      ...(options.priorObservations === undefined ? {} : { priorObservations: options.priorObservations }),
      home: options.home,
      backend,
      verifyArgv: options.verifyArgv,
      verifyCap: verifyCap.right,
      recorder,
      clockMs,
      commitMode: options.commitMode ?? false,
      ...(options.verifyArgvFromUser ? { approvedArgvHashes: new Set([argvHash(options.verifyArgv)]) } : {}),
      ...(options.ref === undefined ? {} : { ref: options.ref }),
      ...(options.verifyTimeoutMs === undefined ? {} : { verifyTimeoutMs: options.verifyTimeoutMs }),
      // The base cannot pass for an environment reason: stop now instead of retrying the worker.
      onEnvironmentBlocker: (blocker, baseline) =>
        void loopRef?.failForEnvironment(blocker.message, [baseline]).catch(() => undefined),
      ...(environment === null ? {} : { environment }),
      ...(workerEnvironment === null ? {} : { environmentFiles: workerEnvironment.files }),
    });
    const loop = new TaskLoop(
      {
        taskId: options.taskId,
        goal: options.goal,
        profile: options.profile ?? 'supervised',
        approvalMode: options.approvalMode,
        canAsk: options.canAsk,
        maxRevisits: options.maxRevisits ?? 3,
        ...(options.limits ? { limits: options.limits } : {}),
      },
      {
        recorder,
        workspace: session,
        attempts: session,
        verifier: session,
        approvals: options.approvals,
        integrator: session,
        narrator: options.narrator,
        ids: options.ids,
        steps: spine,
      },
    );
    bind(loop.toolGate());
    loopRef = loop;
    const stopReason = (): string => abortReasonText(options.signal?.reason);
    // A TaskKillRequest as the abort reason (the daemon's `kill`) is a kill, anything else a cancel.
    const onAbort = (): void =>
      void (
        options.signal?.reason instanceof TaskKillRequest
          ? loop.kill(options.signal.reason.message)
          : loop.cancel(stopReason())
      ).catch(() => undefined);
    if (options.signal?.aborted === true) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    outcome = await loop.run();
    options.signal?.removeEventListener('abort', onAbort);
    await spine.compact(options.taskId);
  } finally {
    // What the backend keeps across attempts (a worker's MCP servers) ends with the task, or the process never exits.
    await backend?.close?.().catch(() => undefined);
    await Promise.all([...pendingNotes, warm.release()]);
    await spine.close();
  }
  const verified = session?.verified ?? null;
  let inspect: InspectReport | null = null;
  try {
    inspect = inspectLog({
      logPath,
      artifactsDir: join(projectDir, 'artifacts'),
      key: key.right,
      kernel: kernelReplay(),
      replay: true,
      // Up to the last frame this run's writer acknowledged: still there as written, the head at or past it.
      until: spine.lastWritten,
      // What this run appended, not the project's whole history (that is `crustcore inspect`, and
      // every open chain-checks it): from the snapshot the open resumed from, starting where the
      // open's check left off, so the check reads no frame before that snapshot.
      ...(spine.openReport.checkedPrefix !== undefined
        ? { resume: spine.openReport.checkedPrefix }
        : spine.openReport.resumedAtSnapshot === undefined
          ? {}
          : { fromSnapshot: spine.openReport.resumedAtSnapshot }),
    });
  } catch {
    inspect = null;
  }
  return {
    outcome,
    risks: outcome.risks,
    worker: outcome.worker,
    repo,
    projectDir,
    logPath,
    verifiedEvidence:
      verified === null ? null : (JSON.parse(JSON.stringify(verified.evidence())) as Record<string, unknown>),
    inspect,
  };
}

/**
 * The ledger (opening rebuilds the kernel: CPU in this process) and the environment (git and
 * stat calls in children), side by side; the warm workspace's git calls run beside both.
 */
async function openLedgerAndEnvironment(
  options: RunTaskOptions,
  repo: Repository,
  ledger: {
    readonly logPath: string;
    readonly projectDir: string;
    readonly key: ReceiptKey;
    readonly clockMs: () => number;
  },
) {
  const environmentReady = (async () => {
    const environment = options.environment === false ? null : await environmentContextOf(options, repo);
    const workerEnvironment = environment === null ? null : await workerEnvironmentOf(options, repo, environment);
    return { environment, workerEnvironment };
  })();
  environmentReady.catch(() => undefined);
  const redact = options.redact ?? (await loadRuntimeRedactor(options.home, options.env)).redact;
  // One kernel per ledger: opening rebuilds it from the log; every task of this repository steps it.
  const spine = await openSpine({
    logPath: ledger.logPath,
    artifacts: new ArtifactStore(join(ledger.projectDir, 'artifacts')),
    key: ledger.key,
    clockMs: ledger.clockMs,
    redact,
  });
  try {
    return { spine, redact, ...(await environmentReady) };
  } catch (error) {
    await spine.close();
    throw error;
  }
}

/** What every run of this task needs to prepare its environment; progress goes to the narrator. */
async function environmentContextOf(options: RunTaskOptions, repo: Repository): Promise<EnvironmentContext> {
  let registry: Promise<string> | undefined;
  return {
    userRoot: repo.root,
    env: options.env,
    // Asking npm costs a process start: only a setup needs the answer, and then it is asked once.
    registryUrl: () => (registry ??= userNpmRegistry(repo.root, options.env)),
    ...(options.setupArgv === undefined ? {} : { setupArgv: options.setupArgv }),
    ...(options.allowInstallScripts === undefined ? {} : { allowInstallScripts: options.allowInstallScripts }),
    // A shared, CrustCore-owned npm cache for setups (CI and tests share one across runs).
    ...(options.env.CRUSTCORE_NPM_CACHE?.startsWith('/') ? { npmCacheDir: options.env.CRUSTCORE_NPM_CACHE } : {}),
    progress: (event) => options.narrator.note('environment.progress', { ...event }),
  };
}

/**
 * The worker's environment, for the base commit (the worker's tree before it
 * starts). A setup that fails leaves the worker without dependencies (said in a
 * note); verification prepares its own environment and reports its own failure.
 */
async function workerEnvironmentOf(
  options: RunTaskOptions,
  repo: Repository,
  context: EnvironmentContext,
): Promise<PreparedEnvironment | null> {
  const base = await resolveCommit(repo, options.ref ?? 'HEAD');
  if (base._tag === 'Left') return null;
  const prepared = await prepareEnvironment({ ...context, tree: commitTree(repo, base.right), home: options.home });
  if (prepared._tag === 'Left') {
    options.narrator.note('environment', { ok: false, message: prepared.left.message });
    return null;
  }
  options.narrator.note('environment', {
    ok: true,
    mode: prepared.right.mode,
    hash: prepared.right.hash,
    notes: [...prepared.right.notes],
  });
  return prepared.right;
}
