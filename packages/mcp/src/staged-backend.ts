/**
 * The MCP client is the task's worker: what it staged is its attempt. This
 * backend is how the runtime's VerifySession sees that attempt — it writes
 * the task's active staged content (state plane blobs) into the task
 * worktree the session prepared at the base commit, through confine's write
 * capability, and extracts the patch with git like every other backend. Only
 * the session's `verify` then makes it a VerifiedPatch.
 *
 * Staged content is cumulative (staging a file again replaces its edit), so
 * writing every active entry on each attempt leaves the worktree equal to
 * "base + what is staged now".
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { deleteFile, FsWriteCap, resolveWritePath, WorktreeRoot, writeBytes } from '@crustcore/confine';
import type { TaskId } from '@crustcore/kernel';
import type { Db } from '@crustcore/state';
import { getBlob, listStagedDiffs } from '@crustcore/state';
import {
  type BackendContext,
  type BackendResult,
  type CodingBackend,
  extractPatch,
  type PatchOutcome,
  type TaskWorktree,
  type WorkerInput,
} from '@crustcore/verify';

export const STAGED_BACKEND_NAME = 'mcp-client';

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const exists = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Writes the active staged content into the worktree; a message says what went wrong. */
async function writeStaged(db: Db, taskId: TaskId, worktree: TaskWorktree): Promise<string | null> {
  const root = WorktreeRoot.open(worktree.path);
  if (root._tag === 'Left') return `cannot open the worktree: ${root.left.message}`;
  const cap = FsWriteCap.grant(root.right, `mcp:${taskId}`);
  if (cap._tag === 'Left') return cap.left.message;
  for (const diff of await listStagedDiffs(db, taskId, { activeOnly: true })) {
    const target = resolveWritePath(cap.right, diff.filePath);
    if (target._tag === 'Left') return `${diff.filePath}: ${target.left.message}`;
    if (diff.stagedSha256 === null) {
      if (!exists(join(worktree.path, diff.filePath))) continue;
      const removed = deleteFile(cap.right, target.right);
      if (removed._tag === 'Left') return `${diff.filePath}: ${removed.left.message}`;
      continue;
    }
    const bytes = await getBlob(db, diff.stagedSha256);
    if (bytes === null) return `${diff.filePath}: its staged blob is missing`;
    // No `executable`: an existing file keeps its mode, so the patch changes content only.
    const written = writeBytes(cap.right, target.right, bytes, { durable: false, maxBytes: 32 * 1024 * 1024 });
    if (written._tag === 'Left') return `${diff.filePath}: ${written.left.message}`;
  }
  return null;
}

async function outcomeOf(worktree: TaskWorktree, home: string | undefined): Promise<PatchOutcome> {
  const extracted = await extractPatch(worktree, home === undefined ? {} : { home });
  if (extracted._tag === 'Left') {
    return extracted.left._tag === 'PatchRejected'
      ? { _tag: 'Rejected', rejection: extracted.left }
      : { _tag: 'ExtractFailed', message: extracted.left.message };
  }
  return extracted.right === null ? { _tag: 'NoChanges' } : { _tag: 'Patch', patch: extracted.right };
}

export class StagedContentBackend implements CodingBackend {
  readonly name = STAGED_BACKEND_NAME;
  readonly worksBeforeRun = true;
  readonly #db: Db;
  readonly #taskId: TaskId;

  constructor(db: Db, taskId: TaskId) {
    this.#db = db;
    this.#taskId = taskId;
  }

  async run(_input: WorkerInput, context: BackendContext): Promise<BackendResult> {
    const problem = await writeStaged(this.#db, this.#taskId, context.worktree);
    const patch: PatchOutcome =
      problem === null ? await outcomeOf(context.worktree, context.home) : { _tag: 'ExtractFailed', message: problem };
    return {
      backend: this.name,
      summary: 'the content the MCP client staged',
      patch,
      selfClaimedDone: true,
      commandsRun: [],
      risks: patch._tag === 'Patch' ? patch.patch.risks : [],
      workerRisks: [],
      // The client worked outside CrustCore: there is no process of ours to report on.
      exit: { exitCode: 0, signal: null, timedOut: false, cancelled: false, durationMs: 0 },
      failure: null,
      transcript: {
        stdoutText: '',
        stderrText: '',
        stdoutBytes: 0,
        stderrBytes: 0,
        stdoutSha256: EMPTY_SHA256,
        stderrSha256: EMPTY_SHA256,
      },
    };
  }
}
