/**
 * Verifying staged content: the staged files are written into a scratch
 * worktree at the task's base commit (through confine's write capability),
 * the patch is extracted with git, and `@crustcore/verify` applies it to a
 * second, fresh worktree and runs the test command in the verify sandbox.
 * Only that run mints a `VerifiedPatch`. The scratch worktree is removed
 * whatever happens.
 */
import { deleteFile, FsWriteCap, resolveWritePath, WorktreeRoot, writeBytes } from '@crustcore/confine';
import { err, ok, type Result, type TaskId } from '@crustcore/kernel';
import { argvHash, type SandboxExecCap } from '@crustcore/sandbox';
import type { Db } from '@crustcore/state';
import { getBlob, listStagedDiffs } from '@crustcore/state';
import {
  type Argv,
  createTaskWorktree,
  extractPatch,
  type Repository,
  removeTaskWorktree,
  type UnverifiedPatch,
  type VerifyOutcome,
  verifyPatch,
} from '@crustcore/verify';

export interface VerificationFailure {
  readonly _tag: 'VerificationError';
  readonly message: string;
}

const failure = (message: string): Result<VerificationFailure, never> => err({ _tag: 'VerificationError', message });

/** The staged content of a task as a patch against its base commit. */
export async function patchFromStaged(
  db: Db,
  options: {
    readonly repo: Repository;
    readonly taskId: TaskId;
    readonly baseCommit: string;
    readonly home: string;
    readonly nowMs: number;
  },
): Promise<Result<VerificationFailure, UnverifiedPatch>> {
  const diffs = await listStagedDiffs(db, options.taskId, { activeOnly: true });
  if (diffs.length === 0) return failure('nothing is staged for this task; call stage_diff first');
  const created = await createTaskWorktree({
    repo: options.repo,
    taskId: options.taskId,
    ref: options.baseCommit,
    purpose: 'verify',
    home: options.home,
    nowMs: options.nowMs,
  });
  if (created._tag === 'Left') return failure(`cannot create a worktree: ${created.left.message}`);
  const worktree = created.right;
  try {
    const root = WorktreeRoot.open(worktree.path);
    if (root._tag === 'Left') return failure(`cannot open the worktree: ${root.left.message}`);
    const cap = FsWriteCap.grant(root.right, `mcp:${options.taskId}`);
    if (cap._tag === 'Left') return failure(cap.left.message);
    for (const diff of diffs) {
      const target = resolveWritePath(cap.right, diff.filePath);
      if (target._tag === 'Left') return failure(`${diff.filePath}: ${target.left.message}`);
      if (diff.stagedSha256 === null) {
        const removed = deleteFile(cap.right, target.right);
        if (removed._tag === 'Left') return failure(`${diff.filePath}: ${removed.left.message}`);
        continue;
      }
      const bytes = await getBlob(db, diff.stagedSha256);
      if (bytes === null) return failure(`${diff.filePath}: its staged blob is missing`);
      const written = writeBytes(cap.right, target.right, bytes, {
        // No `executable`: an existing file keeps its mode, so the patch changes content only.
        durable: false,
        maxBytes: 32 * 1024 * 1024,
      });
      if (written._tag === 'Left') return failure(`${diff.filePath}: ${written.left.message}`);
    }
    const patch = await extractPatch(worktree, { home: options.home });
    if (patch._tag === 'Left') {
      const e = patch.left;
      return failure(
        e._tag === 'PatchRejected'
          ? `the staged change is refused: ${e.problems.map((p) => `${p.reason} ${p.path}`).join(', ')}`
          : e.message,
      );
    }
    if (patch.right === null) return failure('the staged content equals the base commit; there is nothing to verify');
    return ok(patch.right);
  } finally {
    await removeTaskWorktree(worktree);
  }
}

export async function verifyStaged(
  cap: SandboxExecCap,
  options: {
    readonly repo: Repository;
    readonly taskId: TaskId;
    readonly patch: UnverifiedPatch;
    readonly argv: Argv;
    readonly argvFromUser: boolean;
    readonly home: string;
    readonly nowMs: number;
    readonly timeoutMs?: number;
  },
): Promise<Result<VerificationFailure, VerifyOutcome>> {
  const outcome = await verifyPatch(cap, {
    repo: options.repo,
    taskId: options.taskId,
    patch: options.patch,
    argv: options.argv,
    nowMs: options.nowMs,
    home: options.home,
    ...(options.argvFromUser ? { approvedArgvHashes: new Set([argvHash(options.argv)]) } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  if (outcome._tag === 'Left') {
    const e = outcome.left;
    return failure(`${e._tag}: ${e.message}`);
  }
  return ok(outcome.right);
}
