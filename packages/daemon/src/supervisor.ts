/**
 * The daemon's supervisor: claims queued task jobs from the state plane, runs
 * each one, keeps its lease alive, and settles it.
 *
 *   claim (FOR UPDATE SKIP LOCKED, new fencing token)
 *     → start (Leased → Running, process handle recorded)
 *     → heartbeat every third of the lease
 *          refused (re-granted, expired, ended) → the run is aborted: another
 *          daemon owns the job now, and every write this one could still try
 *          is refused by the database anyway
 *          cancellation requested → the run is aborted, then acknowledged
 *     → complete / fail (fenced by the token)
 *
 * A sweeper runs `recoverExpiredLeases` on a timer, so jobs of daemons that
 * died (SIGKILL, power loss, a host gone) are requeued once their lease runs
 * out, by whichever daemon sweeps first. Nothing here trusts the local clock
 * for expiry: only the database's `now()` decides.
 */
import { hostname } from 'node:os';
import { type ApprovalChannel, TaskKillRequest } from '@crustcore/runtime';
import type { Db, JobLease } from '@crustcore/state';
import type { ApprovalDesk } from './approval-desk.js';
import { KeyedQueue } from './keyed-queue.js';
import { decodeTaskJobPayload, TASK_JOB_KIND, type TaskJobPayload, type TaskJobResult } from './task-job.js';

export type StatePlane = typeof import('@crustcore/state');

export type AbortReason = 'cancel' | 'kill' | 'lease-lost' | 'shutdown';

export interface RunningJob {
  readonly lease: JobLease;
  readonly payload: TaskJobPayload;
  readonly signal: AbortSignal;
  readonly approvals: ApprovalChannel;
}

/** How a run ended, as far as the job row is concerned. */
export type JobRunResult =
  | { readonly kind: 'succeeded'; readonly result: TaskJobResult }
  | {
      readonly kind: 'failed';
      readonly result: TaskJobResult | null;
      readonly error: string;
      readonly retryable: boolean;
    };

export type JobRunner = (job: RunningJob) => Promise<JobRunResult>;

export type SupervisorLog = (kind: string, detail: Record<string, unknown>) => void;

export interface SupervisorOptions {
  readonly state: StatePlane;
  readonly db: Db;
  /** Lease owner name; unique per daemon (defaults to host:pid). */
  readonly owner: string;
  /** Jobs run at once by this daemon. */
  readonly workers: number;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly recoverEveryMs: number;
  /** Bound on waiting for running jobs to stop at shutdown. */
  readonly stopGraceMs: number;
  readonly desk: ApprovalDesk;
  readonly runJob: JobRunner;
  readonly log: SupervisorLog;
  /** Applied to error text before it is written to the shared database (worker output can hold secrets). */
  readonly redact?: (text: string) => string;
}

interface Active {
  readonly lease: JobLease;
  readonly taskId: string;
  readonly goal: string;
  readonly dir: string;
  readonly abort: AbortController;
  readonly startedAtMs: number;
  reason: AbortReason | null;
  lastBeatOkMs: number;
  beating: boolean;
  done: Promise<void>;
}

/** What a run's signal is aborted with: only `kill` asks the runtime for a hard kill. */
export function abortReasonFor(reason: AbortReason): Error {
  if (reason === 'kill') return new TaskKillRequest('killed by crustcore kill');
  const error = new Error(`stopped by the daemon (${reason})`);
  error.name = 'AbortError';
  return error;
}

export const defaultOwnerName = (): string => `${hostname()}:${process.pid}`;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 4_000);

export class Supervisor {
  readonly #o: SupervisorOptions;
  readonly #active = new Map<string, Active>();
  readonly #repos = new KeyedQueue();
  #paused = false;
  #stopping = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  #sweeper: NodeJS.Timeout | null = null;
  #sweeping = false;
  #claimed = 0;
  #finished = 0;

  constructor(options: SupervisorOptions) {
    if (!Number.isSafeInteger(options.workers) || options.workers < 1 || options.workers > 64) {
      throw new Error('workers must be 1..64');
    }
    this.#o = options;
  }

  get paused(): boolean {
    return this.#paused;
  }

  start(): void {
    if (this.#loop !== null) return;
    this.#sweeper = setInterval(() => void this.#sweep(), this.#o.recoverEveryMs);
    void this.#sweep();
    this.#loop = this.#claimLoop();
  }

  pause(): void {
    this.#paused = true;
    this.#o.log('daemon.paused', {});
  }

  resume(): void {
    this.#paused = false;
    this.#o.log('daemon.resumed', {});
    this.#poke();
  }

  status(): Record<string, unknown> {
    return {
      owner: this.#o.owner,
      engine: this.#o.db.engine,
      paused: this.#paused,
      stopping: this.#stopping,
      workers: this.#o.workers,
      leaseMs: this.#o.leaseMs,
      claimed: this.#claimed,
      finished: this.#finished,
      running: [...this.#active.values()].map((a) => ({
        jobId: a.lease.jobId,
        taskId: a.taskId,
        attempt: a.lease.attempt,
        fenceToken: a.lease.token.toString(),
        goal: a.goal.slice(0, 200),
        dir: a.dir,
        startedAtMs: a.startedAtMs,
        stopping: a.reason,
      })),
      pendingApprovals: this.#o.desk.list().length,
    };
  }

  /** True when this daemon runs the job; it is then aborted with `reason`. */
  abortLocal(jobId: string, reason: AbortReason): boolean {
    const active = this.#active.get(jobId);
    if (active === undefined) return false;
    this.#abort(active, reason);
    return true;
  }

  /** Stops claiming, asks running jobs to stop (they are requeued), waits a bounded time. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#poke();
    for (const active of this.#active.values()) this.#abort(active, 'shutdown');
    const all = Promise.all([...this.#active.values()].map((a) => a.done)).then(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#o.stopGraceMs)))]);
    clearTimeout(timer);
    await this.#loop;
  }

  #abort(active: Active, reason: AbortReason): void {
    if (active.reason === null) active.reason = reason;
    this.#o.desk.denyJob(active.lease.jobId);
    if (!active.abort.signal.aborted) {
      this.#o.log('job.stopping', { jobId: active.lease.jobId, taskId: active.taskId, reason: active.reason });
      // The runtime turns the abort into a kernel event: TaskKilled for a kill, TaskCancelled otherwise.
      active.abort.abort(abortReasonFor(active.reason));
    }
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = null;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async #claimLoop(): Promise<void> {
    // Back off while the database is unreachable (at most 10 s between tries).
    let failures = 0;
    while (!this.#stopping) {
      let claimed = false;
      if (!this.#paused && this.#active.size < this.#o.workers) {
        try {
          const result = await this.#o.state.claimJob(this.#o.db, {
            owner: this.#o.owner,
            leaseMs: this.#o.leaseMs,
            kinds: [TASK_JOB_KIND],
          });
          if (result._tag === 'Left') this.#o.log('claim.refused', { error: result.left });
          else if (result.right !== null) {
            claimed = true;
            this.#claimed += 1;
            this.#launch(result.right);
          }
          failures = 0;
        } catch (error) {
          failures += 1;
          this.#o.log('claim.error', { message: messageOf(error), failures });
        }
      }
      const pauseMs = failures === 0 ? this.#o.pollMs : Math.min(10_000, this.#o.pollMs * 2 ** Math.min(failures, 10));
      if (!claimed && !this.#stopping) await this.#sleep(pauseMs);
    }
  }

  async #sweep(): Promise<void> {
    if (this.#sweeping || this.#stopping) return;
    this.#sweeping = true;
    try {
      const report = await this.#o.state.recoverExpiredLeases(this.#o.db, { limit: 1000 });
      const changed =
        report.requeued.length + report.failed.length + report.deadlineExceeded.length + report.heartbeatMissing.length;
      if (changed > 0) {
        this.#o.log('leases.recovered', {
          requeued: report.requeued,
          failed: report.failed,
          deadlineExceeded: report.deadlineExceeded,
          heartbeatMissing: report.heartbeatMissing,
        });
        if (report.requeued.length > 0) this.#poke();
      }
    } catch (error) {
      this.#o.log('sweep.error', { message: messageOf(error) });
    } finally {
      this.#sweeping = false;
    }
  }

  #launch(lease: JobLease): void {
    const payload = decodeTaskJobPayload(lease.payload);
    const goal = payload._tag === 'Right' ? payload.right.goal : '';
    const active: Active = {
      lease,
      taskId: lease.taskId ?? '',
      goal,
      dir: payload._tag === 'Right' ? payload.right.dir : '',
      abort: new AbortController(),
      startedAtMs: Date.now(),
      reason: null,
      lastBeatOkMs: Date.now(),
      beating: false,
      done: Promise.resolve(),
    };
    this.#active.set(lease.jobId, active);
    active.done = this.#run(active, payload).finally(() => {
      this.#active.delete(lease.jobId);
      this.#finished += 1;
      this.#poke();
    });
  }

  /** Renews the lease now; false when it is no longer this daemon's (or the job should stop). */
  async #beat(active: Active): Promise<boolean> {
    try {
      const beat = await this.#o.state.heartbeatJob(this.#o.db, active.lease);
      if (beat._tag === 'Left') {
        this.#o.log('lease.lost', { jobId: active.lease.jobId, error: beat.left });
        this.#abort(active, 'lease-lost');
        return false;
      }
      active.lastBeatOkMs = Date.now();
      if (beat.right.cancelRequested) {
        this.#abort(active, 'cancel');
        return false;
      }
      return active.reason === null;
    } catch (error) {
      // The database is unreachable: once the lease may have run out, this
      // daemon must assume another one owns the job.
      this.#o.log('heartbeat.error', { jobId: active.lease.jobId, message: messageOf(error) });
      if (Date.now() - active.lastBeatOkMs > this.#o.leaseMs * 0.8) this.#abort(active, 'lease-lost');
      return false;
    }
  }

  async #run(active: Active, decoded: ReturnType<typeof decodeTaskJobPayload>): Promise<void> {
    const { state, db } = this.#o;
    const lease = active.lease;
    const jobId = lease.jobId;
    if (decoded._tag === 'Left') {
      this.#o.log('job.bad-payload', { jobId, problems: decoded.left.problems });
      await this.#settle(() =>
        state.failJob(db, lease, { error: `bad task payload: ${decoded.left.problems.join('; ')}`, retryable: false }),
      );
      return;
    }
    const payload = decoded.right;
    const started = await state
      .startJob(db, lease, { processHandle: `pid:${process.pid}@${hostname()}`.slice(0, 256) })
      .catch((error: unknown) => ({ _tag: 'Left' as const, left: messageOf(error) }));
    if (started._tag === 'Left') {
      this.#o.log('job.start-refused', { jobId, error: started.left });
      return;
    }
    this.#o.log('job.started', {
      jobId,
      taskId: active.taskId,
      attempt: lease.attempt,
      fenceToken: lease.token.toString(),
      owner: this.#o.owner,
      dir: payload.dir,
    });
    const beatEveryMs = Math.max(50, Math.floor(this.#o.leaseMs / 3));
    const beater = setInterval(() => {
      if (active.beating) return;
      active.beating = true;
      void this.#beat(active).finally(() => {
        active.beating = false;
      });
    }, beatEveryMs);
    let outcome: JobRunResult;
    try {
      outcome = await this.#repos.run(payload.dir, async () => {
        if (active.abort.signal.aborted) {
          return { kind: 'failed', result: null, error: 'stopped before it started', retryable: true } as const;
        }
        return this.#o.runJob({
          lease,
          payload,
          signal: active.abort.signal,
          approvals: this.#o.desk.channelFor({ jobId, taskId: active.taskId }, payload.approve, () =>
            this.#beat(active),
          ),
        });
      });
    } catch (error) {
      outcome = { kind: 'failed', result: null, error: `internal: ${messageOf(error)}`, retryable: true };
    } finally {
      clearInterval(beater);
      this.#o.desk.denyJob(jobId);
    }
    await this.#finish(active, outcome);
  }

  async #finish(active: Active, outcome: JobRunResult): Promise<void> {
    const { state, db } = this.#o;
    const lease = active.lease;
    const jobId = lease.jobId;
    const reason = active.reason;
    const base = { jobId, taskId: active.taskId, attempt: lease.attempt };
    if (reason === 'lease-lost' || reason === 'kill') {
      // Not ours to write any more (the database would refuse it anyway).
      this.#o.log('job.abandoned', { ...base, reason });
      return;
    }
    if (outcome.kind === 'succeeded') {
      this.#o.log('job.finished', { ...base, status: 'Completed', outcome: outcome.result.outcome });
      await this.#settle(() => state.completeJob(db, lease, { result: outcome.result }));
      return;
    }
    if (reason === 'cancel') {
      this.#o.log('job.finished', { ...base, status: 'Killed', outcome: 'cancelled' });
      await this.#settle(() => state.acknowledgeCancel(db, lease));
      return;
    }
    const retryable = reason === 'shutdown' || outcome.retryable;
    const error = reason === 'shutdown' ? 'the daemon stopped; requeued' : (this.#o.redact ?? String)(outcome.error);
    this.#o.log('job.finished', {
      ...base,
      status: retryable ? 'Retrying' : 'Failed',
      outcome: outcome.result?.outcome ?? 'error',
      error,
    });
    await this.#settle(() => state.failJob(db, lease, { error, retryable }));
  }

  async #settle(write: () => Promise<{ readonly _tag: 'Left' | 'Right'; readonly left?: unknown }>): Promise<void> {
    try {
      const written = await write();
      if (written._tag === 'Left') this.#o.log('job.settle-refused', { error: written.left });
    } catch (error) {
      this.#o.log('job.settle-error', { message: messageOf(error) });
    }
  }
}
