/**
 * Session entries (format version 2): one JSON object per line, each with an
 * `id` and the `parentId` of the entry it follows, so a file holds a tree of
 * conversations — branches share their common prefix. The first line is the
 * header. Every line is decoded with io-ts on load: a session file is state
 * on disk that anything with file access could have edited.
 */
import * as t from 'io-ts';

export const SESSION_FORMAT_VERSION = 2;

// ─── messages (provider-neutral, as in @crustcore/net) ────────────────────

/**
 * A union decoded by looking at one discriminating field first (io-ts's
 * plain union tries every member in turn, which dominates resume time).
 */
function tagged<C extends t.Mixed>(
  name: string,
  key: string,
  members: Readonly<Record<string, C>>,
): t.Type<t.TypeOf<C>, t.OutputOf<C>, unknown> {
  const pick = (value: unknown): C | undefined => {
    if (typeof value !== 'object' || value === null) return undefined;
    const tag = (value as Record<string, unknown>)[key];
    return typeof tag === 'string' && Object.hasOwn(members, tag) ? members[tag] : undefined;
  };
  return new t.Type(
    name,
    (value): value is t.TypeOf<C> => pick(value)?.is(value) === true,
    (value, context) => {
      const codec = pick(value);
      return codec === undefined ? t.failure(value, context, `unknown ${key}`) : codec.validate(value, context);
    },
    (value) => (pick(value)?.encode(value) ?? value) as t.OutputOf<C>,
  );
}

const JsonValue: t.Type<unknown> = t.unknown;
const JsonObject = t.record(t.string, JsonValue);

const TextPartC = t.type({ type: t.literal('text'), text: t.string });
const ThinkingPartC = t.intersection([
  t.type({ type: t.literal('thinking'), text: t.string }),
  t.partial({ signature: t.string }),
]);
const ToolCallPartC = t.intersection([
  t.type({ type: t.literal('tool_call'), id: t.string, name: t.string, arguments: JsonObject }),
  t.partial({ signature: t.string }),
]);

const AssistantPartC = tagged('AssistantPart', 'type', {
  text: TextPartC as t.Mixed,
  thinking: ThinkingPartC as t.Mixed,
  tool_call: ToolCallPartC as t.Mixed,
}) as unknown as t.Type<
  t.TypeOf<typeof TextPartC> | t.TypeOf<typeof ThinkingPartC> | t.TypeOf<typeof ToolCallPartC>,
  unknown,
  unknown
>;

const UserMessageC = t.type({ role: t.literal('user'), content: t.string });
const AssistantMessageC = t.type({ role: t.literal('assistant'), content: t.array(AssistantPartC) });
const ToolMessageC = t.intersection([
  t.type({ role: t.literal('tool'), toolCallId: t.string, toolName: t.string, content: t.string }),
  t.partial({ isError: t.boolean }),
]);

export const MessageC = tagged('Message', 'role', {
  user: UserMessageC as t.Mixed,
  assistant: AssistantMessageC as t.Mixed,
  tool: ToolMessageC as t.Mixed,
}) as unknown as t.Type<
  t.TypeOf<typeof UserMessageC> | t.TypeOf<typeof AssistantMessageC> | t.TypeOf<typeof ToolMessageC>,
  unknown,
  unknown
>;

export const MessageMetaC = t.partial({
  tool: t.string,
  callKey: t.string,
  reads: t.string,
  writes: t.string,
  mutated: t.boolean,
  readOnly: t.boolean,
  wholeFile: t.boolean,
  receiptHash: t.string,
  denied: t.boolean,
});

// ─── entries ──────────────────────────────────────────────────────────────

const Base = { id: t.string, parentId: t.union([t.string, t.null]), timestamp: t.string };

export const MessageEntryC = t.intersection([
  t.type({ ...Base, type: t.literal('message'), message: MessageC }),
  t.partial({ meta: MessageMetaC }),
]);
export const ThinkingLevelChangeEntryC = t.type({
  ...Base,
  type: t.literal('thinking_level_change'),
  thinkingLevel: t.keyof({ off: null, low: null, medium: null, high: null }),
});
export const ModelChangeEntryC = t.type({
  ...Base,
  type: t.literal('model_change'),
  provider: t.string,
  model: t.string,
});
export const CompactionEntryC = t.type({
  ...Base,
  type: t.literal('compaction'),
  summary: t.string,
  firstKeptEntryId: t.union([t.string, t.null]),
  tokensBefore: t.number,
  tokensAfter: t.number,
});
export const BranchSummaryEntryC = t.type({
  ...Base,
  type: t.literal('branch_summary'),
  fromId: t.string,
  summary: t.string,
});
export const CustomEntryC = t.type({ ...Base, type: t.literal('custom'), customType: t.string, data: JsonValue });
export const LabelEntryC = t.type({ ...Base, type: t.literal('label'), targetId: t.string, label: t.string });
export const SessionInfoEntryC = t.intersection([
  t.type({ ...Base, type: t.literal('session_info') }),
  t.partial({ name: t.string, goal: t.string, taskId: t.string }),
]);

export const SessionEntryC = t.union([
  MessageEntryC,
  ThinkingLevelChangeEntryC,
  ModelChangeEntryC,
  CompactionEntryC,
  BranchSummaryEntryC,
  CustomEntryC,
  LabelEntryC,
  SessionInfoEntryC,
]);

export type SessionEntry = t.TypeOf<typeof SessionEntryC>;

/** Codec per entry type: decoding dispatches on `type` instead of trying every member of the union. */
const ENTRY_CODECS: Readonly<Record<string, t.Mixed>> = {
  message: MessageEntryC,
  thinking_level_change: ThinkingLevelChangeEntryC,
  model_change: ModelChangeEntryC,
  compaction: CompactionEntryC,
  branch_summary: BranchSummaryEntryC,
  custom: CustomEntryC,
  label: LabelEntryC,
  session_info: SessionInfoEntryC,
};

/** Decodes one line's value; null when it is not a valid entry. */
export function decodeEntry(value: unknown): SessionEntry | null {
  if (typeof value !== 'object' || value === null) return null;
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(ENTRY_CODECS, type)) return null;
  const codec = ENTRY_CODECS[type] as t.Mixed;
  // The codec's own guard first: it allocates nothing, and a valid line needs no more.
  if (codec.is(value)) return value as SessionEntry;
  const decoded = codec.decode(value);
  return decoded._tag === 'Right' ? (decoded.right as SessionEntry) : null;
}
export type SessionEntryType = SessionEntry['type'];
export type MessageEntry = t.TypeOf<typeof MessageEntryC>;
export type CompactionEntry = t.TypeOf<typeof CompactionEntryC>;
export type StoredMessageMeta = t.TypeOf<typeof MessageMetaC>;

/** An entry before the session stamps `id`, `parentId` and `timestamp`. */
export type NewEntry = SessionEntry extends infer E
  ? E extends SessionEntry
    ? Omit<E, 'id' | 'parentId' | 'timestamp'>
    : never
  : never;

export const SessionHeaderC = t.intersection([
  t.type({
    type: t.literal('session'),
    version: t.literal(SESSION_FORMAT_VERSION),
    id: t.string,
    createdAt: t.string,
  }),
  t.partial({ repoId: t.string, cwd: t.string, parentSession: t.string, forkedFrom: t.string }),
]);
export type SessionHeader = t.TypeOf<typeof SessionHeaderC>;

/** Custom entry type that links a turn to its worktree snapshot commit. */
export const SNAPSHOT_CUSTOM_TYPE = 'worktree_snapshot';
/** Custom entry type holding the agent's todo list. */
export const TODO_CUSTOM_TYPE = 'todo';
