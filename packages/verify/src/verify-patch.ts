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
import { decideSandboxCommand, type SandboxExecCap, type SandboxedResult } from '@crustcore/sandbox';
import type { Argv } from './argv.js';
import { type Diagnosis, diagnoseFailure } from './diagnosis.js';
import { dependencyRisk } from './environment/dependency-risk.js';
import { commitTree, directoryTree } from './environment/tree-reader.js';
import { gitText, runGitAt } from './git.js';
import { crustcoreHome, scratchDir } from './home.js';
import { integrityRisks } from './integrity.js';
import { savePatchRecord } from './patch-store.js';
import { mergeRisks, RISK_SEVERITY, type Risk } from './risk.js';
import { reportedFailures, type TestCounts } from './test-counts.js';
import { gitTreeReader } from './tree-reader.js';
import { VerifiedPatch, verifiedPatchMintKey } from './verified-patch.js';
import { type RanInWorktree, runAhead, runInWorktree } from './verify-run.js';
import type { BaselineRun, VerifyError, VerifyOutcome, VerifyRequest } from './verify-types.js';
import { createTaskWorktree, removeTaskWorktree, type TaskWorktree, worktreeLocation } from './worktree.js';

export type { BaselineRun, VerifyError, VerifyOutcome, VerifyRequest, VerifyRun } from './verify-types.js';

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

/** The patched tree's checks: it reproduces the worker's tree, and the risks its files carry. */
interface CheckedTree {
  readonly treeId: string;
  readonly risks: readonly Risk[];
}

/** Applies the patch to the worktree and checks the tree it makes, before anything runs there. */
async function applyAndCheck(
  worktree: TaskWorktree,
  request: VerifyRequest,
): Promise<Result<VerifyError, CheckedTree>> {
  const { patch } = request;
  const tree = await applyPatchFile(worktree, patch.bytes, request.home ?? crustcoreHome());
  if (tree._tag === 'Left') return tree;
  // The tree is fixed before the verify command runs, so nothing the command writes can change it.
  if (tree.right !== patch.treeId) {
    return err({
      _tag: 'TreeMismatch',
      expected: patch.treeId,
      actual: tree.right,
      message: 'the patch applied to the base does not reproduce the worker tree',
    });
  }
  // Checked on the fresh worktree with the verify argv known: the authority, whatever extraction said.
  const integrity = await integrityRisks({
    reader: gitTreeReader(worktreeLocation(worktree)),
    baseCommit: patch.baseCommit,
    treeId: tree.right,
    files: patch.files,
    argv: request.argv,
  });
  const risky = await dependencyRisk(
    patch.files,
    commitTree(request.repo, patch.baseCommit),
    directoryTree(worktree.path),
  );
  return ok({ treeId: tree.right, risks: [...integrity, ...(risky === null ? [] : [risky])] });
}

/**
 * Applies and checks the patch, then runs the verify argv on it. The run is set up ahead (its
 * sandbox made while the patch is applied) when it can be, and withdrawn on every way out.
 */
async function verifyIn(
  cap: SandboxExecCap,
  worktree: TaskWorktree,
  request: VerifyRequest,
): Promise<Result<VerifyError, VerifyOutcome>> {
  const ahead = await runAhead(cap, worktree, request, request.patch);
  try {
    const checked = await applyAndCheck(worktree, request);
    if (checked._tag === 'Left') return checked;
    const ran = ahead === null ? await runInWorktree(cap, worktree, request) : await ahead.runNow();
    if (ran._tag === 'Left') return ran;
    return ok(outcomeOf(ran.right, worktree, request, checked.right));
  } finally {
    await ahead?.withdraw();
  }
}

/** A finished run's verdict: a diagnosis, or a VerifiedPatch minted with the checks' risks. */
function outcomeOf(
  ran: RanInWorktree,
  worktree: TaskWorktree,
  request: VerifyRequest,
  checked: CheckedTree,
): VerifyOutcome {
  const { patch } = request;
  const { run, result, environmentHash } = ran;
  const exitedZero = result.startError === null && !result.timedOut && !result.cancelled && result.exitCode === 0;
  const summaryFailure = exitedZero ? reportedFailures(result.stdout.text, result.stderr.text) : null;
  if (summaryFailure !== null)
    return { _tag: 'Failed', diagnosis: failedDespiteExitZero(result, worktree, summaryFailure), run };
  if (!exitedZero) {
    const diagnosis = diagnoseFailure({
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      stdout: result.stdout.text,
      stderr: result.startError === null ? result.stderr.text : `${result.startError.message}\n${result.stderr.text}`,
      roots: [worktree.path],
    });
    return { _tag: 'Failed', diagnosis, run };
  }
  // The count comparison stays its own entry: it is evidence from the run, not from the files.
  const risks = mergeRisks([...patch.risks, ...checked.risks]);
  const fewer = countRisk(request.baseline, run.testCounts);
  if (fewer !== null) risks.push(fewer);
  const verified = new VerifiedPatch(verifiedPatchMintKey, patch.bytes, {
    taskId: request.taskId,
    patchSha256: patch.sha256,
    patchBytes: patch.bytes.length,
    baseCommit: patch.baseCommit,
    treeId: checked.treeId,
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
  return { _tag: 'Verified', verified, run };
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
