/**
 * Verification: a FRESH worktree at the base, exactly the patch applied
 * (`git apply --binary --index`), the tree hash taken before anything runs,
 * then the verify argv in the sandbox `verify` profile. Exit 0 mints a
 * `VerifiedPatch`; anything else yields a `Diagnosis` for the next attempt.
 * The worker's worktree is never reused, so nothing it left behind (files,
 * processes, a rewritten `.git`) can influence the verdict.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import {
  decideSandboxCommand,
  type RunObserver,
  runSandboxed,
  type SandboxExecCap,
  type SandboxedResult,
} from '@crustcore/sandbox';
import type { Argv } from './argv.js';
import { type Diagnosis, diagnoseFailure } from './diagnosis.js';
import { dependencyRisk } from './environment/dependency-risk.js';
import { type EnvironmentContext, environmentForWorktree } from './environment/run-environment.js';
import { commitTree, directoryTree } from './environment/tree-reader.js';
import { type GitFailure, gitText, runGitAt } from './git.js';
import { crustcoreHome, scratchDir } from './home.js';
import { integrityRisks, UNREAD_TREE } from './integrity.js';
import type { UnverifiedPatch } from './patch.js';
import { savePatchRecord } from './patch-store.js';
import { mergeRisks, RISK_SEVERITY, type Risk } from './risk.js';
import { parseTestCounts, reportedFailures, type TestCounts } from './test-counts.js';
import { gitTreeReader } from './tree-reader.js';
import { VerifiedPatch, verifiedPatchMintKey } from './verified-patch.js';
import {
  createTaskWorktree,
  type Repository,
  removeTaskWorktree,
  type TaskWorktree,
  worktreeLocation,
} from './worktree.js';

/** What a verify run produced, success or not (bounded: output is summarized by hashes and a diagnosis). */
export interface VerifyRun {
  readonly argv: Argv;
  readonly profile: string;
  readonly backend: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  readonly stdoutSha256: string;
  readonly stderrSha256: string;
  /** Bounded tails of the logs (the sandbox's head+tail capture), for people. */
  readonly stdoutText: string;
  readonly stderrText: string;
  readonly testCounts: TestCounts | null;
}

export type VerifyOutcome =
  | { readonly _tag: 'Verified'; readonly verified: VerifiedPatch; readonly run: VerifyRun }
  | { readonly _tag: 'Failed'; readonly diagnosis: Diagnosis; readonly run: VerifyRun };

export type VerifyError =
  | { readonly _tag: 'WrongProfile'; readonly profile: string; readonly message: string }
  | { readonly _tag: 'CommandNeedsApproval'; readonly argvHash: string; readonly message: string }
  | { readonly _tag: 'CommandDenied'; readonly message: string }
  | { readonly _tag: 'PatchHashMismatch'; readonly message: string }
  | { readonly _tag: 'PatchDoesNotApply'; readonly message: string; readonly stderr: string }
  | { readonly _tag: 'TreeMismatch'; readonly expected: string; readonly actual: string; readonly message: string }
  | { readonly _tag: 'SandboxRefused'; readonly message: string; readonly fix: string | null }
  | { readonly _tag: 'WorktreeFailed'; readonly message: string }
  | { readonly _tag: 'EnvironmentFailed'; readonly message: string; readonly output: string }
  | GitFailure;

export interface VerifyRequest {
  readonly repo: Repository;
  readonly taskId: string;
  readonly patch: UnverifiedPatch;
  readonly argv: Argv;
  /** Caller's clock: stamped into the evidence (the verify package never picks the time). */
  readonly nowMs: number;
  /** From `runBaselineVerify` on the base; enables the test-count comparison. */
  readonly baseline?: BaselineRun | null;
  /** Argv hashes the user approved for commands the verify profile does not recognize. */
  readonly approvedArgvHashes?: ReadonlySet<string>;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
  readonly signal?: AbortSignal;
  /** Live events of the sandboxed run (it started, output totals); see RunObserver. */
  readonly observer?: RunObserver;
  readonly home?: string;
  /** Save the patch and evidence under $CRUSTCORE_HOME/patches/<taskId> (default true). */
  readonly save?: boolean;
  /** Dependencies and toolchain for the run (prepared for the patched tree); none without it. */
  readonly environment?: EnvironmentContext;
  /** Take the worktree from the warm pool (reset to the base) instead of a fresh checkout. */
  readonly pool?: boolean;
  /**
   * A verify worktree the caller made ready beforehand (while the worker ran). Used only when it
   * is a verify worktree of this task and repository at the patch's base; verification then owns
   * it and removes (or releases) it like one of its own.
   */
  readonly prepared?: TaskWorktree | null;
}

export interface BaselineRun {
  readonly baseCommit: string;
  readonly run: VerifyRun;
}

function checkCommand(cap: SandboxExecCap, argv: Argv, approved: ReadonlySet<string> | undefined): VerifyError | null {
  if (cap.profileName !== 'verify') {
    return {
      _tag: 'WrongProfile',
      profile: cap.profileName,
      message: `verify runs only under the verify profile, not ${cap.profileName}`,
    };
  }
  const decision = decideSandboxCommand('verify', argv, approved ?? new Set());
  if (decision._tag === 'Denied') return { _tag: 'CommandDenied', message: decision.reason };
  if (decision._tag === 'NeedsApproval') {
    return {
      _tag: 'CommandNeedsApproval',
      argvHash: decision.argvHash,
      message: `${decision.reason}; approve this exact argv to run it`,
    };
  }
  return null;
}

function toRun(argv: Argv, result: SandboxedResult): VerifyRun {
  return {
    argv,
    profile: result.profile,
    backend: result.backend,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    stdoutSha256: result.stdout.sha256,
    stderrSha256: result.stderr.sha256,
    stdoutText: result.stdout.text,
    stderrText: result.stderr.text,
    testCounts: parseTestCounts(result.stdout.text, result.stderr.text),
  };
}

async function runInWorktree(
  baseCap: SandboxExecCap,
  worktree: TaskWorktree,
  request: Pick<
    VerifyRequest,
    'argv' | 'env' | 'timeoutMs' | 'maxOutputBytes' | 'signal' | 'observer' | 'environment' | 'home'
  >,
): Promise<Result<VerifyError, { run: VerifyRun; result: SandboxedResult; environmentHash: string | null }>> {
  let cap = baseCap;
  let env = request.env;
  let environmentHash: string | null = null;
  if (request.environment !== undefined) {
    const home = request.home ?? crustcoreHome();
    const prepared = await environmentForWorktree(cap, request.environment, worktree.path, home, request.signal);
    if (prepared._tag === 'Left')
      return err({ _tag: 'EnvironmentFailed', message: prepared.left.message, output: prepared.left.output });
    cap = prepared.right.cap;
    environmentHash = prepared.right.prepared.hash;
    // The caller's PATH wins; otherwise the environment's (dependency bins, then the user's tools).
    env = { PATH: prepared.right.path, ...(request.env ?? {}) };
  }
  const outcome = await runSandboxed(cap, {
    argv: request.argv,
    worktreeRoot: worktree.path,
    cwd: worktree.path,
    ...(env === undefined ? {} : { env }),
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    ...(request.maxOutputBytes === undefined ? {} : { maxOutputBytes: request.maxOutputBytes }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.observer === undefined ? {} : { observer: request.observer }),
  });
  if (outcome._tag === 'Left')
    return err({ _tag: 'SandboxRefused', message: outcome.left.message, fix: outcome.left.fix });
  return ok({ run: toRun(request.argv, outcome.right), result: outcome.right, environmentHash });
}

async function applyPatchFile(
  worktree: TaskWorktree,
  bytes: Uint8Array,
  home: string,
): Promise<Result<VerifyError, string>> {
  mkdirSync(scratchDir(home), { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(join(scratchDir(home), 'verify-'));
  try {
    const file = join(dir, 'patch.diff');
    writeFileSync(file, bytes, { mode: 0o600 });
    const location = worktreeLocation(worktree);
    const applied = await runGitAt(location, ['apply', '--binary', '--index', '--whitespace=nowarn', '--', file]);
    if (applied._tag === 'Left') {
      return err({ _tag: 'PatchDoesNotApply', message: applied.left.message, stderr: applied.left.stderr });
    }
    return gitText(location, ['write-tree']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function countRisk(baseline: BaselineRun | null | undefined, after: TestCounts | null): Risk | null {
  const before = baseline?.run.testCounts ?? null;
  if (before === null) return null;
  if (after === null) {
    return {
      kind: 'tests-weakened',
      severity: RISK_SEVERITY['tests-weakened'],
      detail: `the base run reported ${before.total} tests but the patched run reported no test count`,
      paths: [],
    };
  }
  if (after.total < before.total) {
    return {
      kind: 'tests-weakened',
      severity: RISK_SEVERITY['tests-weakened'],
      detail: `fewer tests ran: ${after.total} after the patch vs ${before.total} on the base`,
      paths: [],
    };
  }
  return null;
}

/** A run that exited 0 while its runner's own summary reported failed tests: a failure, said as such. */
function failedDespiteExitZero(
  result: SandboxedResult,
  worktree: TaskWorktree,
  failure: { readonly runner: string; readonly failed: number },
): Diagnosis {
  const diagnosis = diagnoseFailure({
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: false,
    stdout: result.stdout.text,
    stderr: result.stderr.text,
    roots: [worktree.path],
  });
  const summary = `the verify command exited 0 but the ${failure.runner} summary reports ${failure.failed} failed — ${diagnosis.summary}`;
  return { ...diagnosis, kind: 'assertion', summary: summary.slice(0, 300) };
}

/**
 * Verifies `request.patch` from scratch and mints a `VerifiedPatch` only on
 * exit 0. Left: verification could not be carried out (command refused,
 * patch does not apply, sandbox refused). Right: it ran — Verified or Failed.
 */
export async function verifyPatch(
  cap: SandboxExecCap,
  request: VerifyRequest,
): Promise<Result<VerifyError, VerifyOutcome>> {
  const refused = checkCommand(cap, request.argv, request.approvedArgvHashes);
  if (refused !== null) return err(refused);
  const { patch } = request;
  if (createHash('sha256').update(patch.bytes).digest('hex') !== patch.sha256) {
    return err({ _tag: 'PatchHashMismatch', message: 'patch bytes do not match their recorded sha256' });
  }
  const home = request.home ?? crustcoreHome();
  const created = await verifyWorktreeFor(request, home);
  if (created._tag === 'Left') return err({ _tag: 'WorktreeFailed', message: created.left.message });
  const worktree = created.right;
  let outcome: Result<VerifyError, VerifyOutcome>;
  try {
    outcome = await verifyIn(cap, worktree, request);
  } finally {
    await removeTaskWorktree(worktree);
  }
  if (outcome._tag === 'Right' && request.save !== false) {
    const verified = outcome.right._tag === 'Verified' ? outcome.right.verified : null;
    savePatchRecord(home, request.taskId, patch, verified);
  }
  return outcome;
}

/** The caller's prepared worktree when it fits this patch (any other is released); else a new one. */
async function verifyWorktreeFor(request: VerifyRequest, home: string): ReturnType<typeof createTaskWorktree> {
  const prepared = request.prepared ?? null;
  const fits =
    prepared !== null &&
    prepared.purpose === 'verify' &&
    prepared.taskId === request.taskId &&
    prepared.repo.commonDir === request.repo.commonDir &&
    prepared.baseCommit === request.patch.baseCommit;
  if (fits) return ok(prepared);
  if (prepared !== null) await removeTaskWorktree(prepared);
  return createTaskWorktree({
    repo: request.repo,
    taskId: request.taskId,
    ref: request.patch.baseCommit,
    purpose: 'verify',
    home,
    nowMs: request.nowMs,
    ...(request.pool === undefined ? {} : { pool: request.pool }),
  });
}

/**
 * Applies the patch in the verify worktree and reads its integrity checks there, with the verify
 * argv known: the authority, whatever extraction said. Read beside the apply, on the tree the
 * patch claims; kept only if the apply makes that tree. The tree is fixed before the verify
 * command runs, so nothing the command writes can change it.
 */
async function applyWithIntegrity(
  worktree: TaskWorktree,
  request: VerifyRequest,
): Promise<Result<VerifyError, { readonly tree: string; readonly integrity: Risk[] }>> {
  const { patch } = request;
  const check = () =>
    integrityRisks({
      reader: gitTreeReader(worktreeLocation(worktree)),
      baseCommit: patch.baseCommit,
      treeId: patch.treeId,
      files: patch.files,
      argv: request.argv,
    });
  const [tree, beside] = await Promise.all([
    applyPatchFile(worktree, patch.bytes, request.home ?? crustcoreHome()),
    check(),
  ]);
  if (tree._tag === 'Left') return tree;
  if (tree.right !== patch.treeId) {
    return err({
      _tag: 'TreeMismatch',
      expected: patch.treeId,
      actual: tree.right,
      message: 'the patch applied to the base does not reproduce the worker tree',
    });
  }
  // Read before the apply wrote the tree (a patch whose objects are not in this task's store yet):
  // read again now that it is there, so the answer does not depend on which came first.
  const integrity = beside.some((risk) => risk.detail === UNREAD_TREE) ? await check() : beside;
  return ok({ tree: tree.right, integrity });
}

async function verifyIn(
  cap: SandboxExecCap,
  worktree: TaskWorktree,
  request: VerifyRequest,
): Promise<Result<VerifyError, VerifyOutcome>> {
  const { patch } = request;
  const applied = await applyWithIntegrity(worktree, request);
  if (applied._tag === 'Left') return applied;
  const { tree, integrity } = applied.right;
  const risky = await dependencyRisk(
    patch.files,
    commitTree(request.repo, patch.baseCommit),
    directoryTree(worktree.path),
  );
  const ran = await runInWorktree(cap, worktree, request);
  if (ran._tag === 'Left') return ran;
  const { run, result, environmentHash } = ran.right;
  const exitedZero = result.startError === null && !result.timedOut && !result.cancelled && result.exitCode === 0;
  const summaryFailure = exitedZero ? reportedFailures(result.stdout.text, result.stderr.text) : null;
  if (summaryFailure !== null)
    return ok({ _tag: 'Failed', diagnosis: failedDespiteExitZero(result, worktree, summaryFailure), run });
  if (!exitedZero) {
    const diagnosis = diagnoseFailure({
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      stdout: result.stdout.text,
      stderr: result.startError === null ? result.stderr.text : `${result.startError.message}\n${result.stderr.text}`,
      roots: [worktree.path],
    });
    return ok({ _tag: 'Failed', diagnosis, run });
  }
  // The count comparison stays its own entry: it is evidence from the run, not from the files.
  const risks = mergeRisks([...patch.risks, ...integrity, ...(risky === null ? [] : [risky])]);
  const fewer = countRisk(request.baseline, run.testCounts);
  if (fewer !== null) risks.push(fewer);
  const verified = new VerifiedPatch(verifiedPatchMintKey, patch.bytes, {
    taskId: request.taskId,
    patchSha256: patch.sha256,
    patchBytes: patch.bytes.length,
    baseCommit: patch.baseCommit,
    treeId: tree,
    argv: request.argv,
    profile: result.profile,
    backend: result.backend,
    isolation: result.isolation,
    exitCode: 0,
    stdoutSha256: result.stdout.sha256,
    stderrSha256: result.stderr.sha256,
    durationMs: result.durationMs,
    verifiedAtMs: request.nowMs,
    testCounts: run.testCounts,
    baselineCounts: request.baseline?.run.testCounts ?? null,
    files: patch.files,
    risks,
    environmentHash,
  });
  return ok({ _tag: 'Verified', verified, run });
}

/** Runs the verify argv on the base itself (no patch) so test counts can be compared. Never mints anything. */
export async function runBaselineVerify(
  cap: SandboxExecCap,
  request: Omit<VerifyRequest, 'patch' | 'baseline' | 'save' | 'nowMs'> & {
    readonly baseCommit: string;
    readonly nowMs?: number;
  },
): Promise<Result<VerifyError, BaselineRun>> {
  const refused = checkCommand(cap, request.argv, request.approvedArgvHashes);
  if (refused !== null) return err(refused);
  const created = await createTaskWorktree({
    repo: request.repo,
    taskId: request.taskId,
    ref: request.baseCommit,
    purpose: 'baseline',
    home: request.home ?? crustcoreHome(),
    ...(request.pool === undefined ? {} : { pool: request.pool }),
    ...(request.nowMs === undefined ? {} : { nowMs: request.nowMs }),
  });
  if (created._tag === 'Left') return err({ _tag: 'WorktreeFailed', message: created.left.message });
  try {
    const ran = await runInWorktree(cap, created.right, request);
    if (ran._tag === 'Left') return ran;
    return ok({ baseCommit: created.right.baseCommit, run: ran.right.run });
  } finally {
    await removeTaskWorktree(created.right);
  }
}
