/**
 * @crustcore/sandbox — the one process runner, the bubblewrap and process-jail
 * backends, the environment sanitizer, resource limits and command policy.
 */
export { type BubblewrapPlan, bubblewrapArgv } from './backend/bubblewrap-argv.js';
export {
  mintSandboxExecCap,
  type SandboxCapError,
  type SandboxCapOptions,
  SandboxExecCap,
} from './capability/sandbox-exec-cap.js';
export {
  type DroppedEnvVar,
  type EnvContext,
  type EnvDropReason,
  isDangerousEnvName,
  type SanitizedEnv,
  sanitizeEnvironment,
} from './env/sanitize-env.js';
export { looksLikeSecretName, looksLikeSecretValue } from './env/secret-shape.js';
export {
  type EnvironmentBinds,
  type EnvironmentBindsRequest,
  MAX_ENVIRONMENT_BINDS,
} from './mount/environment-bind.js';
export {
  type BindMode,
  type ExtraBind,
  type ExtraBindRequest,
  MAX_EXTRA_BINDS,
  SANDBOX_HOME,
} from './mount/extra-bind.js';
export { defaultSandboxPath, ETC_ENTRIES } from './mount/host-layout.js';
export { scriptNodeBinary } from './mount/node-binary.js';
export { isInside } from './mount/path-shape.js';
export { resolveWorkerProgram, type WorkerHost, type WorkerProgram } from './mount/worker-program.js';
export { shellUse } from './policy/shell-detection.js';
export {
  argvHash,
  classifyVerifyCommand,
  decideSandboxCommand,
  type SandboxCommandDecision,
  type TestRunnerKind,
  type VerifyCommandClass,
} from './policy/verify-command.js';
export {
  type BackendStatus,
  diagnoseBubblewrapFailure,
  probeSandbox,
  readUserNamespaceSwitches,
  type SandboxProbe,
  type SandboxProblem,
  type UserNamespaceSwitches,
} from './probe/probe-sandbox.js';
export {
  type EnvironmentPolicy,
  isSandboxProfileName,
  type ResourceLimits,
  SANDBOX_PROFILE_NAMES,
  SANDBOX_PROFILES,
  type SandboxBackendKind,
  type SandboxProfile,
  type SandboxProfileName,
  SETUP_PROXY_PORT,
} from './profile/sandbox-profile.js';
export {
  type MemoryLimitEnforcement,
  type ProcessLimitEnforcement,
  runSandboxed,
  type SandboxedResult,
  type SandboxIsolation,
  type SandboxRefusal,
  type SandboxRunSpec,
} from './run-sandboxed.js';
export type { CapturedStream } from './runner/captured-stream.js';
export { runTrustedHostCommand } from './runner/host-command.js';
export {
  KILL_GRACE_MS,
  type ProcessResult,
  type ProcessSpec,
  type ProcessStartError,
  type ProcessStartFailure,
  type RunObserver,
} from './runner/process-runner.js';
export { resolveProgram } from './runner/resolve-program.js';
export { seccompProgram } from './seccomp/seccomp-filter.js';
export { type ArgCondition, ERRNO, SECCOMP_RULES, type SeccompRule } from './seccomp/seccomp-policy.js';
export {
  type FilterArch,
  type FilteredSyscall,
  SYSCALL_NUMBERS,
  syscallNumber,
} from './seccomp/syscall-numbers.js';
