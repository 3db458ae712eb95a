/**
 * @crustcore/verify — worktree per task, backend contract, sandboxed verify
 * that mints VerifiedPatch, failure classifier, and the crash-safe apply journal.
 * See docs/backend-contract.md, docs/worktrees.md and docs/apply-journal.md.
 */

// The character table and lossless decoding live in @crustcore/safe-text (a leaf the CLI loads at start-up).
export {
  CHARACTER_CONCERNS,
  type CharacterConcern,
  concernOf,
  declaredNonUtf8Encoding,
  decodeBytes,
  type EscapedText,
  type EscapeFormat,
  type EscapeOptions,
  escapeConcerns,
  escapeForPerson,
  escapeHiding,
  HIDING_CONCERNS,
  visibleEscape,
} from '@crustcore/safe-text';
export {
  type ApplyVerifiedOptions,
  applyVerifiedPatch,
  type CommitOptions,
  type CommitReceipt,
  commitVerifiedPatch,
  type IntegrateError,
  planVerifiedChanges,
} from './apply.js';
export {
  type Argv,
  type ArgvError,
  type ArgvErrorReason,
  MAX_ARGV_WORDS,
  MAX_COMMAND_CHARS,
  quoteArgv,
  splitArgv,
} from './argv.js';
export {
  BACKEND_LIMITS,
  type BackendContext,
  type BackendResult,
  type CodingBackend,
  type CommandRecord,
  decodeWorkerClaim,
  type PatchOutcome,
  type PriorObservation,
  type Transcript,
  type WorkerClaim,
  WorkerClaimCodec,
  type WorkerInput,
  workerRunHooks,
} from './backend.js';
export { type DetectedVerifyCommand, detectVerifyCommand } from './detect.js';
export {
  DIAGNOSIS_LIMITS,
  type Diagnosis,
  diagnoseFailure,
  type EnvironmentCause,
  type ErrorLocation,
  type FailedRun,
  type FailureKind,
  type FirstFailure,
} from './diagnosis.js';
export {
  commitTree,
  copyExtraFiles,
  DEFAULT_NPM_REGISTRY,
  defaultSetupArgv,
  dependencyFiles,
  dependencyRisk,
  detectEcosystems,
  directoryTree,
  type Ecosystem,
  type EcosystemKind,
  type EcosystemReport,
  ENVIRONMENT_CONFIG_PATH,
  type EnvironmentConfig,
  type EnvironmentContext,
  type EnvironmentError,
  type EnvironmentMode,
  type ExtraFilesReport,
  environmentForWorktree,
  environmentsDir,
  originOf,
  PROGRESS_AFTER_MS,
  type PreparedEnvironment,
  type PrepareEnvironmentOptions,
  type ProgressEvent,
  type ProgressSink,
  type ProxyOrigin,
  prepareEnvironment,
  type RegistryProxy,
  type RunEnvironment,
  readEnvironmentConfig,
  resolveToolchain,
  runSetup,
  runSetupSandbox,
  type SetupError,
  type SetupRequest,
  type SetupResult,
  type SetupSandboxResult,
  type SetupSandboxRun,
  setupKey,
  startRegistryProxy,
  type Toolchain,
  userNpmRegistry,
  withProgress,
} from './environment/index.js';
export { baselineBlocker, type EnvironmentBlocker } from './environment-blocker.js';
export { ExternalCommandBackend, type ExternalCommandBackendOptions, workerStdin } from './external-backend.js';
export { classifyPath, type FileClass } from './file-class.js';
export { configListingsStarted, discoverRepository, type GitFailure, type GitLocation, runGitAt } from './git.js';
export { crustcoreHome, journalDir, patchesDir, worktreesDir } from './home.js';
export { type IntegrityFile, type IntegrityInput, integrityRisks } from './integrity.js';
export {
  type ApplyError,
  type ApplyOptions,
  type ApplyReceipt,
  applyChanges,
  type DriftedFile,
  type FileChange,
  type FileContent,
  type FileImage,
  type FileMode,
  type JournalState,
  MAX_BATCH_FILES,
  type ObservedFile,
  type RecoveredJournal,
  type RecoveryError,
  type RecoveryOptions,
  readJournal,
  recoverJournals,
  type StepHook,
} from './journal/apply-journal.js';
export type { JournalRecord } from './journal/record.js';
export {
  type ChangedFile,
  type ChangeStatus,
  DEFAULT_MAX_PATCH_BYTES,
  DEFAULT_MAX_PATCH_FILES,
  type ExtractError,
  type ExtractOptions,
  extractPatch,
  type PatchRejection,
  type PatchRejectionReason,
  symlinkEscapes,
  type UnverifiedPatch,
} from './patch.js';
export {
  CONTENT_RULES,
  type ContentRule,
  PATH_RULES,
  type PathRiskKind,
  type PathRule,
  pathRulesFor,
} from './patch-kinds.js';
export {
  exportPatch,
  loadPatchRecord,
  type PatchRecord,
  type PatchStoreError,
  type StoredPatch,
  savePatchRecord,
} from './patch-store.js';
export {
  describeViewConcerns,
  type FileView,
  type PatchView,
  patchViewRisks,
  type ViewConcern,
  viewPatch,
} from './patch-view/patch-view.js';
export {
  ambiguousPathProblem,
  foldPath,
  foldSegment,
  hasGitDirComponent,
  isGitDirName,
} from './path-fold.js';
export {
  HUMAN_REVIEW_RISK_KINDS,
  mergeRisks,
  needsApproval,
  RISK_MEANING,
  RISK_SEVERITY,
  type Risk,
  type RiskKind,
  type RiskSeverity,
} from './risk.js';
export { escapingLinks, type LinkResolution, resolveInTree } from './symlink-chain.js';
export {
  parseTestCounts,
  type ReportedFailure,
  reportedFailures,
  type TestCounts,
  type TestRunner,
} from './test-counts.js';
export { isDiscoveredTest } from './test-discovery.js';
export { gitTreeReader, type TreeFile, type TreeReader } from './tree-reader.js';
export { VerifiedPatch, type VerifyEvidence } from './verified-patch.js';
export {
  type BaselineRun,
  runBaselineVerify,
  type VerifyError,
  type VerifyOutcome,
  type VerifyRequest,
  type VerifyRun,
  verifyPatch,
} from './verify-patch.js';
export {
  type CreateWorktreeOptions,
  createTaskWorktree,
  type GcReport,
  gcWorktrees,
  objectStoreDir,
  openRepository,
  type Repository,
  removeObjectStore,
  removeTaskWorktree,
  repositoryLocation,
  resolveCommit,
  type TaskWorktree,
  type WorktreeError,
  type WorktreePurpose,
  withTaskWorktree,
  worktreeLocation,
} from './worktree.js';
