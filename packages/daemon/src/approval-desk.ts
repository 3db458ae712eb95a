/**
 * Approvals for unattended runs. The daemon has no terminal, so `--approve
 * ask` becomes a pending approval that a person resolves through the admin
 * socket (`crustcore approve TASK`); nobody answering before the timeout is a
 * denial. `auto` answers only what policy lets it (never a request marked
 * `requiresHuman`); `deny` denies. Nothing here ever turns "ask" into "allow".
 *
 * A grant is also fenced: right before it is returned, the job's lease is
 * renewed; a daemon that lost its lease (another daemon owns the job now)
 * denies instead of applying.
 */
import {
  type ApprovalAnswer,
  type ApprovalChannel,
  type ApprovalContext,
  type ApprovalRequest,
  type RefusedAnswer,
  sanitizeForTerminal,
} from '@crustcore/runtime';
import type { ApproveMode } from './task-job.js';

export const APPROVAL_LIMITS = {
  maxDiffChars: 64 * 1024,
  maxFiles: 200,
  maxPending: 256,
  /** Refused answers kept per pending approval (each becomes a kernel Rejected in the task's ledger). */
  maxRefusedPerApproval: 32,
} as const;

export interface PendingApproval {
  readonly approvalId: string;
  readonly taskId: string;
  readonly jobId: string;
  readonly goal: string;
  /** The kernel's description of the operation (never the worker's words). */
  readonly description: string;
  readonly opHash: string;
  readonly risks: readonly string[];
  readonly evidence: string | null;
  readonly files: readonly { readonly path: string; readonly status: string; readonly fileClass: string }[];
  readonly diffText: string | null;
  readonly diffTruncated: boolean;
  readonly createdAtMs: number;
  readonly expiresAtMs: number;
}

type Decision = ApprovalAnswer;

interface Waiting {
  readonly record: PendingApproval;
  /** Answers that named another approval or operation: handed to the kernel with the decision. */
  readonly refused: RefusedAnswer[];
  readonly settle: (decision: Decision) => void;
}

export type ResolveOutcome =
  | { readonly _tag: 'Resolved'; readonly approval: PendingApproval; readonly decision: 'granted' | 'denied' }
  | { readonly _tag: 'NoPendingApproval'; readonly id: string }
  | { readonly _tag: 'ApprovalChanged'; readonly id: string; readonly message: string };

export interface ApprovalDeskOptions {
  /** How long a person has to answer; then the request is denied. */
  readonly timeoutMs: number;
  readonly clockMs?: () => number;
  readonly onEvent?: (kind: 'approval.pending' | 'approval.resolved', detail: Record<string, unknown>) => void;
}

export interface JobIdentity {
  readonly jobId: string;
  readonly taskId: string;
}

export class ApprovalDesk {
  readonly #options: ApprovalDeskOptions;
  readonly #waiting = new Map<string, Waiting>();

  constructor(options: ApprovalDeskOptions) {
    this.#options = options;
  }

  #now(): number {
    return (this.#options.clockMs ?? Date.now)();
  }

  list(): readonly PendingApproval[] {
    return [...this.#waiting.values()].map((waiting) => waiting.record);
  }

  /**
   * The channel one job's task loop asks. `leaseHeld` renews the job's lease
   * and says whether it is still this daemon's.
   */
  channelFor(job: JobIdentity, mode: ApproveMode, leaseHeld: () => Promise<boolean>): ApprovalChannel {
    const fenced = async (decision: Decision): Promise<Decision> => {
      if (decision.decision !== 'granted') return decision;
      return (await leaseHeld()) ? decision : { ...decision, decision: 'denied' };
    };
    return {
      resolve: async (request, context) => {
        if (mode === 'deny') return { decision: 'denied', by: 'human' };
        if (mode === 'auto') {
          if (request.requiresHuman) return { decision: 'denied', by: 'human' };
          return fenced({ decision: 'granted', by: 'policy-auto' });
        }
        return fenced(await this.#ask(job, request, context));
      },
    };
  }

  #ask(job: JobIdentity, request: ApprovalRequest, context: ApprovalContext): Promise<Decision> {
    if (this.#waiting.size >= APPROVAL_LIMITS.maxPending) return Promise.resolve({ decision: 'denied', by: 'human' });
    const now = this.#now();
    const expiresAtMs = Math.min(now + this.#options.timeoutMs, request.expiresAt);
    const diff = context.diffText;
    const record: PendingApproval = {
      approvalId: request.approvalId,
      taskId: job.taskId,
      jobId: job.jobId,
      goal: sanitizeForTerminal(context.goal).slice(0, 2_000),
      description: sanitizeForTerminal(request.description),
      opHash: request.opHash,
      risks: [...request.risks],
      evidence: context.evidence === null ? null : sanitizeForTerminal(context.evidence),
      files: context.files.slice(0, APPROVAL_LIMITS.maxFiles).map((file) => ({ ...file })),
      diffText: diff === null ? null : diff.slice(0, APPROVAL_LIMITS.maxDiffChars),
      diffTruncated: diff !== null && diff.length > APPROVAL_LIMITS.maxDiffChars,
      createdAtMs: now,
      expiresAtMs,
    };
    const refused: RefusedAnswer[] = [];
    return new Promise<Decision>((resolve) => {
      const timer = setTimeout(
        () => {
          if (this.#waiting.get(record.approvalId)?.record === record) {
            this.#waiting.delete(record.approvalId);
            this.#options.onEvent?.('approval.resolved', {
              approvalId: record.approvalId,
              taskId: record.taskId,
              decision: 'denied',
              reason: 'timeout',
            });
          }
          resolve({ decision: 'denied', by: 'human', refused });
        },
        Math.max(0, expiresAtMs - now),
      );
      this.#waiting.set(record.approvalId, {
        record,
        refused,
        settle: (decision) => {
          clearTimeout(timer);
          resolve({ ...decision, refused });
        },
      });
      this.#options.onEvent?.('approval.pending', {
        approvalId: record.approvalId,
        taskId: record.taskId,
        jobId: record.jobId,
        expiresAtMs,
      });
    });
  }

  #find(id: string): Waiting | null {
    for (const waiting of this.#waiting.values()) {
      const r = waiting.record;
      if (r.approvalId === id || r.taskId === id || r.jobId === id) return waiting;
    }
    return null;
  }

  /**
   * A person's answer. A grant names the approval and the operation hash that
   * was shown to them, so an approval that changed in between is refused.
   */
  resolve(
    id: string,
    answer: { readonly approvalId?: string; readonly opHash?: string },
    grant: boolean,
  ): ResolveOutcome {
    const waiting = this.#find(id);
    if (waiting === null) return { _tag: 'NoPendingApproval', id };
    const record = waiting.record;
    if (answer.approvalId !== undefined && answer.approvalId !== record.approvalId) {
      const message = `the pending approval is ${record.approvalId}, not ${answer.approvalId}`;
      return this.#refuse(waiting, grant, answer.opHash, message);
    }
    if (grant && answer.opHash !== record.opHash) {
      return this.#refuse(waiting, grant, answer.opHash, 'the operation hash does not match the pending approval');
    }
    this.#waiting.delete(record.approvalId);
    const decision = grant ? 'granted' : 'denied';
    this.#options.onEvent?.('approval.resolved', { approvalId: record.approvalId, taskId: record.taskId, decision });
    waiting.settle({ decision, by: 'human' });
    return { _tag: 'Resolved', approval: record, decision };
  }

  /**
   * A grant aimed at this approval that named another one or another
   * operation. The person is told why; the kernel is told too, with the
   * decision, so the refusal is in the task's ledger (a denial needs no record:
   * it cannot apply anything).
   */
  #refuse(waiting: Waiting, grant: boolean, opHash: string | undefined, message: string): ResolveOutcome {
    if (grant && waiting.refused.length < APPROVAL_LIMITS.maxRefusedPerApproval) {
      waiting.refused.push({ opHash: (opHash ?? '').slice(0, 128), why: message });
    }
    return { _tag: 'ApprovalChanged', id: waiting.record.approvalId, message };
  }

  /** Denies whatever a job is waiting for (the job is being cancelled, killed or stopped). */
  denyJob(jobId: string): void {
    for (const waiting of [...this.#waiting.values()]) {
      if (waiting.record.jobId !== jobId) continue;
      this.#waiting.delete(waiting.record.approvalId);
      waiting.settle({ decision: 'denied', by: 'human' });
    }
  }
}
