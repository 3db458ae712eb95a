/**
 * The pack's entry point for the CLI: `crustcore run --backend codex|claude`
 * calls `createBackend(name, context)`. Setup problems a user can fix (CLI
 * not installed, no API key or sign-in) throw `WorkerSetupError` with the fix, before
 * any task starts; everything after that is a value in `BackendResult`.
 */
import type { SandboxExecCap } from '@crustcore/sandbox';
import { type Redactor, SecretMaterial } from '@crustcore/secrets';
import type { CodingBackend } from '@crustcore/verify';
import { describeClaudeSignInProblem, readClaudeSignIn } from './cli/claude-sign-in.js';
import { locateWorkerCli, type WorkerCliName } from './cli/locate-cli.js';
import type { ModelBudget } from './proxy/budget.js';
import type { ModelRequestRecord } from './proxy/model-proxy.js';
import type { RequestPolicy } from './proxy/request-policy.js';
import type { ModelPricing, PriceForModel } from './proxy/usage.js';
import { CLAUDE_SPEC, CODEX_SPEC, WORKER_CLI_SPECS } from './run/cli-specs.js';
import {
  type WorkerBackendOptions,
  WorkerCliBackend,
  type WorkerMcpServer,
  type WorkerRunReport,
} from './run/worker-backend.js';

/** Codex CLI (`codex exec --json`) as a backend. */
export class CodexBackend extends WorkerCliBackend {
  constructor(options: WorkerBackendOptions) {
    super(CODEX_SPEC, options);
  }
}

/** Claude Code (`claude -p --output-format stream-json`) as a backend. */
export class ClaudeBackend extends WorkerCliBackend {
  constructor(options: WorkerBackendOptions) {
    super(CLAUDE_SPEC, options);
  }
}

/**
 * What the CLI passes. The first three match `PackBackendContext`; the rest
 * are optional and let the lead wire budgets, the ledger and the vault.
 */
export interface WorkersContext {
  /** Mints a `worker`-profile capability; its backend and limits bound every run. */
  readonly workerCap: () => SandboxExecCap;
  /** The user's environment: the key is read from OPENAI_API_KEY / ANTHROPIC_API_KEY unless `apiKey` is given. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly goal: string;
  /** The provider key from the secret store; overrides the environment. */
  readonly apiKey?: SecretMaterial | (() => SecretMaterial | Promise<SecretMaterial>);
  /** Provider origin; default `env.CRUSTCORE_<CODEX|CLAUDE>_UPSTREAM`, else the official API. */
  readonly upstream?: string;
  /** Model; default `env.CRUSTCORE_<CODEX|CLAUDE>_MODEL`, else the CLI's default. */
  readonly model?: string;
  readonly budget?: ModelBudget;
  readonly pricing?: ModelPricing | PriceForModel;
  readonly requestPolicy?: RequestPolicy;
  readonly maxModelRequests?: number;
  readonly redactor?: Redactor;
  readonly onModelRequest?: (record: ModelRequestRecord) => void;
  readonly onRunReport?: (report: WorkerRunReport) => void | Promise<void>;
  /** A specific native CLI executable instead of the installed package. */
  readonly cliExecutable?: string;
  /** The user's MCP servers the worker may use, through CrustCore's gateway (`run --mcp NAME`). */
  readonly mcpServers?: readonly WorkerMcpServer[];
}

/** A setup problem the user can fix; `fix` says how. */
export class WorkerSetupError extends Error {
  readonly _tag = 'WorkerSetupError';
  readonly fix: string;

  constructor(message: string, fix: string) {
    super(message);
    this.name = 'WorkerSetupError';
    this.fix = fix;
  }
}

/** The credential a run uses: an API key (the caller's, then the environment's), else the user's Claude Code sign-in. */
function credentialFrom(
  name: WorkerCliName,
  context: WorkersContext,
): Pick<WorkerBackendOptions, 'apiKey' | 'credential'> {
  if (context.apiKey !== undefined) return { apiKey: context.apiKey, credential: 'api-key' };
  const variable = WORKER_CLI_SPECS[name].keyVariable;
  const value = context.env[variable];
  const material = value === undefined || value === '' ? null : SecretMaterial.fromText(value);
  if (material !== null && material._tag === 'Right') return { apiKey: material.right, credential: 'api-key' };
  if (name === 'claude') return claudeSubscription(context);
  throw new WorkerSetupError(
    `the ${name} backend needs a model API key`,
    `export ${variable}=… or \`crustcore secret set ${variable}\` (it stays on the host: the worker only reaches the API through CrustCore's proxy; Codex's ChatGPT sign-in is not supported yet)`,
  );
}

/**
 * Most Claude Code users sign in with a subscription. Checked now, so a missing or expired
 * sign-in stops the task before it starts; read again when each run starts (Claude Code may
 * have refreshed it meanwhile).
 */
function claudeSubscription(context: WorkersContext): Pick<WorkerBackendOptions, 'apiKey' | 'credential'> {
  const signIn = readClaudeSignIn(context.env, Date.now());
  if (signIn._tag === 'Left') {
    const { message, fix } = describeClaudeSignInProblem(signIn.left);
    throw new WorkerSetupError(message, fix);
  }
  const current = (): SecretMaterial => {
    const again = readClaudeSignIn(context.env, Date.now());
    if (again._tag === 'Left') throw new Error(describeClaudeSignInProblem(again.left).message);
    return again.right.token;
  };
  return { apiKey: current, credential: 'claude-subscription' };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** `crustcore run --backend codex|claude`. Throws `WorkerSetupError` for a missing CLI or key. */
export async function createBackend(name: WorkerCliName, context: WorkersContext): Promise<CodingBackend> {
  if (name !== 'codex' && name !== 'claude') {
    throw new WorkerSetupError(`@crustcore/workers has no backend named ${String(name)}`, 'use codex or claude');
  }
  const located = locateWorkerCli(
    name,
    context.cliExecutable === undefined
      ? { ...optional('searchPath', context.env.PATH) }
      : { executable: context.cliExecutable },
  );
  if (located._tag === 'Left') throw new WorkerSetupError(located.left.message, located.left.fix);
  const prefix = `CRUSTCORE_${name.toUpperCase()}_`;
  const options: WorkerBackendOptions = {
    workerCap: context.workerCap,
    ...credentialFrom(name, context),
    cli: located.right,
    ...optional('upstream', context.upstream ?? context.env[`${prefix}UPSTREAM`]),
    ...optional('model', context.model ?? context.env[`${prefix}MODEL`]),
    ...optional('budget', context.budget),
    ...optional('pricing', context.pricing),
    ...optional('requestPolicy', context.requestPolicy),
    ...optional('maxModelRequests', context.maxModelRequests),
    ...optional('redactor', context.redactor),
    ...optional('onModelRequest', context.onModelRequest),
    ...optional('onRunReport', context.onRunReport),
    ...optional('mcpServers', context.mcpServers),
  };
  return name === 'codex' ? new CodexBackend(options) : new ClaudeBackend(options);
}
