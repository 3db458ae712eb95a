/**
 * Jobs: units of long-running work with a lease (owner, expiry), heartbeat,
 * attempt counter and retry policy. Leases are fenced: every grant carries a
 * token that increases, and a write with an older token is refused.
 */
export const JOB_STATUSES = [
  'Queued',
  'Leased',
  'Running',
  'HeartbeatMissing',
  'Retrying',
  'Completed',
  'Failed',
  'Killed',
  'Expired',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  Queued: ['Leased', 'Killed'],
  Leased: ['Running', 'HeartbeatMissing', 'Expired', 'Completed', 'Failed', 'Killed', 'Retrying'],
  Running: ['HeartbeatMissing', 'Expired', 'Completed', 'Failed', 'Killed', 'Retrying'],
  HeartbeatMissing: ['Running', 'Expired', 'Completed', 'Failed', 'Killed', 'Retrying'],
  Expired: ['Retrying', 'Failed'],
  Retrying: ['Leased', 'Killed', 'Failed'],
  Completed: [],
  Failed: [],
  Killed: [],
};

export interface RetryPolicy {
  readonly maxAttempts: number;
  /** Backoff before attempt n (n ≥ 2) is baseDelayMs × 2^(n−2), capped. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000 };

export const retryDelayMs = (policy: RetryPolicy, nextAttempt: number): number =>
  Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, nextAttempt - 2));
