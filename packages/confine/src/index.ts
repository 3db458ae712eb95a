/**
 * @crustcore/confine — worktree roots, confined paths, file-system
 * capabilities, structured file tools, and git with hooks and repository
 * config neutralized. See docs/confinement.md.
 */
export {
  type AppliedFile,
  type ApplyDiffError,
  applyHunks,
  applyUnifiedDiff,
  type DiffApplied,
  type DiffWriteFailed,
  type HunkFailure,
  type HunkMismatch,
  type PatchConflict,
  type UnsupportedPatch,
} from './apply-diff.js';
export { DEFAULT_FILE_MODE, EXECUTABLE_FILE_MODE } from './atomic-write.js';
export { type CapabilityError, FsReadCap, type FsReadCapOptions, FsWriteCap } from './capabilities.js';
export { ConfinedReadPath, ConfinedWritePath } from './confined-path.js';
export {
  type EditDiagnosis,
  type EditError,
  type EditLocateError,
  type EditLocation,
  type EditOutcome,
  type EditRequest,
  editText,
  lineSimilarity,
  locateEdit,
  MAX_DRIFT_LINES,
} from './edit-text.js';
export type { PathError, PathRefusal } from './errors.js';
export type { EntryKind } from './file-kind.js';
export {
  type GitBranch,
  type GitCommit,
  type GitDiff,
  type GitDiffOptions,
  type GitLogOptions,
  type GitStatus,
  type GitStatusEntry,
  type GitStatusKind,
  gitDiff,
  gitLog,
  gitStatus,
  parseLog,
  parseStatus,
} from './git-commands.js';
export { emptyGitHome, GIT_DIFF_SAFETY_ARGS, type GitEnvOptions, gitBaseArgs, gitEnv } from './git-env.js';
export {
  checkRevision,
  filterDriverNames,
  filterOverrideEnv,
  type GitError,
  type GitRunOptions,
  gitEnvForRoot,
} from './git-run.js';
export { compileGlob, type InvalidGlob } from './glob-pattern.js';
export {
  DEFAULT_SKIPPED_NAMES,
  type DirEntry,
  type DirListing,
  type GlobMatch,
  type GlobOptions,
  type GlobResult,
  glob,
  type ListDirOptions,
  listDir,
} from './list-files.js';
export {
  isProtectedComponents,
  MAX_COMPONENT_BYTES,
  MAX_PATH_BYTES,
  MAX_PATH_DEPTH,
  normalizeComponents,
  resolveReadPath,
  resolveWritePath,
} from './path-resolver.js';
export {
  type BinaryFile,
  DEFAULT_MAX_FILE_BYTES,
  type FileBytes,
  type FileTooLarge,
  type InvalidLineRange,
  type ReadTextError,
  type ReadTextOptions,
  readBytes,
  readText,
  type TextRead,
} from './read-file.js';
export { compileSearchPattern, DEFAULT_RIPGREP_PATH, ripgrepAvailable, search } from './search.js';
export type {
  InvalidPattern,
  SearchEngine,
  SearchError,
  SearchFailed,
  SearchMatch,
  SearchOptions,
  SearchResult,
} from './search-types.js';
export {
  type DiffLine,
  type DiffParseError,
  type FileChangeKind,
  type FilePatch,
  type Hunk,
  parseUnifiedDiff,
} from './unified-diff.js';
export {
  type GateError,
  type GateMode,
  type GateOptions,
  type GateSnapshot,
  MAX_GATE_WAITERS,
  WorktreeGate,
} from './worktree-gate.js';
export { WorktreeRoot } from './worktree-root.js';
export {
  deleteFile,
  type WriteError,
  type WriteOptions,
  type WriteOutcome,
  writeBytes,
  writeText,
} from './write-file.js';
