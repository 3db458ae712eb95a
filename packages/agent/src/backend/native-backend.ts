/**
 * `NativeAgentBackend`: CrustCore's own coding agent as a `CodingBackend`.
 * One instance serves one task; `run` is called once per attempt in the same
 * task worktree. The conversation carries over between attempts: a retry
 * starts with the verifier's diagnosis. The model saying it is done only ends
 * the attempt — the patch is then read from the worktree by verify's
 * `extractPatch`, exactly as for any other worker, and verified by CrustCore.
 */
import { createHash } from 'node:crypto';
import type { ModelProvider, ThinkingLevel } from '@crustcore/net';
import {
  BACKEND_LIMITS,
  type BackendContext,
  type BackendResult,
  type CodingBackend,
  type CommandRecord,
  extractPatch,
  type PatchOutcome,
  type WorkerInput,
} from '@crustcore/verify';
import { ContextWindow } from '../context/context-window.js';
import { buildSystemPrompt, type ProjectMemory, type PromptMode, readProjectMemory } from '../context/system-prompt.js';
import { type AgentEvent, type AgentEventSink, safeEmit } from '../loop/agent-events.js';
import { AgentLoop, type LoopOutcome, type SteeringSource } from '../loop/agent-loop.js';
import type { Session } from '../session/session.js';
import { rebuildContext } from '../session/session-context.js';
import { SessionStore, sessionsDirectory } from '../session/session-store.js';
import { WorktreeSnapshots } from '../session/worktree-snapshot.js';
import type { ToolGate } from '../tool-gate.js';
import { TOOL_NAMES, type ToolName } from '../tools/definitions.js';
import type { ExtraTools, ExtraToolsFactory } from '../tools/extra-tools.js';
import type { TodoItem } from '../tools/tool-args.js';
import { AgentWorkspace, type CommandProfile, type WorkspaceOptions } from '../tools/workspace.js';
import { diagnosisPrompt, taskPrompt } from './attempt-prompt.js';
import { SessionRecorder } from './session-recorder.js';

export interface NativeAgentOptions {
  readonly provider: ModelProvider;
  /** The model id sent in requests. */
  readonly model: string;
  /** `provider/model` for the session's model entry. */
  readonly modelLabel?: string;
  readonly gate: ToolGate;
  /** $CRUSTCORE_HOME: sessions live under it. Without it, nothing is persisted. */
  readonly home?: string;
  readonly onEvent?: AgentEventSink;
  readonly steering?: SteeringSource;
  /** A session id to continue, or 'latest'. */
  readonly resume?: string;
  /** Keep a session file (default true when `home` is set). */
  readonly sessions?: boolean;
  /** Snapshot the worktree at the end of every turn (default true when sessions are kept). */
  readonly snapshots?: boolean;
  readonly thinking?: ThinkingLevel;
  readonly maxTurnsPerAttempt?: number;
  readonly maxResponseTokens?: number;
  readonly compactionThresholdTokens?: number;
  readonly subagentMaxTurns?: number;
  readonly tools?: readonly ToolName[];
  readonly mode?: PromptMode;
  readonly scrub?: (text: string) => string;
  readonly sandboxCap?: WorkspaceOptions['sandboxCap'];
  /** PATH for the agent's commands in its worktree (the task environment's). */
  readonly pathFor?: WorkspaceOptions['pathFor'];
  /** Runs after every attempt (a recording provider saves here). */
  readonly afterAttempt?: () => Promise<void>;
  /** Route hints for a registry router; unset when the provider serves one model. */
  readonly routeRoles?: { readonly main?: string; readonly summarize?: string; readonly subagent?: string };
  /** Setup notes to report in the first attempt's transcript (a key that is not in the vault). */
  readonly notes?: readonly string[];
  /** Tools from outside the agent (the MCP gateway), built per attempt for its worktree. */
  readonly extraTools?: ExtraToolsFactory;
}

export const NATIVE_DEFAULTS = {
  maxTurnsPerAttempt: 40,
  maxResponseTokens: 8_192,
  compactionThresholdTokens: 100_000,
  subagentMaxTurns: 8,
  subagentMaxResponseTokens: 4_096,
} as const;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

interface TaskState {
  readonly workspace: AgentWorkspace;
  readonly window: ContextWindow;
  readonly todo: TodoItem[];
  readonly system: string;
  readonly recorder: SessionRecorder | null;
  readonly memory: readonly ProjectMemory[];
}

export class NativeAgentBackend implements CodingBackend {
  readonly name = 'native';
  readonly #options: NativeAgentOptions;
  readonly #commands: CommandRecord[] = [];
  #state: TaskState | null = null;
  #statePath: string | null = null;
  #problems: string[] = [];

  constructor(options: NativeAgentOptions) {
    this.#options = options;
    this.#problems.push(...(options.notes ?? []));
  }

  /** The session this backend writes, once the first attempt started (null without sessions). */
  get session(): Session | null {
    return this.#state?.recorder?.session ?? null;
  }

  #emit(event: AgentEvent): void {
    safeEmit(this.#options.onEvent, event);
  }

  #openSession(input: WorkerInput, context: BackendContext): { recorder: SessionRecorder | null; resumed: boolean } {
    const o = this.#options;
    if (o.home === undefined || o.sessions === false) return { recorder: null, resumed: false };
    const repoId = context.worktree.repo.repoId;
    const store = SessionStore.forRepository(o.home, repoId);
    let session: Session | null = null;
    let resumed = false;
    if (o.resume !== undefined) {
      const id = o.resume === 'latest' ? store.latestId() : o.resume;
      const opened = id === null ? null : store.open(id);
      if (opened !== null && opened._tag === 'Right') {
        session = opened.right.session;
        resumed = true;
      } else {
        this.#problems.push(`could not resume session ${o.resume}; starting a new one`);
      }
    }
    session ??= store.create({ repoId, cwd: context.worktree.repo.root });
    session.append({ type: 'session_info', goal: clip(input.goal, 2_000), taskId: input.taskId });
    session.append({
      type: 'model_change',
      provider: (o.modelLabel ?? o.model).split('/')[0] ?? 'model',
      model: o.model,
    });
    if (o.thinking !== undefined) session.append({ type: 'thinking_level_change', thinkingLevel: o.thinking });
    const snapshots =
      o.snapshots === false
        ? null
        : new WorktreeSnapshots(context.worktree, sessionsDirectory(o.home, repoId), session.id);
    const recorder = new SessionRecorder(session, snapshots, (message) => this.#problems.push(message));
    return { recorder, resumed };
  }

  #prepare(input: WorkerInput, context: BackendContext): { state: TaskState; resumed: boolean } | { error: string } {
    if (this.#state !== null && this.#statePath === context.worktree.path)
      return { state: this.#state, resumed: false };
    const o = this.#options;
    const opened = AgentWorkspace.open(context.worktree.path, {
      scope: `task:${input.taskId}`,
      ...(o.scrub === undefined ? {} : { scrub: o.scrub }),
      ...(o.sandboxCap === undefined ? {} : { sandboxCap: o.sandboxCap }),
      ...(o.pathFor === undefined ? {} : { pathFor: o.pathFor }),
      onCommand: (record) => this.#commands.push(record),
    });
    if (opened._tag === 'Left') return { error: `cannot open the worktree: ${opened.left.message}` };
    const workspace = opened.right;
    const tools = o.tools ?? TOOL_NAMES;
    const memory = readProjectMemory(workspace);
    const system = buildSystemPrompt({ mode: o.mode ?? 'task', toolNames: tools, memory });
    const window = new ContextWindow();
    const todo: TodoItem[] = [];
    const { recorder, resumed } = this.#openSession(input, context);
    if (resumed && recorder !== null) {
      const rebuilt = rebuildContext(recorder.session.pathTo());
      for (const { message, meta } of rebuilt.messages) window.append(message, meta);
      todo.push(...rebuilt.todo);
    }
    const state: TaskState = { workspace, window, todo, system, recorder, memory };
    this.#state = state;
    this.#statePath = context.worktree.path;
    return { state, resumed };
  }

  async run(input: WorkerInput, context: BackendContext): Promise<BackendResult> {
    const started = performance.now();
    const o = this.#options;
    const prepared = this.#prepare(input, context);
    if ('error' in prepared) return this.#result(null, { _tag: 'NoChanges' }, started, prepared.error, '');
    const { state } = prepared;
    context.onStarted?.();
    this.#emit({ type: 'attempt_start', attempt: input.attempt, sessionId: state.recorder?.session.id ?? null });
    const extraTools: ExtraTools | undefined = o.extraTools?.(context.worktree.path);
    try {
      return await this.#attempt(input, context, state, started, extraTools);
    } finally {
      await extraTools?.close?.();
    }
  }

  /** The agent loop of one attempt: the backend's settings, the task's state, this worktree's tools. */
  #loopFor(context: BackendContext, state: TaskState, extraTools: ExtraTools | undefined): AgentLoop {
    const o = this.#options;
    return new AgentLoop(
      {
        model: o.model,
        system: state.system,
        tools: o.tools ?? TOOL_NAMES,
        actor: 'agent',
        maxTurns: o.maxTurnsPerAttempt ?? NATIVE_DEFAULTS.maxTurnsPerAttempt,
        maxResponseTokens: o.maxResponseTokens ?? NATIVE_DEFAULTS.maxResponseTokens,
        compactionThresholdTokens: o.compactionThresholdTokens ?? NATIVE_DEFAULTS.compactionThresholdTokens,
        subagent: {
          maxTurns: o.subagentMaxTurns ?? NATIVE_DEFAULTS.subagentMaxTurns,
          maxResponseTokens: NATIVE_DEFAULTS.subagentMaxResponseTokens,
        },
        ...(o.routeRoles?.main === undefined ? {} : { role: o.routeRoles.main }),
        ...(o.routeRoles?.summarize === undefined ? {} : { summarizeRole: o.routeRoles.summarize }),
        ...(o.routeRoles?.subagent === undefined ? {} : { subagentRole: o.routeRoles.subagent }),
        ...(o.thinking === undefined ? {} : { thinking: o.thinking }),
        ...(state.recorder === null ? {} : { cacheKey: state.recorder.session.id }),
      },
      {
        provider: o.provider,
        gate: o.gate,
        workspace: state.workspace,
        window: state.window,
        todo: state.todo,
        ...(state.recorder === null ? {} : { recorder: state.recorder }),
        ...(o.steering === undefined ? {} : { steering: o.steering }),
        ...(o.onEvent === undefined ? {} : { onEvent: o.onEvent }),
        ...(context.signal === undefined ? {} : { signal: context.signal }),
        ...(extraTools === undefined ? {} : { extraTools }),
      },
    );
  }

  async #attempt(
    input: WorkerInput,
    context: BackendContext,
    state: TaskState,
    started: number,
    extraTools: ExtraTools | undefined,
  ): Promise<BackendResult> {
    const loop = this.#loopFor(context, state, extraTools);
    // Attempt 1 states the task (a resumed chat session gets the new request the same way);
    // a retry brings the verifier's diagnosis, with the task again if nothing was kept.
    if (input.attempt === 1) loop.addUserMessage(taskPrompt(input));
    else if (state.window.length === 0)
      loop.addUserMessage(`${taskPrompt(input)}\n\n${diagnosisPrompt(input.attempt, input.previousDiagnosis)}`);
    else loop.addUserMessage(diagnosisPrompt(input.attempt, input.previousDiagnosis));
    const outcome = await loop.run();
    this.#emit({
      type: 'attempt_end',
      outcome: outcome.kind,
      selfClaimedDone: outcome.kind === 'done',
      turns: outcome.turns,
      reason: outcome.reason,
    });
    const close = state.recorder?.session.flush({ sync: true });
    if (close !== undefined && close._tag === 'Left') this.#problems.push(close.left.message);
    await this.#options.afterAttempt?.().catch(() => undefined);
    const extracted = await extractPatch(context.worktree, {
      allowedRoots: input.allowedRoots,
      forbiddenPaths: input.forbiddenPaths,
      ...(context.home === undefined ? {} : { home: context.home }),
    });
    let patch: PatchOutcome;
    if (extracted._tag === 'Left') {
      patch =
        extracted.left._tag === 'PatchRejected'
          ? { _tag: 'Rejected', rejection: extracted.left }
          : { _tag: 'ExtractFailed', message: extracted.left.message };
    } else {
      patch = extracted.right === null ? { _tag: 'NoChanges' } : { _tag: 'Patch', patch: extracted.right };
    }
    const neverRan = outcome.kind === 'model-error' && outcome.toolCalls === 0 && outcome.turns <= 1;
    return this.#result(outcome, patch, started, neverRan ? outcome.reason : null, outcome.finalText);
  }

  #result(
    outcome: LoopOutcome | null,
    patch: PatchOutcome,
    started: number,
    failure: string | null,
    finalText: string,
  ): BackendResult {
    const lines = [
      `native agent: ${outcome === null ? 'did not start' : `${outcome.kind} after ${outcome.turns} turn(s), ${outcome.toolCalls} tool call(s)`}`,
      ...(outcome === null ? [] : [`reason: ${outcome.reason}`]),
      ...(outcome === null
        ? []
        : [
            `tokens: ${outcome.usage.inputTokens} in, ${outcome.usage.outputTokens} out; cost ${outcome.usage.costMicros} µ$`,
          ]),
      ...this.#problems.map((problem) => `note: ${problem}`),
      ...(finalText === '' ? [] : ['', finalText]),
    ];
    this.#problems = [];
    const transcript = `${lines.join('\n')}\n`;
    const commands = this.#commands.splice(0, this.#commands.length).slice(0, BACKEND_LIMITS.commands);
    return {
      backend: this.name,
      summary: clip(finalText, BACKEND_LIMITS.summaryChars),
      patch,
      selfClaimedDone: outcome?.kind === 'done',
      commandsRun: commands,
      risks: patch._tag === 'Patch' ? patch.patch.risks : [],
      workerRisks: [],
      exit: {
        exitCode: outcome === null ? null : outcome.kind === 'done' ? 0 : 1,
        signal: null,
        timedOut: outcome?.kind === 'turn-limit',
        cancelled: outcome?.kind === 'aborted',
        durationMs: Math.round(performance.now() - started),
      },
      failure,
      transcript: {
        stdoutText: transcript,
        stderrText: '',
        stdoutBytes: Buffer.byteLength(transcript),
        stderrBytes: 0,
        stdoutSha256: sha256(transcript),
        stderrSha256: sha256(''),
      },
    };
  }
}

export type { CommandProfile };
