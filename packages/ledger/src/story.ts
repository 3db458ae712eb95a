/**
 * A readable account of each task in a log: the goal, what ran, the verify
 * evidence, the patch, approvals and the outcome. It reads the kernel's event
 * fields by name (packages/kernel/src/events.ts) and the `kernel.actions`
 * the runtime recorded; a frame it does not know becomes "kind #seq", never
 * an error: the story is for people, the checks are elsewhere.
 */
import type { Json } from '@crustcore/kernel';
import type { DecodedFrame } from './frame.js';
import { ACTIONS_KIND, RECEIPT_KIND, RECOVERED_KIND } from './kinds.js';

export type TaskOutcome = 'completed' | 'failed' | 'killed' | 'cancelled' | 'open';

export interface StoryEvent {
  readonly seq: number;
  readonly timestampMs: number;
  readonly kind: string;
  readonly text: string;
}

export interface StoryCommand {
  readonly seq: number;
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  readonly purpose: string | undefined;
}

export interface StoryApproval {
  readonly approvalId: string;
  readonly description: string | undefined;
  readonly decision: string | undefined;
  readonly by: string | undefined;
}

export interface StoryVerification {
  readonly seq: number;
  readonly patchHash: string | undefined;
  readonly treeHash: string | undefined;
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  readonly profile: string | undefined;
}

export interface TaskStory {
  readonly taskId: string;
  readonly goal: string | undefined;
  readonly outcome: TaskOutcome;
  readonly outcomeReason: string | undefined;
  readonly patchHash: string | undefined;
  readonly verification: StoryVerification | undefined;
  readonly approvals: readonly StoryApproval[];
  readonly commands: readonly StoryCommand[];
  readonly toolCalls: number;
  readonly receipts: number;
  readonly events: readonly StoryEvent[];
}

type Fields = { readonly [key: string]: Json | undefined };

/** Story lines of frames that change nothing in the task's draft. */
const PLAIN_LINES: Readonly<Record<string, (f: Fields | undefined) => string>> = {
  UserSteered: (f) =>
    `steered by the user (${number(f, 'bytes') ?? '?'} bytes, artifact ${short(text(f, 'textHash'))})`,
  [RECOVERED_KIND]: (f) => `log recovered after a crash: ${recoveredWhat(f)}`,
  TaskCompacted: () => 'finished: dropped from the live kernel state (its events stay in this log)',
  'note.backend.result': (f) =>
    `worker result of attempt ${number(f, 'attempt') ?? '?'} recorded (${text(f, 'backend') ?? '?'}, exit ${number(f, 'exitCode') ?? 'none'}${f?.selfClaimedDone === true ? ', says done' : ''})`,
  'note.verify.evidence': (f) =>
    `verification evidence recorded (patch ${short(text(f, 'patchSha256'))}, git tree ${short(text(f, 'treeId'))})`,
  'note.verify.diagnosis': (f) => `failure diagnosis recorded: ${quote(text(f, 'summary') ?? '')}`,
  'note.tool.refused': (f) =>
    `tool call refused, nothing ran: ${quote(text(f, 'tool') ?? '?')} was too large to record`,
};

const asFields = (value: Json | undefined): Fields | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
/** What a `ledger.recovered` frame says was dropped or closed (log-writer.ts, ledger-spine.ts write them). */
function recoveredWhat(f: Fields | undefined): string {
  const reason = text(f, 'reason');
  if (reason === 'unanswered event') return `event #${number(f, 'eventSeq') ?? '?'} was never answered`;
  const bytes = `${number(f, 'truncatedBytes') ?? '?'}`;
  return reason === 'unacknowledged commit'
    ? `${bytes} bytes written after the last acknowledged commit dropped`
    : `${bytes} torn bytes dropped`;
}

const text = (fields: Fields | undefined, key: string): string | undefined => {
  const value = fields?.[key];
  return typeof value === 'string' ? value : undefined;
};
const number = (fields: Fields | undefined, key: string): number | undefined => {
  const value = fields?.[key];
  return typeof value === 'number' ? value : undefined;
};
const strings = (fields: Fields | undefined, key: string): readonly string[] => {
  const value = fields?.[key];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
};
const short = (hash: string | undefined): string => (hash === undefined ? '?' : hash.slice(0, 12));
const quote = (value: string, max = 80): string =>
  JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
const argvText = (argv: readonly string[]): string =>
  argv.map((a) => (/^[\w./:=@+-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');

interface Draft {
  taskId: string;
  goal: string | undefined;
  outcome: TaskOutcome;
  outcomeReason: string | undefined;
  patchHash: string | undefined;
  verification: StoryVerification | undefined;
  approvals: Map<string, { description?: string; decision?: string; by?: string }>;
  commands: StoryCommand[];
  toolCalls: number;
  receipts: number;
  events: StoryEvent[];
}

/** Bounds what one story keeps, so a huge log cannot make `inspect` huge. */
export const MAX_STORY_EVENTS = 2_000;

export class StoryBuilder {
  readonly #tasks = new Map<string, Draft>();
  readonly #only: string | undefined;

  /** `taskId`: keep only this task's story. */
  constructor(taskId?: string) {
    this.#only = taskId;
  }

  #draft(taskId: string): Draft {
    let draft = this.#tasks.get(taskId);
    if (draft === undefined) {
      draft = {
        taskId,
        goal: undefined,
        outcome: 'open',
        outcomeReason: undefined,
        patchHash: undefined,
        verification: undefined,
        approvals: new Map(),
        commands: [],
        toolCalls: 0,
        receipts: 0,
        events: [],
      };
      this.#tasks.set(taskId, draft);
    }
    return draft;
  }

  feed(frame: DecodedFrame, payload: Json): void {
    const fields = asFields(payload);
    const taskId = frame.taskId ?? text(fields, 'taskId');
    if (taskId === undefined) return;
    if (this.#only !== undefined && taskId !== this.#only) return;
    const draft = this.#draft(taskId);
    if (frame.kind === ACTIONS_KIND) {
      this.#readActions(draft, frame, fields);
      return;
    }
    const line = this.#describe(draft, frame, fields);
    if (draft.events.length < MAX_STORY_EVENTS) {
      draft.events.push({ seq: frame.seq, timestampMs: frame.timestampMs, kind: frame.kind, text: line });
    }
  }

  /** Approvals and outcomes come from the actions the kernel asked for. */
  #readActions(draft: Draft, frame: DecodedFrame, fields: Fields | undefined): void {
    const actions = fields?.actions;
    if (!Array.isArray(actions)) return;
    for (const action of actions) {
      const a = asFields(action);
      const kind = text(a, 'kind');
      if (kind === 'RequestApproval') {
        const id = text(a, 'approvalId') ?? '?';
        const entry = draft.approvals.get(id) ?? {};
        const description = text(a, 'description');
        if (description !== undefined) entry.description = description;
        draft.approvals.set(id, entry);
        if (draft.events.length < MAX_STORY_EVENTS) {
          draft.events.push({
            seq: frame.seq,
            timestampMs: frame.timestampMs,
            kind: 'RequestApproval',
            text: `approval ${id} asked${a?.requiresHuman === true ? ' (a person must answer)' : ''}: ${quote(description ?? '')}`,
          });
        }
      } else if (kind === 'TaskFinished') {
        const outcome = text(a, 'outcome');
        if (outcome === 'completed' || outcome === 'failed' || outcome === 'killed') draft.outcome = outcome;
        draft.outcomeReason = text(a, 'reason') ?? draft.outcomeReason;
        draft.patchHash = text(a, 'patchHash') ?? draft.patchHash;
      }
    }
  }

  #describe(draft: Draft, frame: DecodedFrame, f: Fields | undefined): string {
    const plain = PLAIN_LINES[frame.kind];
    if (plain !== undefined) return plain(f);
    switch (frame.kind) {
      case 'TaskCreated':
        draft.goal = text(f, 'goal');
        return `task created (${text(f, 'profile') ?? '?'} profile, approvals ${text(f, 'approvalMode') ?? '?'}): goal ${quote(draft.goal ?? '')}`;
      case 'WorkspaceReady':
        return `workspace ready at ${text(f, 'baseCommit') ?? '?'}`;
      case 'TaskPlanned':
        return `planned: ${quote(text(f, 'summary') ?? '')}`;
      case 'ToolCallRequested': {
        draft.toolCalls++;
        const operation = asFields(f?.operation);
        const op = text(operation, 'op') ?? '?';
        const target =
          text(operation, 'path') ??
          (operation?.argv !== undefined ? argvText(strings(operation, 'argv')) : undefined) ??
          '';
        return `tool call ${text(f, 'toolCallId') ?? '?'}: ${text(f, 'tool') ?? '?'} (${op}${target === '' ? '' : ` ${target}`})`;
      }
      case 'ModelOutputReceived':
        return `model output: ${number(f, 'inputTokens') ?? '?'} tokens in, ${number(f, 'outputTokens') ?? '?'} out`;
      case 'tool.output': {
        const output = asFields(f?.output);
        const shown =
          text(output, '_tag') === 'Handle'
            ? `a handle to ${number(output, 'sizeBytes') ?? '?'} bytes (artifact ${short(text(output, 'artifact'))})`
            : `${number(output, 'sizeBytes') ?? '?'} bytes inline`;
        return `output of ${text(f, 'toolCallId') ?? '?'} shown to the model: ${shown}`;
      }
      case 'ToolCallCompleted':
        return `tool call ${text(f, 'toolCallId') ?? '?'} ${f?.ok === true ? 'ok' : 'failed'}, ${number(f, 'outputBytes') ?? '?'} bytes, receipt ${short(text(f, 'receiptHash'))}`;
      case RECEIPT_KIND:
        draft.receipts++;
        return `receipt for ${text(f, 'toolCallId') ?? '?'} (result ${short(text(f, 'resultHash'))})`;
      case 'CommandCompleted': {
        const argv = strings(f, 'argv');
        const exitCode = number(f, 'exitCode') ?? null;
        const purpose = text(f, 'purpose');
        draft.commands.push({ seq: frame.seq, argv, exitCode, purpose });
        return `${purpose ?? 'command'}: ${argvText(argv)} → exit ${exitCode ?? 'none'}${f?.timedOut === true ? ' (timed out)' : ''} in ${number(f, 'durationMs') ?? '?'} ms`;
      }
      case 'PatchProposed':
        draft.patchHash = text(f, 'patchHash') ?? draft.patchHash;
        return `patch ${short(text(f, 'patchHash'))} proposed: ${number(f, 'filesChanged') ?? '?'} files${riskText(f)}`;
      case 'PatchVerified': {
        const argv = strings(f, 'argv');
        draft.patchHash = text(f, 'patchHash') ?? draft.patchHash;
        draft.verification = {
          seq: frame.seq,
          patchHash: text(f, 'patchHash'),
          treeHash: text(f, 'treeHash'),
          argv,
          exitCode: number(f, 'exitCode') ?? null,
          profile: text(f, 'profile'),
        };
        return `patch ${short(text(f, 'patchHash'))} verified on tree ${short(text(f, 'treeHash'))}: ${argvText(argv)} → exit ${number(f, 'exitCode') ?? '?'} (${text(f, 'profile') ?? '?'} sandbox)${riskText(f)}`;
      }
      case 'PatchRejected':
        return `patch ${short(text(f, 'patchHash'))} rejected (${text(f, 'category') ?? '?'}): ${quote(text(f, 'summary') ?? '')}`;
      case 'ApprovalResolved': {
        const id = text(f, 'approvalId') ?? '?';
        const entry = draft.approvals.get(id) ?? {};
        const decision = text(f, 'decision');
        const by = text(f, 'by');
        if (decision !== undefined) entry.decision = decision;
        if (by !== undefined) entry.by = by;
        draft.approvals.set(id, entry);
        return `approval ${id} ${decision ?? '?'} by ${by ?? '?'}`;
      }
      case 'PatchApplied':
        draft.patchHash = text(f, 'patchHash') ?? draft.patchHash;
        return `patch ${short(text(f, 'patchHash'))} applied`;
      case 'IntegrationFailed':
        return `integration failed (${text(f, 'reason') ?? '?'}): ${quote(text(f, 'detail') ?? '')}`;
      case 'TaskFailed':
        draft.outcome = 'failed';
        draft.outcomeReason = text(f, 'reason') ?? draft.outcomeReason;
        return `task failed (${text(f, 'reason') ?? '?'}): ${quote(text(f, 'detail') ?? '')}`;
      case 'TaskKilled':
        draft.outcome = 'killed';
        draft.outcomeReason = text(f, 'reason') ?? draft.outcomeReason;
        return `task killed: ${quote(text(f, 'reason') ?? '')}`;
      case 'TaskCancelled':
        draft.outcome = 'cancelled';
        draft.outcomeReason = text(f, 'reason') ?? draft.outcomeReason;
        return `task cancelled: ${quote(text(f, 'reason') ?? '')}`;
      default:
        return `${frame.kind} #${frame.seq}`;
    }
  }

  stories(): readonly TaskStory[] {
    return [...this.#tasks.values()].map((d) => ({
      taskId: d.taskId,
      goal: d.goal,
      outcome: d.outcome,
      outcomeReason: d.outcomeReason,
      patchHash: d.patchHash,
      verification: d.verification,
      approvals: [...d.approvals.entries()].map(([approvalId, a]) => ({
        approvalId,
        description: a.description,
        decision: a.decision,
        by: a.by,
      })),
      commands: d.commands,
      toolCalls: d.toolCalls,
      receipts: d.receipts,
      events: d.events,
    }));
  }
}

function riskText(f: Fields | undefined): string {
  const risks = strings(f, 'risks');
  return risks.length === 0 ? '' : `; risks: ${risks.join(', ')}`;
}

/** Plain-text rendering of one story (the CLI adds color). */
export function renderStory(story: TaskStory): string[] {
  const lines = [
    `task ${story.taskId}: ${story.outcome}${story.outcomeReason === undefined ? '' : ` (${story.outcomeReason})`}`,
  ];
  if (story.goal !== undefined) lines.push(`  goal: ${quote(story.goal, 200)}`);
  for (const event of story.events) {
    lines.push(
      `  #${String(event.seq).padEnd(5)} ${new Date(event.timestampMs).toISOString().slice(11, 19)}  ${event.text}`,
    );
  }
  const v = story.verification;
  lines.push(
    v === undefined
      ? '  verify evidence: none'
      : `  verify evidence: ${argvText(v.argv)} → exit ${v.exitCode ?? '?'} on tree ${short(v.treeHash)} (seq ${v.seq})`,
  );
  lines.push(`  patch: ${story.patchHash ?? 'none'}`);
  const approvals = story.approvals.map(
    (a) => `${a.approvalId} ${a.decision ?? 'unanswered'}${a.by === undefined ? '' : ` by ${a.by}`}`,
  );
  lines.push(`  approvals: ${approvals.length === 0 ? 'none' : approvals.join(', ')}`);
  lines.push(`  tool calls: ${story.toolCalls}, receipts: ${story.receipts}, commands: ${story.commands.length}`);
  return lines;
}
