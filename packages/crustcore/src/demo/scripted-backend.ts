/**
 * A deterministic backend for the demo and tests: attempt N applies scripted
 * edit N through the confined write tools (so the demo exercises confinement
 * too), then CrustCore extracts the patch from the worktree exactly as it
 * would for any worker. Like any worker, it claims to be done each time.
 */

import { createHash } from 'node:crypto';
import { editText, FsWriteCap, resolveWritePath, WorktreeRoot } from '@crustcore/confine';
import {
  type BackendContext,
  type BackendResult,
  type CodingBackend,
  extractPatch,
  type WorkerInput,
} from '@crustcore/verify';

export interface ScriptedEdit {
  readonly summary: string;
  readonly path: string;
  readonly find: string;
  readonly replace: string;
}

const emptyTranscript = (text: string) => {
  const sha = createHash('sha256').update(text).digest('hex');
  return {
    stdoutText: text,
    stderrText: '',
    stdoutBytes: Buffer.byteLength(text),
    stderrBytes: 0,
    stdoutSha256: sha,
    stderrSha256: createHash('sha256').update('').digest('hex'),
  };
};

export class ScriptedBackend implements CodingBackend {
  readonly name = 'scripted';
  readonly #edits: readonly ScriptedEdit[];

  constructor(edits: readonly ScriptedEdit[]) {
    this.#edits = edits;
  }

  async run(input: WorkerInput, context: BackendContext): Promise<BackendResult> {
    const started = performance.now();
    const edit = this.#edits[input.attempt - 1];
    const lines: string[] = [];
    let failure: string | null = null;
    if (edit === undefined) {
      lines.push(`attempt ${input.attempt}: no more scripted edits`);
    } else {
      const root = WorktreeRoot.open(context.worktree.path);
      const cap = root._tag === 'Right' ? FsWriteCap.grant(root.right, `task:${input.taskId}`) : root;
      const path = cap._tag === 'Right' ? resolveWritePath(cap.right, edit.path) : cap;
      if (cap._tag === 'Left' || path._tag === 'Left') {
        failure = `could not open ${edit.path} for writing`;
      } else {
        const edited = editText(cap.right, path.right, {
          oldText: edit.find,
          newText: edit.replace,
          startLine: 1,
          endLine: 10_000,
        });
        if (edited._tag === 'Left') failure = `edit failed: ${edited.left._tag}`;
        else lines.push(`attempt ${input.attempt}: ${edit.summary}`);
      }
      if (input.previousDiagnosis) lines.push(`read the diagnosis: ${input.previousDiagnosis.summary}`);
    }
    const extracted = await extractPatch(context.worktree, { ...(context.home ? { home: context.home } : {}) });
    const patch =
      extracted._tag === 'Left'
        ? extracted.left._tag === 'PatchRejected'
          ? ({ _tag: 'Rejected', rejection: extracted.left } as const)
          : ({ _tag: 'ExtractFailed', message: extracted.left._tag } as const)
        : extracted.right === null
          ? ({ _tag: 'NoChanges' } as const)
          : ({ _tag: 'Patch', patch: extracted.right } as const);
    const summary = lines.join('\n');
    return {
      backend: this.name,
      summary,
      patch,
      selfClaimedDone: true,
      commandsRun: [],
      risks: patch._tag === 'Patch' ? patch.patch.risks : [],
      workerRisks: [],
      exit: {
        exitCode: failure === null ? 0 : 1,
        signal: null,
        timedOut: false,
        cancelled: false,
        durationMs: Math.round(performance.now() - started),
      },
      failure,
      transcript: emptyTranscript(`${summary}\n`),
    };
  }
}
