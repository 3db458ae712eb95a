/**
 * `--worker <argv…>`: any program as a coding backend. It runs in the
 * sandbox `worker` profile with only the worktree writable, no network and
 * no secrets. The goal and the previous diagnosis reach it as JSON on stdin
 * (never argv, which other processes can read). Its stdout may carry a JSON
 * claim; the patch is whatever git then sees changed in the worktree.
 */
import { join } from 'node:path';
import {
  type ExtraBindRequest,
  mintSandboxExecCap,
  resolveWorkerProgram,
  runSandboxed,
  type SandboxExecCap,
} from '@crustcore/sandbox';
import type { Argv } from './argv.js';
import {
  BACKEND_LIMITS,
  type BackendContext,
  type BackendResult,
  type CodingBackend,
  type CommandRecord,
  decodeWorkerClaim,
  type PatchOutcome,
  type WorkerInput,
  workerRunHooks,
} from './backend.js';
import { type GitView, prepareGitView } from './git-view.js';
import { crustcoreHome } from './home.js';
import { extractPatch } from './patch.js';

export interface ExternalCommandBackendOptions {
  /** The worker program and its fixed arguments. */
  readonly argv: Argv;
  /** Extra (sanitized) environment; secrets are refused by the sandbox's sanitizer. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * PATH inside the sandbox for a worktree (the prepared environment's: the
   * dependency bin directories, then the user's toolchain), so the worker
   * finds `mocha`, `vitest` or the venv's python the way the tests will.
   */
  readonly pathFor?: ((worktreeRoot: string) => string) | null;
  readonly name?: string;
  /**
   * Where the user typed the command: relative program and script names
   * resolve against `cwd`, bare names against `path` (default: this
   * process's). The worker's own files are then bound read-only.
   */
  readonly host?: { readonly cwd: string; readonly path: string };
  /** Give the worker a private read-only git view of the base (default true). */
  readonly git?: boolean;
}

/** Paths no worker may reach (documented to the worker; enforced by the sandbox's mounts). */
const HOST_FORBIDDEN = ['~/.ssh', '~/.config', '~/.aws', '~/.gnupg', '/etc', '/var'];

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

function claimedCommands(claim: ReturnType<typeof decodeWorkerClaim>): CommandRecord[] {
  return (claim?.commands_run ?? []).slice(0, BACKEND_LIMITS.commands).map((command) => ({
    argv: (typeof command === 'string' ? [command] : command)
      .slice(0, BACKEND_LIMITS.argvWords)
      .map((word) => clip(word, BACKEND_LIMITS.wordChars)),
    exitCode: null,
    source: 'worker-claim' as const,
  }));
}

/** The JSON the worker reads on stdin (snake_case, as in the roadmap's contract). */
export function workerStdin(input: WorkerInput, worktreePath: string): string {
  const absolute = (relative: string): string => join(worktreePath, relative);
  return JSON.stringify({
    task_id: input.taskId,
    goal: input.goal,
    repo_root: worktreePath,
    allowed_roots: input.allowedRoots.length === 0 ? [worktreePath] : input.allowedRoots.map(absolute),
    forbidden_paths: [...input.forbiddenPaths.map(absolute), ...HOST_FORBIDDEN],
    network: 'deny',
    secrets: 'none',
    max_seconds: input.maxSeconds,
    max_output_bytes: input.maxOutputBytes,
    attempt: input.attempt,
    previous_diagnosis: input.previousDiagnosis,
    must_return: ['summary', 'done', 'commands_run', 'risks'],
    // Untrusted context (repository memory): data for the worker to weigh, never part of the contract's rules.
    ...(input.priorObservations === undefined || input.priorObservations.length === 0
      ? {}
      : { prior_observations_untrusted: input.priorObservations }),
  });
}

export class ExternalCommandBackend implements CodingBackend {
  readonly name: string;
  readonly #cap: SandboxExecCap;
  readonly #argv: Argv;
  readonly #env: Readonly<Record<string, string>>;
  readonly #pathFor: ((worktreeRoot: string) => string) | null;
  readonly #host: { readonly cwd: string; readonly path: string };
  readonly #git: boolean;

  /** `cap` must be a `worker`-profile capability. */
  constructor(cap: SandboxExecCap, options: ExternalCommandBackendOptions) {
    if (cap.profileName !== 'worker')
      throw new TypeError(`ExternalCommandBackend needs a worker-profile capability, not ${cap.profileName}`);
    this.#cap = cap;
    this.#argv = options.argv;
    this.#env = options.env ?? {};
    this.#pathFor = options.pathFor ?? null;
    this.name = options.name ?? 'external-command';
    this.#host = options.host ?? { cwd: process.cwd(), path: process.env.PATH ?? '' };
    this.#git = options.git ?? true;
  }

  /**
   * The capability for this run: the given one plus read-only binds for the
   * worker's own files and the git view. Only the bubblewrap backend binds;
   * the process jail already sees the host.
   */
  #capFor(extra: readonly ExtraBindRequest[]): SandboxExecCap | string {
    if (extra.length === 0 || this.#cap.backend !== 'bubblewrap') return this.#cap;
    // Everything the given capability carried stays: the dependency binds too (losing them
    // here once left every worker without node_modules or its venv).
    const minted = mintSandboxExecCap('worker', {
      backend: this.#cap.backend,
      limits: this.#cap.limits,
      extraBinds: [...this.#cap.extraBinds, ...extra],
      environment: this.#cap.environment,
    });
    return minted._tag === 'Left' ? minted.left.message : minted.right;
  }

  async run(input: WorkerInput, context: BackendContext): Promise<BackendResult> {
    const { worktree } = context;
    const program = resolveWorkerProgram(this.#argv, { ...this.#host, avoid: [worktree.path] });
    const gitView: GitView | null = this.#git ? await prepareGitView(worktree, context.home ?? crustcoreHome()) : null;
    try {
      return await this.#runIn(input, context, program.argv, [...program.binds, ...(gitView?.binds ?? [])], gitView);
    } finally {
      gitView?.dispose();
    }
  }

  async #runIn(
    input: WorkerInput,
    context: BackendContext,
    argv: Argv,
    binds: readonly ExtraBindRequest[],
    gitView: GitView | null,
  ): Promise<BackendResult> {
    const { worktree } = context;
    const cap = this.#capFor(binds);
    const started =
      typeof cap === 'string'
        ? ({ _tag: 'Left', left: { message: `cannot show the worker its files: ${cap}` } } as const)
        : await runSandboxed(cap, {
            argv,
            worktreeRoot: worktree.path,
            cwd: worktree.path,
            env: this.#pathFor === null ? this.#env : { ...this.#env, PATH: this.#pathFor(worktree.path) },
            stdin: workerStdin(input, worktree.path),
            // Clamped to the profile's bounds: a larger request would only be refused.
            timeoutMs: Math.min(Math.max(1, Math.floor(input.maxSeconds * 1000)), this.#cap.profile.maxTimeoutMs),
            maxOutputBytes: Math.min(Math.max(0, Math.floor(input.maxOutputBytes)), this.#cap.profile.maxOutputBytes),
            ...workerRunHooks(context, context.signal),
          });
    // The worktree's `.git` points back to its own git dir before CrustCore reads the patch.
    gitView?.dispose();
    const empty = {
      stdoutText: '',
      stderrText: '',
      stdoutBytes: 0,
      stderrBytes: 0,
      stdoutSha256: '',
      stderrSha256: '',
    };
    if (started._tag === 'Left') {
      return {
        backend: this.name,
        summary: '',
        patch: { _tag: 'NoChanges' },
        selfClaimedDone: false,
        commandsRun: [],
        risks: [],
        workerRisks: [],
        exit: { exitCode: null, signal: null, timedOut: false, cancelled: false, durationMs: 0 },
        failure: `sandbox refused the worker: ${started.left.message}`,
        transcript: empty,
      };
    }
    const result = started.right;
    const claim = decodeWorkerClaim(result.stdout.text);
    // The patch is read from the worktree whatever the worker said or how it ended.
    const extracted = await extractPatch(worktree, {
      allowedRoots: input.allowedRoots,
      forbiddenPaths: input.forbiddenPaths,
      ...(context.home === undefined ? {} : { home: context.home }),
    });
    let patch: PatchOutcome;
    if (extracted._tag === 'Left') {
      patch =
        extracted.left._tag === 'PatchRejected'
          ? { _tag: 'Rejected', rejection: extracted.left }
          : { _tag: 'ExtractFailed', message: withGitStderr(extracted.left) };
    } else {
      patch = extracted.right === null ? { _tag: 'NoChanges' } : { _tag: 'Patch', patch: extracted.right };
    }
    return {
      backend: this.name,
      summary: clip(claim?.summary ?? '', BACKEND_LIMITS.summaryChars),
      patch,
      selfClaimedDone: claim?.done === true,
      commandsRun: [{ argv: [...argv], exitCode: result.exitCode, source: 'host' }, ...claimedCommands(claim)],
      risks: patch._tag === 'Patch' ? patch.patch.risks : [],
      workerRisks: (claim?.risks ?? [])
        .slice(0, BACKEND_LIMITS.workerRisks)
        .map((risk) => clip(risk, BACKEND_LIMITS.riskChars)),
      exit: {
        exitCode: result.exitCode,
        signal: result.signal,
        timedOut: result.timedOut,
        cancelled: result.cancelled,
        durationMs: result.durationMs,
      },
      failure: result.startError === null ? null : `worker did not start: ${result.startError.message}`,
      transcript: {
        stdoutText: result.stdout.text,
        stderrText: result.stderr.text,
        stdoutBytes: result.stdout.totalBytes,
        stderrBytes: result.stderr.totalBytes,
        stdoutSha256: result.stdout.sha256,
        stderrSha256: result.stderr.sha256,
      },
    };
  }
}

/** A failure's message with the end of what git printed, when git printed something (what to fix is there). */
function withGitStderr(failure: { readonly message: string; readonly stderr?: string }): string {
  const said = failure.stderr?.trim() ?? '';
  return said === '' ? failure.message : `${failure.message}: ${said.slice(-600)}`;
}
