/**
 * @crustcore/agent — CrustCore's native coding agent: the agent loop over the
 * kernel's tool gate, its tools (confined files, sandboxed commands,
 * read-only subagents), context management, and tree-structured JSONL
 * sessions. See docs/agent.md and docs/sessions.md.
 */
export { diagnosisPrompt, taskPrompt } from './backend/attempt-prompt.js';
export {
  AgentSetupError,
  createBackend,
  createNativeBackend,
  type NativeBackendContext,
} from './backend/create-backend.js';
export { NATIVE_DEFAULTS, NativeAgentBackend, type NativeAgentOptions } from './backend/native-backend.js';
export { SessionRecorder } from './backend/session-recorder.js';
export {
  type CompactionOutcome,
  compactIfNeeded,
  renderTranscript,
  type Summarizer,
  summaryMessage,
} from './context/compaction.js';
export {
  CHARS_PER_TOKEN,
  ContextWindow,
  duplicateText,
  type MessageMeta,
  tombstoneText,
} from './context/context-window.js';
export {
  buildSystemPrompt,
  PROJECT_MEMORY_FILES,
  type ProjectMemory,
  type PromptMode,
  readProjectMemory,
} from './context/system-prompt.js';
export {
  INVARIANT_REMINDER,
  neutralizeDelimiters,
  onlyInsideWrappers,
  UNTRUSTED_CLOSE,
  UNTRUSTED_OPEN,
  wrapUntrusted,
} from './context/untrusted.js';
export { DEMO_MODEL, demoTrajectory, writeDemoTrajectory } from './demo/demo-trajectory.js';
export { type ScriptedTurn, scriptedTrajectory } from './demo/trajectory-script.js';
export type { AgentEvent, AgentEventSink } from './loop/agent-events.js';
export {
  AgentLoop,
  describeCall,
  type LoopDependencies,
  type LoopOutcome,
  type LoopOutcomeKind,
  type LoopSettings,
  type SteeringSource,
  type TurnRecorder,
} from './loop/agent-loop.js';
export { callKey, DEFAULT_REPEAT_LIMIT, RepeatGuard } from './loop/repeat-guard.js';
export { type AgentCheck, nativeAgentChecks } from './model/agent-checks.js';
export { type ModelOptions, type ModelSetup, type ModelSetupError, setupModel } from './model/model-setup.js';
export {
  type MessageEntry,
  type NewEntry,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionEntryType,
  type SessionHeader,
  SNAPSHOT_CUSTOM_TYPE,
  TODO_CUSTOM_TYPE,
} from './session/entries.js';
export { migrateSession, type RawSession } from './session/migrate.js';
export { Session, type SessionClock, type SessionError } from './session/session.js';
export { type RebuiltContext, rebuildContext } from './session/session-context.js';
export {
  type LoadReport,
  SessionStore,
  type SessionSummary,
  sessionsDirectory,
} from './session/session-store.js';
export {
  type RestoreReport,
  type Snapshot,
  type SnapshotError,
  type SnapshotWorktree,
  WorktreeSnapshots,
} from './session/worktree-snapshot.js';
export type { ModelUsage, ToolCallOutcome, ToolCallRequest, ToolExecution, ToolGate } from './tool-gate.js';
export { isToolName, READ_ONLY_TOOLS, TOOL_NAMES, type ToolName, toolDefinitions } from './tools/definitions.js';
export type { ExtraToolPlan, ExtraToolPlanned, ExtraTools, ExtraToolsFactory } from './tools/extra-tools.js';
export { decodeArgs, type TodoItem } from './tools/tool-args.js';
export { AgentWorkspace, type CommandProfile, type WorkspaceOptions } from './tools/workspace.js';
