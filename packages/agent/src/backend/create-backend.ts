/**
 * The pack's entry point for the CLI: `crustcore run --backend native` calls
 * `createBackend('native', context)` with the runtime's tool gate. The
 * context is declared here structurally (packs never import the CLI); the
 * CLI's `PackBackendContext` fits it. Problems a user can fix (a bad
 * `--replay` file, an unknown model) throw `AgentSetupError` before the task
 * starts; everything after that is a value in the `BackendResult`.
 */
import { err, ok } from '@crustcore/kernel';
import type { ThinkingLevel, Trajectory } from '@crustcore/net';
import { mintSandboxExecCap, type SandboxExecCap } from '@crustcore/sandbox';
import type { CodingBackend } from '@crustcore/verify';
import type { AgentEventSink } from '../loop/agent-events.js';
import type { SteeringSource } from '../loop/agent-loop.js';
import { setupModel } from '../model/model-setup.js';
import type { ToolGate } from '../tool-gate.js';
import type { ExtraToolsFactory } from '../tools/extra-tools.js';
import type { WorkspaceOptions } from '../tools/workspace.js';
import { NativeAgentBackend } from './native-backend.js';

/** What the CLI passes (a superset of the fields used is fine). */
export interface NativeBackendContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly goal: string;
  /** The kernel-mediated tool gate: the agent's only way to act. */
  readonly toolGate: ToolGate;
  /** $CRUSTCORE_HOME. */
  readonly home: string;
  /**
   * From the command line: `model` (provider/model or model id), `replay`
   * FILE, `record` FILE, `modelsConfig` FILE, `resume` (session id or
   * `latest`), `thinking` (off|low|medium|high), `maxTurns` (per attempt).
   */
  readonly options: Readonly<Record<string, string>>;
  /** Progress for a REPL or `--output-format stream-json`. */
  readonly onEvent?: AgentEventSink;
  /** Messages typed while the agent works (the REPL's `!` steering). */
  readonly steering?: SteeringSource;
  /** A trajectory to replay, given directly instead of `options.replay`. */
  readonly trajectory?: Trajectory;
  /**
   * The task's worker capability. The agent's commands run in `build`/`verify`
   * capabilities of their own; from this one they take the task environment's
   * binds (the user's node_modules, venv and toolchain), so `npm test` finds
   * what the tests will.
   */
  readonly workerCap?: () => SandboxExecCap;
  /** PATH for commands inside the worktree (dependency bins, toolchain), or null. */
  readonly workerPathFor?: ((worktreeRoot: string) => string) | null;
  /** Tools from outside the agent (the MCP gateway's), built per attempt. */
  readonly extraTools?: ExtraToolsFactory;
}

/** Capabilities for the agent's commands that carry the task environment's binds. */
function environmentCaps(context: NativeBackendContext): WorkspaceOptions['sandboxCap'] | undefined {
  if (context.workerCap === undefined) return undefined;
  let environment: SandboxExecCap['environment'];
  try {
    environment = context.workerCap().environment;
  } catch {
    // No worker capability here (no sandbox): the workspace mints its own and says why it cannot.
    return undefined;
  }
  return (profile) => {
    const minted = mintSandboxExecCap(profile, { environment });
    return minted._tag === 'Left' ? err(minted.left.message) : ok(minted.right);
  };
}

/** A setup problem the user can fix; `fix` says how. */
export class AgentSetupError extends Error {
  readonly _tag = 'AgentSetupError';
  readonly fix: string;

  constructor(message: string, fix: string) {
    super(message);
    this.name = 'AgentSetupError';
    this.fix = fix;
  }
}

const THINKING: readonly ThinkingLevel[] = ['off', 'low', 'medium', 'high'];

function thinkingOption(value: string | undefined): ThinkingLevel | undefined {
  if (value === undefined) return undefined;
  if ((THINKING as readonly string[]).includes(value)) return value as ThinkingLevel;
  throw new AgentSetupError(`--thinking ${value} is not a thinking level`, `use one of ${THINKING.join(', ')}`);
}

function turnsOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const turns = Number(value);
  if (!Number.isSafeInteger(turns) || turns < 1 || turns > 1_000)
    throw new AgentSetupError(`maxTurns ${value} is out of range`, 'use an integer from 1 to 1000');
  return turns;
}

/** Builds the native agent for a task. */
export async function createNativeBackend(context: NativeBackendContext): Promise<NativeAgentBackend> {
  const o = context.options;
  const model = await setupModel({
    home: context.home,
    env: context.env,
    ...(o.model === undefined ? {} : { model: o.model }),
    ...(o.replay === undefined ? {} : { replay: o.replay }),
    ...(o.record === undefined ? {} : { record: o.record }),
    ...(o.modelsConfig === undefined ? {} : { modelsConfig: o.modelsConfig }),
    ...(context.trajectory === undefined ? {} : { trajectory: context.trajectory }),
  });
  if (model._tag === 'Left') {
    throw new AgentSetupError(
      model.left.message,
      model.left.fix ?? 'check --replay / --models-config / --model (crustcore models lists the registry)',
    );
  }
  const setup = model.right;
  const thinking = thinkingOption(o.thinking);
  const maxTurns = turnsOption(o.maxTurns);
  const sandboxCap = environmentCaps(context);
  return new NativeAgentBackend({
    provider: setup.provider,
    model: setup.model,
    modelLabel: setup.label,
    gate: context.toolGate,
    home: context.home,
    scrub: setup.scrub,
    afterAttempt: setup.save,
    notes: setup.warnings,
    routeRoles: setup.routeRoles,
    ...(sandboxCap === undefined ? {} : { sandboxCap }),
    ...(context.workerPathFor === undefined || context.workerPathFor === null
      ? {}
      : { pathFor: context.workerPathFor }),
    ...(context.onEvent === undefined ? {} : { onEvent: context.onEvent }),
    ...(context.steering === undefined ? {} : { steering: context.steering }),
    ...(o.resume === undefined ? {} : { resume: o.resume }),
    ...(thinking === undefined ? {} : { thinking }),
    ...(maxTurns === undefined ? {} : { maxTurnsPerAttempt: maxTurns }),
    ...(context.extraTools === undefined ? {} : { extraTools: context.extraTools }),
  });
}

/** `crustcore run --backend native`: the one backend this pack provides. */
export async function createBackend(name: string, context: NativeBackendContext): Promise<CodingBackend> {
  if (name !== 'native') {
    throw new AgentSetupError(`@crustcore/agent has no backend named ${JSON.stringify(name)}`, 'use --backend native');
  }
  return createNativeBackend(context);
}
