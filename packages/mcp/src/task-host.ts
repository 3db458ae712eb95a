/**
 * What the tool modules share: the stable failure codes and the view of the
 * service that approve / apply / export and the verify answer work through
 * (so they need not import the service itself).
 */
import { err, type Json, type Result } from '@crustcore/kernel';
import type { Db, TaskRecord } from '@crustcore/state';
import type { Repository } from '@crustcore/verify';
import type { ApprovalTokenBook } from './approval-tokens.js';
import type { LedgerCall, McpLedgers } from './mcp-ledger.js';
import type { LiveTask, RejectedAction, TaskDriver } from './task-driver.js';
import type { TaskMetadata } from './task-metadata.js';
import type { VerifyProgress } from './verify-progress.js';

export type ToolFailureCode =
  | 'invalid-input'
  | 'not-found'
  | 'wrong-phase'
  | 'busy'
  | 'refused'
  | 'not-verified'
  | 'not-approved'
  | 'bad-token'
  | 'drift'
  | 'too-large'
  | 'cancelled'
  | 'internal';

export interface ToolFailure {
  readonly code: ToolFailureCode;
  readonly message: string;
}

export type ToolResult = Result<ToolFailure, Json>;

/** What the protocol side hands a long tool call: where its progress goes, and its cancellation. */
export interface ToolCallContext {
  readonly progress?: VerifyProgress;
  readonly signal?: AbortSignal;
}

/**
 * The state plane could not be opened (thrown by the server's `Db` on every
 * use): `busy` when another process holds the embedded database, so the
 * caller is told who and what to do instead of `internal`.
 */
export class StatePlaneUnavailable extends Error {
  override readonly name = 'StatePlaneUnavailable';
  readonly busy: boolean;
  constructor(message: string, busy: boolean) {
    super(message);
    this.busy = busy;
  }
}

export const fail = (code: ToolFailureCode, message: string): Result<ToolFailure, never> => err({ code, message });

/** The kernel's refusals, in words for the caller. */
export const describeRejections = (rejected: readonly RejectedAction[]): string =>
  rejected.map((r) => `${r.eventKind} refused (${r.reason}: ${r.detail})`).join('; ');

/** What one tool call works on: the task's host facts, repository, state-plane row and live run. */
export interface TaskContext {
  readonly metadata: TaskMetadata;
  readonly repo: Repository;
  readonly task: TaskRecord;
  readonly live: LiveTask | null;
}

export interface TaskHost {
  readonly db: Db;
  readonly tokens: ApprovalTokenBook;
  readonly ledgers: McpLedgers;
  readonly driver: TaskDriver;
  context(taskId: string): Promise<Result<ToolFailure, TaskContext>>;
  withLedger(repo: Repository, work: (call: LedgerCall) => Promise<ToolResult>): Promise<ToolResult>;
  /** A finished task's session is cleaned up and forgotten; its tokens are revoked. */
  settle(live: LiveTask): Promise<void>;
}
