/**
 * Headless output for scripts and CI: `--output-format stream-json` lines and
 * the token/cost totals of `--json` and text mode. The lines follow Claude
 * Code's stream-json where the concepts match (a `system`/`init` line first,
 * `assistant`/`user` messages for the native agent's text and tool calls, a
 * `result` line last), so a parser written for Claude Code reads a CrustCore
 * run; CrustCore's own lines (`verify`, `approval`, `apply`, `event`, `note`,
 * `agent`) are extra types such a parser skips. Every field is documented in
 * docs/headless.md and has an io-ts codec in headless-schema.ts.
 */
import type { Writable } from 'node:stream';
import type { Action, KernelEvent } from '@crustcore/kernel';
import type { Narrator } from '@crustcore/runtime';
import type { Argv } from '@crustcore/verify';

/** Bumped on any change a consumer could notice (a field removed, renamed or retyped). */
export const HEADLESS_SCHEMA_VERSION = 1;

/** What the backend reported about its model use, summed over the task. */
export interface UsageTotals {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Null when some model turn had no known price (the charge of 0 was not a price). */
  readonly costUsd: number | null;
  readonly modelTurns: number;
}

/**
 * Sums the model turns the kernel was charged for (the native agent's and
 * the workers' proxy reports both arrive as `ModelOutputReceived`). A backend
 * that reports none (an external `--worker`) leaves the totals unknown.
 */
export class UsageTally {
  #input = 0;
  #output = 0;
  #costMicros = 0;
  #turns = 0;
  #unpriced = false;

  count(event: KernelEvent): void {
    if (event.kind !== 'ModelOutputReceived') return;
    this.#input += event.inputTokens;
    this.#output += event.outputTokens;
    this.#costMicros += event.costMicros;
    this.#turns += 1;
  }

  /** The native agent says when a turn's price was unknown; its charge of 0 then means "unknown". */
  markUnpriced(): void {
    this.#unpriced = true;
  }

  /** Null when no model turn was reported. */
  totals(): UsageTotals | null {
    if (this.#turns === 0) return null;
    const costUsd = this.#unpriced ? null : this.#costMicros / 1_000_000;
    return { inputTokens: this.#input, outputTokens: this.#output, costUsd, modelTurns: this.#turns };
  }
}

/** Sees an agent event for the tally (the `priced` flag of `usage`). */
function tallyAgentEvent(tally: UsageTally, event: unknown): void {
  const usage = event as { type?: unknown; priced?: unknown };
  if (usage.type === 'usage' && usage.priced === false) tally.markUnpriced();
}

const SI = ['', 'k', 'M', 'G'];
const tokens = (n: number): string => {
  let value = n;
  let unit = 0;
  while (value >= 1_000 && unit < SI.length - 1) {
    value /= 1_000;
    unit += 1;
  }
  return unit === 0 ? String(n) : `${value.toFixed(1)}${SI[unit]}`;
};

/** The one text-mode line: what the task cost, or that nobody reported it. */
function usageLine(totals: UsageTotals | null): string {
  if (totals === null) return 'tokens: unknown (the backend reported no model use) · cost: unknown';
  const cost = totals.costUsd === null ? 'cost: unknown (no price for the model)' : `$${totals.costUsd.toFixed(4)}`;
  return `tokens ${tokens(totals.inputTokens)} in / ${tokens(totals.outputTokens)} out · ${cost} · ${totals.modelTurns} model turn(s)`;
}

export interface InitFields {
  readonly sessionId: string;
  readonly cwd: string;
  readonly tools: readonly string[];
  readonly model: string | null;
  readonly permissionMode: string;
  readonly backend: string;
  readonly verify: readonly string[];
  readonly version: string;
}

/** The parts of a task's outcome the `result` line reports. */
export interface FinishedOutcome {
  readonly kind: string;
  readonly reason: string;
  readonly attempts: number;
  readonly patchHash: string | null;
  readonly journalId: string | null;
}

export interface ResultFields {
  /** A `TaskOutcomeKind`, or `busy` / `internal` when the task could not run. */
  readonly outcome: string;
  readonly exitCode: number;
  readonly reason: string;
  readonly durationMs: number;
  readonly attempts: number;
  readonly patchHash: string | null;
  readonly journalId: string | null;
  readonly stateDir: string | null;
}

type Line = Record<string, unknown>;

/**
 * The stream-json writer: a narrator for the kernel's events plus `init`,
 * `agent` and `result`. The native agent's text arrives as deltas; a turn's
 * text is printed as one `assistant` message when the turn moves on (a tool
 * call, the next turn, the attempt's end), as Claude Code prints whole messages.
 */
export class HeadlessStream implements Narrator {
  readonly #out: Writable;
  readonly #sessionId: string;
  readonly #tally: UsageTally;
  #text = '';
  #model: string | null = null;

  constructor(out: Writable, sessionId: string, tally: UsageTally) {
    this.#out = out;
    this.#sessionId = sessionId;
    this.#tally = tally;
  }

  #write(line: Line): void {
    this.#out.write(`${JSON.stringify({ ...line, session_id: this.#sessionId })}\n`);
  }

  init(fields: InitFields): void {
    this.#model = fields.model;
    this.#write({
      type: 'system',
      subtype: 'init',
      cwd: fields.cwd,
      tools: fields.tools,
      mcp_servers: [],
      model: fields.model,
      permissionMode: fields.permissionMode,
      apiKeySource: 'none',
      schema_version: HEADLESS_SCHEMA_VERSION,
      crustcore_version: fields.version,
      backend: fields.backend,
      verify: fields.verify,
    });
  }

  event(event: KernelEvent, actions: readonly Action[]): void {
    this.#tally.count(event);
    this.#write({ type: 'event', event, actions });
    for (const line of ownLines(event, actions)) this.#write(line);
  }

  note(kind: string, detail: Record<string, unknown>): void {
    this.#write({ type: 'note', kind, detail });
  }

  /** One event of the native agent: kept raw as `agent`, and in Claude Code's message shape. */
  agent(raw: unknown): void {
    tallyAgentEvent(this.#tally, raw);
    this.#write({ type: 'agent', event: raw });
    const event = raw as AgentEventShape;
    if (event.type === 'text_delta' && event.actor === 'agent') this.#text += event.text;
    else if (event.type === 'turn_start' || event.type === 'attempt_end') this.#flushText();
    else if (event.type === 'tool_call' && event.actor === 'agent') {
      this.#flushText();
      this.#assistant([{ type: 'tool_use', id: event.id, name: event.tool, input: { summary: event.summary } }]);
    } else if (event.type === 'tool_result' && event.actor === 'agent') {
      const content = [
        { type: 'tool_result', tool_use_id: event.id, content: event.summary, is_error: event.status !== 'ok' },
      ];
      this.#write({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null });
    }
  }

  #flushText(): void {
    if (this.#text === '') return;
    this.#assistant([{ type: 'text', text: this.#text }]);
    this.#text = '';
  }

  #assistant(content: readonly Line[]): void {
    const message = { type: 'message', role: 'assistant', model: this.#model, content };
    this.#write({ type: 'assistant', message, parent_tool_use_id: null });
  }

  /** The last line. Token fields are null when the backend reported no model use (an external worker). */
  result(fields: ResultFields): void {
    this.#flushText();
    const totals = this.#tally.totals();
    this.#write({
      type: 'result',
      subtype: fields.outcome === 'completed' ? 'success' : 'error_during_execution',
      is_error: fields.outcome !== 'completed',
      duration_ms: fields.durationMs,
      num_turns: totals?.modelTurns ?? fields.attempts,
      result: fields.reason,
      total_cost_usd: totals?.costUsd ?? null,
      usage: { input_tokens: totals?.inputTokens ?? null, output_tokens: totals?.outputTokens ?? null },
      outcome: fields.outcome,
      exit_code: fields.exitCode,
      attempts: fields.attempts,
      patch_hash: fields.patchHash,
      journal_id: fields.journalId,
      state_dir: fields.stateDir,
    });
  }
}

type AgentEventShape =
  | { type: 'text_delta' | 'turn_start' | 'attempt_end'; text: string; actor: string }
  | { type: 'tool_call'; id: string; tool: string; summary: string; actor: string }
  | { type: 'tool_result'; id: string; tool: string; status: string; summary: string; actor: string };

/** CrustCore's own summary lines for verification, approvals and the apply. */
function ownLines(event: KernelEvent, actions: readonly Action[]): Line[] {
  const lines: Line[] = [];
  if (event.kind === 'PatchVerified')
    lines.push({
      type: 'verify',
      subtype: 'passed',
      argv: event.argv,
      patch_hash: event.patchHash,
      risks: event.risks,
    });
  else if (event.kind === 'PatchRejected')
    lines.push({
      type: 'verify',
      subtype: 'failed',
      category: event.category,
      summary: event.summary,
      failing_tests: event.failingTests,
    });
  else if (event.kind === 'ApprovalResolved')
    lines.push({ type: 'approval', subtype: 'resolved', decision: event.decision, by: event.by });
  else if (event.kind === 'PatchApplied')
    lines.push({ type: 'apply', subtype: 'applied', patch_hash: event.patchHash, journal_id: event.journalId });
  else if (event.kind === 'IntegrationFailed')
    lines.push({ type: 'apply', subtype: 'failed', reason: event.reason, detail: event.detail });
  for (const action of actions) {
    if (action.kind === 'RequestApproval')
      lines.push({
        type: 'approval',
        subtype: 'requested',
        description: action.description,
        risks: action.risks,
        requires_human: action.requiresHuman,
      });
  }
  return lines;
}

/**
 * What `run` and `demo` print besides the narration, in one place: the
 * stream-json lines, the usage totals of `--json`, the text-mode usage line.
 * Loaded lazily and not in crustcore-nano (which runs no backend that
 * reports model use, and refuses stream-json).
 */
export interface RunOutput {
  /** The narrator to hand the task: `base` with usage counted, or the stream. */
  readonly narrator: Narrator;
  /** The native agent's progress events. */
  readonly onAgentEvent: (event: unknown) => void;
  /** The `system`/`init` line (stream-json only). Positional: nano carries the call sites. */
  init(cwd: string, model: string | null, permissionMode: string, backend: string, verify: Argv): Promise<void>;
  /** The `result` line of a task that reached an outcome (stream-json only). */
  result(outcome: FinishedOutcome, exitCode: number, stateDir: string | null): void;
  /** The `result` line of a task that could not run (`busy`, `internal`, `usage`). */
  fail(outcome: string, exitCode: number, reason: string): void;
  /** The fields `--json` adds: usage, costUsd, durationMs, schemaVersion. */
  jsonFields(): Record<string, unknown>;
  /** The token and cost line of text mode. */
  textLine(): string;
}

export function runOutput(
  format: 'text' | 'json' | 'stream-json',
  out: Writable,
  sessionId: string,
  base: Narrator,
  version: string,
): RunOutput {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const tally = new UsageTally();
  const stream = format === 'stream-json' ? new HeadlessStream(out, sessionId, tally) : null;
  const counted: Narrator = {
    event(event, actions) {
      tally.count(event);
      base.event(event, actions);
    },
    note: (kind, detail) => base.note(kind, detail),
  };
  return {
    narrator: stream ?? counted,
    onAgentEvent: (event) => (stream === null ? tallyAgentEvent(tally, event) : stream.agent(event)),
    async init(cwd, model, permissionMode, backend, verify) {
      if (stream === null) return;
      const tools = await toolNamesOf(backend);
      stream.init({ sessionId, cwd, tools, model, permissionMode, backend, verify, version });
    },
    result(outcome, exitCode, stateDir) {
      const { kind, reason, attempts, patchHash, journalId } = outcome;
      stream?.result({
        outcome: kind,
        exitCode,
        reason,
        attempts,
        patchHash,
        journalId,
        stateDir,
        durationMs: elapsed(),
      });
    },
    fail(outcome, exitCode, reason) {
      const fields = { attempts: 0, patchHash: null, journalId: null, stateDir: null, durationMs: elapsed() };
      stream?.result({ ...fields, outcome, exitCode, reason });
    },
    jsonFields() {
      const totals = tally.totals();
      const usage =
        totals === null
          ? null
          : { inputTokens: totals.inputTokens, outputTokens: totals.outputTokens, modelTurns: totals.modelTurns };
      return { usage, costUsd: totals?.costUsd ?? null, durationMs: elapsed(), schemaVersion: HEADLESS_SCHEMA_VERSION };
    },
    textLine: () => usageLine(tally.totals()),
  };
}

/** The native agent's tool names for the `init` line; other backends' tools are their own business. */
async function toolNamesOf(backend: string): Promise<readonly string[]> {
  if (backend !== 'native') return [];
  const agent = await import('@crustcore/agent');
  return agent.TOOL_NAMES;
}
