/**
 * What the daemon answers on its admin socket. Each request is already
 * decoded (admin-protocol.ts); each answer is a value, never a throw.
 */
import type { Json } from '@crustcore/kernel';
import type { Db } from '@crustcore/state';
import { type AdminReply, type AdminRequest, adminError, adminOk } from './admin-protocol.js';
import type { AdminHandler } from './admin-server.js';
import type { ApprovalDesk, PendingApproval, ResolveOutcome } from './approval-desk.js';
import { countTaskJobs, describeJob, enqueueTaskJob, findJobs, newestTaskJobs } from './queue.js';
import type { StatePlane, Supervisor } from './supervisor.js';

export interface DaemonHandlerOptions {
  readonly state: StatePlane;
  readonly db: Db;
  readonly supervisor: Supervisor;
  readonly desk: ApprovalDesk;
}

const pendingJson = (approval: PendingApproval): Json => ({
  ...approval,
  files: approval.files.map((f) => ({ ...f })),
});

type Handlers = {
  readonly [Op in AdminRequest['op']]: (request: Extract<AdminRequest, { op: Op }>) => Promise<AdminReply>;
};

/** The newest live job for a task or job id (else the newest one), or a not-found reply. */
async function oneJob(options: DaemonHandlerOptions, id: string): Promise<AdminReply | { readonly jobId: string }> {
  const jobs = await findJobs(options.state, options.db, id);
  const live = jobs.filter((job) => !['Completed', 'Failed', 'Killed'].includes(job.status));
  const job = live[live.length - 1] ?? jobs[jobs.length - 1];
  if (job === undefined) return adminError('not-found', `no task job ${id}`);
  return { jobId: job.id };
}

/** status, tasks, enqueue, pause, resume: the queue and the daemon itself. */
function queueHandlers(
  options: DaemonHandlerOptions,
): Pick<Handlers, 'status' | 'tasks' | 'enqueue' | 'pause' | 'resume'> {
  const { state, db, supervisor, desk } = options;
  return {
    status: async () => adminOk({ ...(supervisor.status() as Record<string, Json>), jobs: await countTaskJobs(db) }),
    tasks: async (request) => {
      const pending = new Set(desk.list().map((approval) => approval.jobId));
      const jobs = await newestTaskJobs(state, db, request.limit ?? 50);
      return adminOk({ tasks: jobs.map((job) => describeJob(job, pending.has(job.id))) });
    },
    enqueue: async (request) => {
      const enqueued = await enqueueTaskJob(state, db, request.task);
      return enqueued._tag === 'Left' ? adminError('refused', enqueued.left) : adminOk({ ...enqueued.right });
    },
    pause: async () => {
      supervisor.pause();
      return adminOk({ paused: true });
    },
    resume: async () => {
      supervisor.resume();
      return adminOk({ paused: false });
    },
  };
}

/**
 * cancel and kill: the job row first (the database is the authority on jobs),
 * then the run here, whose abort the runtime records as TaskCancelled or
 * TaskKilled in the task's ledger.
 */
function stopHandlers(options: DaemonHandlerOptions): Pick<Handlers, 'cancel' | 'kill'> {
  const { state, db, supervisor } = options;
  return {
    cancel: async (request) => {
      const found = await oneJob(options, request.id);
      if (!('jobId' in found)) return found;
      const cancelled = await state.cancelJob(db, found.jobId as never);
      if (cancelled._tag === 'Left') return adminError('refused', JSON.stringify(cancelled.left));
      // Here already: stop now rather than at the next heartbeat.
      const local = cancelled.right.status !== 'Killed' && supervisor.abortLocal(found.jobId, 'cancel');
      return adminOk({ jobId: found.jobId, status: cancelled.right.status, stoppingHere: local });
    },
    kill: async (request) => {
      const found = await oneJob(options, request.id);
      if (!('jobId' in found)) return found;
      const killed = await state.killJob(db, found.jobId as never, 'killed by an administrator');
      if (killed._tag === 'Left') return adminError('conflict', JSON.stringify(killed.left));
      const local = supervisor.abortLocal(found.jobId, 'kill');
      return adminOk({ jobId: found.jobId, status: killed.right.status, stoppingHere: local });
    },
  };
}

const resolvedReply = (outcome: ResolveOutcome, id: string): AdminReply => {
  if (outcome._tag === 'NoPendingApproval') return adminError('not-found', `nothing waits for approval under ${id}`);
  if (outcome._tag === 'ApprovalChanged') return adminError('conflict', outcome.message);
  return adminOk({
    approvalId: outcome.approval.approvalId,
    taskId: outcome.approval.taskId,
    decision: outcome.decision,
  });
};

function approvalHandlers(desk: ApprovalDesk): Pick<Handlers, 'approvals' | 'approve' | 'deny'> {
  return {
    approvals: async () => adminOk({ approvals: desk.list().map(pendingJson) }),
    approve: async (request) =>
      resolvedReply(
        desk.resolve(request.id, { approvalId: request.approvalId, opHash: request.opHash }, true),
        request.id,
      ),
    deny: async (request) =>
      resolvedReply(
        desk.resolve(request.id, request.approvalId === undefined ? {} : { approvalId: request.approvalId }, false),
        request.id,
      ),
  };
}

export function daemonAdminHandler(options: DaemonHandlerOptions): AdminHandler {
  const notMcp = async (): Promise<AdminReply> =>
    adminError('unsupported', 'this is a daemon socket; MCP tokens come from "crustcore mcp-token"');
  const handlers: Handlers = {
    ...queueHandlers(options),
    ...stopHandlers(options),
    ...approvalHandlers(options.desk),
    'mcp-describe': notMcp,
    'mcp-token': notMcp,
  };
  return (request) => (handlers[request.op] as (r: AdminRequest) => Promise<AdminReply>)(request);
}
