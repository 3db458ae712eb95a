/**
 * Failure memories from a finished task's ledger: a post-task step, so the
 * runtime stays unaware of memory. Each failure the verifier classified
 * (`verify.diagnosis` notes) becomes a failure memory; when the same task then
 * got a verified patch (`PatchVerified`), the fix — the worker's summary of
 * the attempt that passed and the patch hash — is attached to it.
 *
 * Frames are decoded with io-ts: a ledger is trusted for integrity, but a
 * payload this code does not expect is skipped, never guessed at. Text from a
 * diagnosis quotes test output and text from a worker summary is the model's:
 * both stay untrusted data wherever the memory is later shown.
 */
import { exportJsonl } from '@crustcore/ledger';
import { isRight } from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { MemoryStore } from './store.js';
import { MEMORY_LIMITS, type NewMemory } from './types.js';

export interface LedgerFrameView {
  readonly kind: string;
  readonly taskId: string | null;
  readonly payload: unknown;
}

const DiagnosisNote = t.intersection([
  t.type({ kind: t.string, summary: t.string }),
  t.partial({
    failingTests: t.array(t.string),
    firstErrorLocation: t.union([t.null, t.type({ file: t.string, line: t.union([t.number, t.null]) })]),
  }),
]);
const BackendResultNote = t.type({ attempt: t.number, summary: t.string });
const PatchVerified = t.type({ patchHash: t.string, argv: t.array(t.string) });
const TaskCreated = t.type({ goal: t.string });

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

function failureBody(d: t.TypeOf<typeof DiagnosisNote>, goal: string | null): string {
  const at = d.firstErrorLocation ? ` at ${d.firstErrorLocation.file}:${d.firstErrorLocation.line ?? '?'}` : '';
  const tests =
    d.failingTests && d.failingTests.length > 0 ? ` (failing: ${d.failingTests.slice(0, 3).join('; ')})` : '';
  const task = goal === null ? '' : ` — while working on: ${clip(goal, 300)}`;
  return clip(`${d.kind}: ${d.summary}${at}${tests}${task}`, MEMORY_LIMITS.bodyChars);
}

/** The failure memories of `taskId` in these frames (in ledger order), each with its fix when one was verified. */
export function failureMemoriesOfTask(frames: readonly LedgerFrameView[], taskId: string): NewMemory[] {
  let goal: string | null = null;
  let lastSummary: string | null = null;
  const failures = new Map<string, string>();
  let fix: string | null = null;
  for (const frame of frames) {
    if (frame.taskId !== taskId) continue;
    if (frame.kind === 'TaskCreated') {
      const decoded = TaskCreated.decode(frame.payload);
      if (isRight(decoded)) goal = decoded.right.goal;
    } else if (frame.kind === 'verify.diagnosis') {
      const decoded = DiagnosisNote.decode(frame.payload);
      const key = isRight(decoded) ? `${decoded.right.kind}\n${decoded.right.summary}` : null;
      // The first sighting is kept: a repeat of the same failure adds nothing (and may say less).
      if (isRight(decoded) && key !== null && !failures.has(key)) failures.set(key, failureBody(decoded.right, goal));
    } else if (frame.kind === 'backend.result') {
      const decoded = BackendResultNote.decode(frame.payload);
      if (isRight(decoded)) lastSummary = decoded.right.summary;
    } else if (frame.kind === 'PatchVerified') {
      const decoded = PatchVerified.decode(frame.payload);
      if (isRight(decoded)) {
        const what = lastSummary === null || lastSummary.trim() === '' ? 'a patch' : clip(lastSummary.trim(), 1_500);
        fix = clip(
          `${what} (patch ${decoded.right.patchHash.slice(0, 12)}, verified by: ${decoded.right.argv.join(' ')})`,
          MEMORY_LIMITS.fixChars,
        );
      }
    }
  }
  return [...failures.values()].map((body) => ({ kind: 'failure', body, fix, source: 'verifier', taskId }));
}

/** The frames of a ledger file, decoded (payload-less frames carry `null`; notes by their own kind). Stops at a damaged frame. */
export function readLedgerFrames(logPath: string): LedgerFrameView[] {
  const frames: LedgerFrameView[] = [];
  exportJsonl({ logPath }, (line) => {
    const parsed = JSON.parse(line) as { kind?: unknown; taskId?: unknown; payload?: unknown };
    if (typeof parsed.kind !== 'string') return;
    frames.push({
      // The ledger stores a runtime note as `note.<kind>` (`note.verify.diagnosis`); this module reads the note's kind.
      kind: parsed.kind.startsWith('note.') ? parsed.kind.slice('note.'.length) : parsed.kind,
      taskId: typeof parsed.taskId === 'string' ? parsed.taskId : null,
      payload: parsed.payload ?? null,
    });
  });
  return frames;
}

export interface LearnReport {
  readonly tasks: number;
  readonly added: number;
  readonly refreshed: number;
}

/**
 * Records the failure memories of every task in `frames` (a repository's whole ledger). Safe to
 * run again: a memory's id is its repository, kind and text, so a second run only refreshes.
 */
export async function learnFromLedger(
  store: Pick<MemoryStore, 'add'>,
  repoId: string,
  frames: readonly LedgerFrameView[],
): Promise<LearnReport> {
  const tasks = new Set<string>();
  for (const frame of frames) if (frame.kind === 'verify.diagnosis' && frame.taskId !== null) tasks.add(frame.taskId);
  let added = 0;
  let refreshed = 0;
  for (const taskId of tasks) {
    for (const memory of failureMemoriesOfTask(frames, taskId)) {
      const result = await store.add(repoId, memory);
      // A memory the store refuses (a task id of another shape) is skipped: the ledger is not input to fail on.
      if (result._tag === 'Right') {
        if (result.right.created) added += 1;
        else refreshed += 1;
      }
    }
  }
  return { tasks: tasks.size, added, refreshed };
}
