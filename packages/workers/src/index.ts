/**
 * @crustcore/workers — Codex CLI and Claude Code as untrusted patch
 * producers. Each runs in the sandbox `worker` profile with its own
 * throwaway HOME and no network; it reaches its model only through a host
 * proxy that holds the key, and its result is whatever git sees in the
 * worktree. See docs/workers.md.
 */
export { BRIDGE_SCRIPT_PATH, MCP_BRIDGE_SCRIPT_PATH } from './bridge-script.js';
export {
  CLAUDE_OAUTH_BETA,
  type ClaudeSignIn,
  type ClaudeSignInProblem,
  claudeSignInPath,
  describeClaudeSignInProblem,
  readClaudeSignIn,
} from './cli/claude-sign-in.js';
export {
  type LocateOptions,
  locateWorkerCli,
  WORKER_CLI_INSTALL,
  type WorkerCli,
  type WorkerCliMissing,
  type WorkerCliName,
} from './cli/locate-cli.js';
export { type ProbeOptions, probeWorkerClis, type WorkerCliStatus } from './cli/probe-clis.js';
export {
  ClaudeBackend,
  CodexBackend,
  createBackend,
  WorkerSetupError,
  type WorkersContext,
} from './create-backend.js';
export {
  type BoundedModelBudget,
  type BudgetHeadroom,
  bothBudgets,
  boundedModelBudget,
  type ModelBudget,
  type ModelBudgetLimits,
  tighterHeadroom,
} from './proxy/budget.js';
export {
  type ModelCredentialKind,
  type ModelProxy,
  type ModelProxyError,
  type ModelProxyOptions,
  type ModelRequestRecord,
  startModelProxy,
} from './proxy/model-proxy.js';
export {
  type AdmittedRequest,
  admitBody,
  checkEndpoint,
  DEFAULT_INPUT_BYTES_PER_TOKEN,
  DEFAULT_MAX_OUTPUT_TOKENS,
  MAX_REQUEST_BODY_BYTES,
  type PolicyRefusal,
  type RequestPolicy,
} from './proxy/request-policy.js';
export {
  chargeFor,
  type Reservation,
  ReservationPool,
  type ReservationTicket,
  type ReserveOutcome,
  reservationFor,
} from './proxy/reservation.js';
export {
  addUsage,
  dearerPricing,
  type ModelPricing,
  type ModelUsage,
  type ModelWire,
  matchModelId,
  type ObservedUsage,
  type PriceForModel,
  type PriceTable,
  priceTable,
  priceUsage,
  UsageMeter,
  ZERO_USAGE,
} from './proxy/usage.js';
export {
  CLAUDE_SPEC,
  CODEX_KEY_VARIABLE,
  CODEX_SPEC,
  PLACEHOLDER_API_KEY,
  WORKER_CLI_SPECS,
  type WorkerCliSpec,
  type WorkerMcpCommand,
  type WorkerSetup,
} from './run/cli-specs.js';
export {
  DEFAULT_MAX_MODEL_REQUESTS,
  SANDBOX_LAYOUT,
  type WorkerBackendOptions,
  WorkerCliBackend,
  type WorkerMcpServer,
  type WorkerRunReport,
} from './run/worker-backend.js';
export { readClaudeEvents, readCodexEvents, type WorkerActivity } from './run/worker-events.js';
export { workerPrompt } from './run/worker-prompt.js';
