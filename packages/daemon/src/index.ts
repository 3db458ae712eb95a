/**
 * @crustcore/daemon: the long-running host for queued tasks. It claims task
 * jobs from the state plane (leases fenced by the database), runs each one
 * through @crustcore/runtime, keeps its lease alive, settles it, and answers
 * the admin socket (status, enqueue, pause, cancel, kill, approvals). The CLI
 * only parses arguments and renders replies; see docs/daemon.md.
 */
export { type AdminCallError, type AdminCallResult, callAdmin } from './admin-client.js';
export {
  ADMIN_ERROR_CODES,
  ADMIN_LIMITS,
  type AdminError,
  type AdminErrorCode,
  type AdminOp,
  type AdminReply,
  type AdminRequest,
  AdminRequestC,
  adminError,
  adminOk,
  decodeAdminReply,
  decodeAdminRequest,
  encodeAdminReply,
} from './admin-protocol.js';
export {
  type AdminHandler,
  type AdminServer,
  AdminSocketError,
  MAX_SOCKET_PATH_BYTES,
  startAdminServer,
} from './admin-server.js';
export {
  APPROVAL_LIMITS,
  ApprovalDesk,
  type ApprovalDeskOptions,
  type JobIdentity,
  type PendingApproval,
  type ResolveOutcome,
} from './approval-desk.js';
export { type DaemonHandlerOptions, daemonAdminHandler } from './daemon-handler.js';
export { describeDecodeErrors } from './decode-errors.js';
export { type DaemonHost, type DaemonHostOptions, openDaemonHost } from './host.js';
export { KeyedQueue } from './keyed-queue.js';
export { ledgerIdFor, ledgerSummaries, type MirrorSync, syncLedgerMirror } from './ledger-mirror-sync.js';
export { adminSocketPath, daemonStateDir, mcpSocketDir, mcpStateDir, pgliteDataDir } from './paths.js';
export {
  countTaskJobs,
  describeJob,
  type Enqueued,
  enqueueTaskJob,
  findJobs,
  newestTaskJobs,
  TASK_RETRY_POLICY,
} from './queue.js';
export {
  type BackendLoader,
  type BackendRequest,
  runTaskJob,
  runtimeTaskId,
  stoppableBackend,
  type TaskJobContext,
} from './run-job.js';
export { loadStatePlane, type OpenedState, openState, StateOpenError } from './state-access.js';
export {
  type AbortReason,
  abortReasonFor,
  defaultOwnerName,
  type JobRunner,
  type JobRunResult,
  type RunningJob,
  type StatePlane,
  Supervisor,
  type SupervisorLog,
  type SupervisorOptions,
} from './supervisor.js';
export {
  type ApproveMode,
  ApproveModeC,
  decodeTaskJobPayload,
  PackBackendC,
  type PackBackendName,
  type PayloadProblem,
  TASK_JOB_KIND,
  TASK_JOB_LIMITS,
  type TaskJobPayload,
  TaskJobPayloadC,
  type TaskJobResult,
  taskJobPayloadJson,
} from './task-job.js';
