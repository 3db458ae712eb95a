/**
 * What a memory is. Four kinds: a failure the verifier classified (with the
 * verified fix when one followed), a convention, a decision, and a nugget (a
 * short fact a person adds: "use ESM in this package"). A memory is prior
 * observation, never authority: whatever its text says, it reaches a model
 * only as fenced, untrusted data (context.ts) and changes no policy.
 */
import * as t from 'io-ts';

export const MEMORY_KINDS = ['failure', 'convention', 'decision', 'nugget'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** Who wrote it: a person (`crustcore memory add`) or CrustCore's verifier (a classified failure and its fix). */
export const MEMORY_SOURCES = ['person', 'verifier'] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];

export const MEMORY_LIMITS = {
  /** A memory is a short observation, not a document. */
  bodyChars: 2_000,
  /** The fix attached to a failure memory (summary + files). */
  fixChars: 2_000,
  /** A repository id (verify's repoId) or any caller-chosen scope key. */
  repoIdChars: 200,
  tags: 16,
  tagChars: 64,
} as const;

export const isMemoryKind = (value: string): value is MemoryKind => (MEMORY_KINDS as readonly string[]).includes(value);

export interface Memory {
  /** `m_` + 16 hex digits, derived from repository, kind and text: adding the same memory twice is one memory. */
  readonly id: string;
  readonly repoId: string;
  readonly kind: MemoryKind;
  readonly body: string;
  /** For a failure memory: what fixed it (a verified patch's summary and files), when known. */
  readonly fix: string | null;
  readonly tags: readonly string[];
  readonly source: MemorySource;
  /** The task it came from, for verifier memories. */
  readonly taskId: string | null;
  /** Milliseconds since the epoch, from the store's clock when it was added. */
  readonly createdAtMs: number;
}

export interface NewMemory {
  readonly kind: MemoryKind;
  readonly body: string;
  readonly fix?: string | null;
  readonly tags?: readonly string[];
  readonly source?: MemorySource;
  readonly taskId?: string | null;
}

const KindCodec = t.keyof({ failure: null, convention: null, decision: null, nugget: null });
const SourceCodec = t.keyof({ person: null, verifier: null });

/** `NewMemory` as decoded from outside (a CLI's JSON, a ledger-derived record). */
export const NewMemoryCodec = t.intersection([
  t.type({ kind: KindCodec, body: t.string }),
  t.partial({
    fix: t.union([t.string, t.null]),
    tags: t.array(t.string),
    source: SourceCodec,
    taskId: t.union([t.string, t.null]),
  }),
]);

/** The `detail` column: everything of a memory that is not indexed on its own. */
export const MemoryDetailCodec = t.type({
  fix: t.union([t.string, t.null]),
  tags: t.array(t.string),
  taskId: t.union([t.string, t.null]),
});
export type MemoryDetail = t.TypeOf<typeof MemoryDetailCodec>;
