/**
 * What the task loop needs from the world, as small interfaces. The CLI wires
 * them to the real packages (ledger, verify, sandbox, secrets); each port
 * reports outcomes as values, and the loop turns them into kernel events.
 */
import type {
  Action,
  Approved,
  ApprovedBy,
  Diagnosis,
  EventSeq,
  Hash32,
  Json,
  KernelEvent,
  TaskId,
} from '@crustcore/kernel';
import type { ReceiptedToolOutput, ReceiptRequest } from '@crustcore/ledger';

/** A kernel event before the recorder stamps `seq` and `at`. */
export type PendingEvent = KernelEvent extends infer E
  ? E extends KernelEvent
    ? Omit<E, 'seq' | 'at'>
    : never
  : never;

export interface Recorder {
  /** Appends the event durably (stamping seq and time) before anyone acts on it. */
  appendEvent(event: PendingEvent): Promise<KernelEvent>;
  /** Records what the kernel answered, for replay. */
  appendActions(forSeq: EventSeq, actions: readonly Action[], stateHash: Hash32): Promise<void>;
  /** An informational frame (not a kernel event): transcripts, summaries. */
  appendNote(kind: string, taskId: TaskId, payload: Json): Promise<void>;
  /** Stores bytes in the content-addressed artifact store. */
  storeArtifact(bytes: Uint8Array | string): Promise<Hash32>;
  /** Issues a MAC'd receipt for a tool result and appends it; the only way to make model-visible tool output. */
  recordReceipt(request: ReceiptRequest): Promise<ReceiptedToolOutput>;
}

export interface CommandRecord {
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  readonly outputBytes: number;
  readonly durationMs: number;
  readonly timedOut: boolean;
  readonly stdoutArtifact?: Hash32;
  readonly stderrArtifact?: Hash32;
  readonly purpose: 'worker' | 'verify' | 'baseline' | 'tool';
}

/** How the worker's own process ended, for people: shown when it failed or changed nothing. */
export interface WorkerRun {
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** The last lines of its stderr (≤ 2,000 chars), sanitized by the renderer before printing. */
  readonly stderrTail: string;
}

export interface Workspace {
  prepare(): Promise<{ readonly baseCommit: string; readonly worktreePath: string }>;
  /** Removes every worktree the task made; safe to call twice. */
  cleanup(): Promise<void>;
}

export type AttemptResult =
  | {
      readonly kind: 'patch';
      readonly patchHash: Hash32;
      readonly filesChanged: number;
      readonly selfClaimedDone: boolean;
      readonly risks: readonly string[];
      readonly summary: string;
      readonly files: readonly { readonly path: string; readonly status: string; readonly fileClass: string }[];
      readonly commands: readonly CommandRecord[];
      readonly worker?: WorkerRun;
    }
  | {
      readonly kind: 'no-patch';
      readonly category: string;
      readonly summary: string;
      readonly selfClaimedDone: boolean;
      readonly commands: readonly CommandRecord[];
      readonly worker?: WorkerRun;
      /** Same value for two attempts that ended the same way (category, exit, output): a deterministic worker. */
      readonly fingerprint?: string;
    };

export interface Attempts {
  run(attempt: number, diagnosis: Diagnosis | null, signal: AbortSignal): Promise<AttemptResult>;
}

export type VerifyOutcome =
  | {
      readonly kind: 'passed';
      readonly treeHash: Hash32;
      readonly baseCommit: string;
      readonly argv: readonly string[];
      readonly profile: string;
      readonly stdoutHash: Hash32;
      readonly stderrHash: Hash32;
      readonly risks: readonly string[];
      readonly testsRun: number | null;
      /** Commands run for this verification (the baseline run on the base first, when there was one). */
      readonly commands: readonly CommandRecord[];
    }
  | {
      readonly kind: 'failed';
      readonly category: string;
      readonly summary: string;
      readonly failingTests: readonly string[];
      readonly firstError: string | null;
      readonly commands: readonly CommandRecord[];
      /**
       * Set when no other attempt could get further: the environment could not be set up and the
       * patch changes none of the files it is set up from. The task stops with this reason.
       */
      readonly environmentBlocked?: string;
    };

export interface Verifier {
  verify(patchHash: Hash32, signal: AbortSignal): Promise<VerifyOutcome>;
}

export type ApprovalRequest = Extract<Action, { kind: 'RequestApproval' }>;

export interface ApprovalContext {
  readonly goal: string;
  readonly diffText: string | null;
  readonly files: readonly { readonly path: string; readonly status: string; readonly fileClass: string }[];
  readonly evidence: string | null;
  /**
   * For a tool call: the tool as the caller named it and its arguments (canonical JSON, cut at
   * 2,000 characters), so the person sees what the call would do, not only its operation.
   */
  readonly toolCall?: { readonly tool: string; readonly arguments: string };
}

/**
 * An answer the channel refused while the request waited: it named another
 * approval or another operation than the one asked about (a forged, stale or
 * misdirected grant). The runtime hands each to the kernel as what it claimed
 * to be, so the kernel's refusal of it is in the ledger.
 */
export interface RefusedAnswer {
  /** The operation hash the answer presented (anything: it is checked, never trusted). */
  readonly opHash: string;
  readonly why: string;
}

export interface ApprovalAnswer {
  readonly decision: 'granted' | 'denied';
  readonly by: ApprovedBy;
  readonly refused?: readonly RefusedAnswer[];
}

export interface ApprovalChannel {
  /** Asks whoever may answer; never resolves to "granted" unless someone (or the standing --approve auto) said so. */
  resolve(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalAnswer>;
}

export type IntegrationResult =
  | { readonly kind: 'applied'; readonly journalId: string; readonly detail: string }
  | { readonly kind: 'failed'; readonly reason: 'drift' | 'io' | 'approval'; readonly detail: string };

export interface Integrator {
  apply(approved: Approved, patchHash: Hash32): Promise<IntegrationResult>;
  /**
   * The patch as a person should read it (viewPatch in @crustcore/verify): escaped, never lossy, with one
   * `warning:` line first for each file that hides something. Safe to print on a terminal as it is.
   */
  diffText(patchHash: Hash32): Promise<string | null>;
}

/** Progress for people (or JSON lines for machines). */
export interface Narrator {
  event(event: KernelEvent, actions: readonly Action[]): void;
  note(kind: string, detail: Record<string, unknown>): void;
}
