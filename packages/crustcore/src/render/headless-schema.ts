/**
 * The headless output's schema (version 1) as io-ts codecs: every line
 * `--output-format stream-json` prints and the object `--json` prints, as
 * docs/headless.md documents them. Exact codecs: a field the docs do not
 * name is stripped on decode, so a test that compares the decoded value with
 * the printed one catches undocumented fields. Not loaded by the CLI (which
 * only writes these lines); for tests and for consumers that want a decoder.
 */
import * as t from 'io-ts';
import { HEADLESS_SCHEMA_VERSION as HEADLESS_SCHEMA } from './headless.js';

const Nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);
const line = <P extends t.Props>(props: P) => t.exact(t.type({ ...props, session_id: t.string }));
const Strings = t.array(t.string);

/** First line: the session (a CrustCore task id), where it runs, what runs it. */
export const InitLine = line({
  type: t.literal('system'),
  subtype: t.literal('init'),
  cwd: t.string,
  tools: Strings,
  mcp_servers: t.array(t.exact(t.type({ name: t.string, status: t.string }))),
  model: Nullable(t.string),
  permissionMode: t.keyof({ auto: null, ask: null, deny: null }),
  apiKeySource: t.literal('none'),
  schema_version: t.literal(HEADLESS_SCHEMA),
  crustcore_version: t.string,
  backend: t.string,
  verify: Strings,
});

const TextBlock = t.exact(t.type({ type: t.literal('text'), text: t.string }));
const ToolUseBlock = t.exact(
  t.type({ type: t.literal('tool_use'), id: t.string, name: t.string, input: t.exact(t.type({ summary: t.string })) }),
);

/** The native agent's text of one turn, or one tool call (Claude Code's `assistant` message). */
export const AssistantLine = line({
  type: t.literal('assistant'),
  message: t.exact(
    t.type({
      type: t.literal('message'),
      role: t.literal('assistant'),
      model: Nullable(t.string),
      content: t.array(t.union([TextBlock, ToolUseBlock])),
    }),
  ),
  parent_tool_use_id: t.null,
});

/** A tool's result, as Claude Code's `user` message with a `tool_result` block. */
export const UserLine = line({
  type: t.literal('user'),
  message: t.exact(
    t.type({
      role: t.literal('user'),
      content: t.array(
        t.exact(
          t.type({ type: t.literal('tool_result'), tool_use_id: t.string, content: t.string, is_error: t.boolean }),
        ),
      ),
    }),
  ),
  parent_tool_use_id: t.null,
});

/** What ended a task: the kernel's outcomes, or why none was reached. */
export const Outcome = t.keyof({
  completed: null,
  'verify-failed': null,
  'budget-exhausted': null,
  denied: null,
  drift: null,
  killed: null,
  environment: null,
  internal: null,
  busy: null,
  usage: null,
});

/** Last line. Token and cost fields are null when the backend reported no model use. */
export const ResultLine = line({
  type: t.literal('result'),
  subtype: t.keyof({ success: null, error_during_execution: null }),
  is_error: t.boolean,
  duration_ms: t.number,
  num_turns: t.number,
  result: t.string,
  total_cost_usd: Nullable(t.number),
  usage: t.exact(t.type({ input_tokens: Nullable(t.number), output_tokens: Nullable(t.number) })),
  outcome: Outcome,
  exit_code: t.number,
  attempts: t.number,
  patch_hash: Nullable(t.string),
  journal_id: Nullable(t.string),
  state_dir: Nullable(t.string),
});

export const VerifyLine = t.union([
  line({
    type: t.literal('verify'),
    subtype: t.literal('passed'),
    argv: Strings,
    patch_hash: t.string,
    risks: Strings,
  }),
  line({
    type: t.literal('verify'),
    subtype: t.literal('failed'),
    category: t.string,
    summary: t.string,
    failing_tests: Strings,
  }),
]);

export const ApprovalLine = t.union([
  line({
    type: t.literal('approval'),
    subtype: t.literal('requested'),
    description: t.string,
    risks: Strings,
    requires_human: t.boolean,
  }),
  line({ type: t.literal('approval'), subtype: t.literal('resolved'), decision: t.string, by: t.string }),
]);

export const ApplyLine = t.union([
  line({ type: t.literal('apply'), subtype: t.literal('applied'), patch_hash: t.string, journal_id: t.string }),
  line({ type: t.literal('apply'), subtype: t.literal('failed'), reason: t.string, detail: t.string }),
]);

const Kinded = t.intersection([t.type({ kind: t.string }), t.UnknownRecord]);

/** A kernel event as the ledger records it, with the actions the kernel answered (docs/architecture.md). */
export const EventLine = line({ type: t.literal('event'), event: Kinded, actions: t.array(Kinded) });

/** Runtime information (environment preparation, its progress). */
export const NoteLine = line({ type: t.literal('note'), kind: t.string, detail: t.UnknownRecord });

/** The native agent's own progress event (`AgentEvent` in packages/agent), deltas included. */
export const AgentLine = line({
  type: t.literal('agent'),
  event: t.intersection([t.type({ type: t.string }), t.UnknownRecord]),
});

/** Repository memory: what was used or learned, or why it was skipped (docs/memory.md). */
export const MemoryLine = line({ type: t.literal('memory'), text: t.string });

/** Any stream-json line. */
export const HeadlessLine = t.union([
  InitLine,
  AssistantLine,
  UserLine,
  ResultLine,
  VerifyLine,
  ApprovalLine,
  ApplyLine,
  EventLine,
  NoteLine,
  AgentLine,
  MemoryLine,
]);
export type HeadlessLine = t.TypeOf<typeof HeadlessLine>;

/** The one object `crustcore run --json` prints. */
export const RunJson = t.exact(
  t.intersection([
    t.type({
      taskId: t.string,
      outcome: Outcome,
      exitCode: t.number,
      reason: t.string,
      attempts: t.number,
      patchHash: Nullable(t.string),
      applied: Nullable(t.string),
      lastDiagnosis: t.unknown,
      risks: Strings,
      hint: Nullable(t.string),
      worker: t.unknown,
      verified: Nullable(t.UnknownRecord),
      stateDir: t.string,
      inspect: Nullable(t.exact(t.type({ ok: t.boolean, frames: t.number }))),
      usage: Nullable(t.exact(t.type({ inputTokens: t.number, outputTokens: t.number, modelTurns: t.number }))),
      costUsd: Nullable(t.number),
      /** Null in crustcore-nano, which does not load the headless module. */
      durationMs: Nullable(t.number),
      schemaVersion: t.literal(HEADLESS_SCHEMA),
    }),
    t.partial({
      /** Repository memory (full build): docs/memory.md. */
      memory: t.exact(
        t.partial({
          observations: t.number,
          bytes: t.number,
          dropped: t.number,
          learned: Nullable(t.number),
          skipped: t.string,
        }),
      ),
    }),
  ]),
);
export type RunJson = t.TypeOf<typeof RunJson>;
