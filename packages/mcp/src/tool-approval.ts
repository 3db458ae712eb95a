/**
 * The person's side of an MCP task, on the kernel:
 *
 *   mcp-token  the kernel's pending RequestApproval (id, nonce, opHash) + what it approves → a one-time token
 *   approve    token → ApprovalResolved {granted, by human, the grant's nonce and opHash}
 *   apply      the kernel-minted Approved from ApplyPatch → VerifySession.apply → PatchApplied | IntegrationFailed
 *
 * The token is the person's credential; the decision is the kernel's. A token
 * that is not live (guessed, spent, expired) carries no nonce, so the
 * resolution it stands for names none and the kernel refuses it
 * (approval-mismatch); a live token presented on another task names that
 * task's approval, and the kernel refuses it (unknown-approval). An apply
 * with no Approved held is reported as the failed integration it is; the
 * kernel refuses that too unless the task was integrating. Each refusal is a
 * `Rejected` answer in the ledger, and nothing touches the tree.
 */
import { type ApprovalId, type Hash32, type Json, ok, type TaskId } from '@crustcore/kernel';
import { type PendingEvent, randomIds } from '@crustcore/runtime';
import * as state from '@crustcore/state';
import type { ApprovalGrant, TokenRefusal } from './approval-tokens.js';
import { MCP_LIMITS } from './limits.js';
import type { LedgerCall } from './mcp-ledger.js';
import type { LiveTask, RejectedAction } from './task-driver.js';
import { describeRejections, fail, type TaskContext, type TaskHost, type ToolResult } from './task-host.js';
import type { ToolInput } from './tool-inputs.js';

/** The nonce a presented token stands for when it is not live: no approval has it. */
const NO_NONCE = 'no-live-token';
const NO_OP_HASH = '0'.repeat(64) as Hash32;

const clip = (text: string, max: number): { readonly text: string; readonly truncated: boolean } =>
  text.length <= max ? { text, truncated: false } : { text: text.slice(0, max), truncated: true };

function refusalWords(refusal: TokenRefusal): string {
  switch (refusal._tag) {
    case 'TokenExpired':
      return 'the token expired';
    case 'TokenSpent':
      return 'the token was already used';
    case 'TokenForAnotherTask':
      return 'the token was issued for another task (it is now spent)';
    default:
      return 'the token is not one a person issued here';
  }
}

/** The ApprovalResolved a presented token stands for. */
function resolutionOf(
  taskId: TaskId,
  live: LiveTask | null,
  grant: ApprovalGrant | null,
): Extract<PendingEvent, { kind: 'ApprovalResolved' }> {
  const pending = live?.approval ?? null;
  return {
    kind: 'ApprovalResolved',
    taskId,
    approvalId: (grant?.approvalId ?? pending?.approvalId ?? randomIds.approvalId()) as ApprovalId,
    decision: 'granted',
    by: 'human',
    nonce: grant?.nonce ?? NO_NONCE,
    opHash: (grant?.opHash ?? pending?.opHash ?? NO_OP_HASH) as Hash32,
  };
}

export async function approveTask(service: TaskHost, input: ToolInput<'approve'>): Promise<ToolResult> {
  // Spend the token first: a guessed or replayed token is gone either way.
  const redeemed = service.tokens.redeem(input.token, input.task_id);
  const context = await service.context(input.task_id);
  if (context._tag === 'Left') return context;
  const { repo, task, live } = context.right;
  const grant =
    redeemed._tag === 'Right'
      ? redeemed.right
      : redeemed.left._tag === 'TokenForAnotherTask'
        ? redeemed.left.grant
        : null;
  return service.withLedger(repo, async (call) => {
    const resolution = resolutionOf(task.id, live, grant);
    // A task this server no longer drives (finished, or made before a restart) gets the event too:
    // the kernel refuses it (unknown task, or no such approval) and the ledger says so.
    const rejected =
      live === null
        ? (await call.submit(resolution)).filter((a): a is RejectedAction => a.kind === 'Rejected')
        : (await service.driver.submit(call, live, resolution)).rejected;
    const why = redeemed._tag === 'Left' ? `${refusalWords(redeemed.left)}. ` : '';
    if (live === null || rejected.length > 0 || live.apply === null) {
      return fail(
        'bad-token',
        `${why}The kernel refused the approval (${describeRejections(rejected)}). Approval needs a person: ask them to run "crustcore mcp-token ${task.id}" and give you the token.`,
      );
    }
    return ok({
      task_id: task.id,
      approved: true,
      staged_hash: grant?.stagedHash ?? null,
      patch_sha256: grant?.patchSha256 ?? null,
      approval: live.apply.approved.approvalId,
      next: 'apply (write it to the working tree) or export (get the patch)',
    });
  });
}

const unapprovedIntegration = (taskId: TaskId): PendingEvent => ({
  kind: 'IntegrationFailed',
  taskId,
  reason: 'approval',
  detail: 'apply was called with no kernel-minted approval; nothing was written',
});

/** apply with no kernel-minted Approved: the failed integration is reported; the kernel decides what it means. */
async function applyUnapproved(service: TaskHost, call: LedgerCall, live: LiveTask): Promise<ToolResult> {
  const report = await service.driver.submit(call, live, unapprovedIntegration(live.taskId));
  await service.settle(live);
  const refused = report.rejected.length > 0 ? ` (${describeRejections(report.rejected)})` : '; the task is ABORTED';
  return fail('not-approved', `nothing approved to apply${refused}; a person must issue a token for approve`);
}

export async function applyTask(service: TaskHost, input: ToolInput<'apply'>): Promise<ToolResult> {
  const context = await service.context(input.task_id);
  if (context._tag === 'Left') return context;
  const { repo, task, live } = context.right;
  return service.withLedger(repo, async (call) => {
    if (live === null || live.finished !== null) {
      // Finished, or made before a restart: no Approved is held here. Told to the kernel all the same.
      const actions = await call.submit(unapprovedIntegration(task.id));
      const refused = actions.filter((a): a is RejectedAction => a.kind === 'Rejected');
      return fail('not-approved', `nothing approved to apply (phase ${task.phase}; ${describeRejections(refused)})`);
    }
    const action = live.apply;
    if (action === null) return applyUnapproved(service, call, live);
    return integrate(service, call, context.right, action);
  });
}

async function integrate(
  service: TaskHost,
  call: LedgerCall,
  context: TaskContext,
  action: NonNullable<LiveTask['apply']>,
): Promise<ToolResult> {
  const live = context.live as LiveTask;
  const runId = live.lastVerify?.runId ?? null;
  const db = service.db;
  const journal =
    runId === null ? null : await state.openApplyJournal(db, { taskId: live.taskId, verificationRunId: runId });
  const journalId = journal?._tag === 'Right' ? journal.right.id : null;
  if (journalId !== null) await state.advanceApplyJournal(db, journalId, 'APPLYING');
  live.apply = null;
  const result = await live.session.apply(action.approved, action.patchHash);
  if (journalId !== null)
    await state.advanceApplyJournal(db, journalId, result.kind === 'applied' ? 'APPLIED' : 'ROLLED_BACK');
  const report = await service.driver.submit(
    call,
    live,
    result.kind === 'applied'
      ? { kind: 'PatchApplied', taskId: live.taskId, patchHash: action.patchHash, journalId: result.journalId }
      : {
          kind: 'IntegrationFailed',
          taskId: live.taskId,
          reason: result.reason,
          detail: result.detail.slice(0, 3_000),
        },
  );
  const files = live.session.verified?.files.map((f) => f.path) ?? [];
  await service.settle(live);
  if (result.kind === 'failed') {
    const code = result.reason === 'drift' ? 'drift' : 'refused';
    return fail(
      code,
      `${result.detail}; the kernel ended the task (${live.finished?.reason ?? 'failed'}). Create a new task to try again, or export.`,
    );
  }
  if (report.rejected.length > 0) return fail('internal', describeRejections(report.rejected));
  return ok({ task_id: live.taskId, applied: true, files, journal: result.journalId, phase: live.phase });
}

export async function exportTask(service: TaskHost, input: ToolInput<'export'>): Promise<ToolResult> {
  const context = await service.context(input.task_id);
  if (context._tag === 'Left') return context;
  const { task, live } = context.right;
  const verified = live?.session.verified ?? null;
  if (live === null || verified === null)
    return fail('not-verified', 'the task has no verified content on this server; call verify');
  const bytes = verified.patchBytes();
  if (bytes.length > MCP_LIMITS.maxExportBytes) {
    return fail(
      'too-large',
      `the patch is ${bytes.length} bytes; export it with "crustcore diff --export ${task.id}" instead`,
    );
  }
  return ok({
    task_id: task.id,
    patch_sha256: verified.patchSha256,
    base_commit: verified.baseCommit,
    approved: live.apply !== null,
    patch: Buffer.from(bytes).toString('utf8'),
  });
}

/** The token a person gets for the kernel's pending approval, with everything it approves. */
export async function approvalTokenFor(service: TaskHost, taskId: string): Promise<ToolResult> {
  const context = await service.context(taskId);
  if (context._tag === 'Left') return context;
  const { metadata, task, live } = context.right;
  const approval = live?.approval ?? null;
  const verified = live?.session.verified ?? null;
  const last = live?.lastVerify ?? null;
  if (live === null || approval === null || verified === null || last === null || last.runId === null)
    return fail('wrong-phase', `task ${taskId} is ${task.phase}, not waiting for approval`);
  if ((await state.stagedContentHash(service.db, task.id)) !== last.stagedHash)
    return fail('not-verified', 'the staged content changed since it was verified');
  const minted = service.tokens.mint({
    taskId: task.id,
    approvalId: approval.approvalId,
    nonce: approval.nonce,
    opHash: approval.opHash,
    stagedHash: last.stagedHash,
    verificationRunId: last.runId,
    patchSha256: verified.patchSha256,
  });
  if (minted._tag === 'Left') return fail('busy', 'too many live approval tokens; wait for some to expire');
  const diff = clip(Buffer.from(verified.patchBytes()).toString('utf8'), 64 * 1024);
  const answer: Json = {
    token: minted.right.token,
    task_id: task.id,
    goal: metadata.goal,
    repository: metadata.repoRoot,
    base_commit: verified.baseCommit,
    staged_hash: last.stagedHash,
    patch_sha256: verified.patchSha256,
    verify_command: [...verified.argv],
    tests_run: last.outcome.kind === 'passed' ? last.outcome.testsRun : null,
    files: verified.files.map((f) => ({ path: f.path, status: f.status })),
    risks: [...approval.risks],
    diff: diff.text,
    diff_truncated: diff.truncated,
    expires_at: new Date(minted.right.grant.expiresAtMs).toISOString(),
  };
  return ok(answer);
}
