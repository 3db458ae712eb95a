/**
 * Backends that live in packs (kept out of the nano bundle). Each loads its
 * pack only when asked for; a missing pack is an error that says what to do.
 */

import { DEFAULT_BUDGET } from '@crustcore/kernel';
import type { ToolGate } from '@crustcore/runtime';
import type { SandboxExecCap } from '@crustcore/sandbox';
import type { CodingBackend } from '@crustcore/verify';
import { UsageError } from '../cli/command.js';
import { requireFullBuild } from '../cli/edition.js';

export const PACK_BACKENDS: readonly string[] = ['codex', 'claude', 'native'];

export interface PackBackendContext {
  readonly workerCap: () => SandboxExecCap;
  /** PATH for the worker inside its worktree (the task environment's), or null. */
  readonly workerPathFor: ((worktreeRoot: string) => string) | null;
  readonly env: NodeJS.ProcessEnv;
  readonly goal: string;
  /** The kernel-mediated tool gate (native agent). */
  readonly toolGate: ToolGate;
  /** $CRUSTCORE_HOME. */
  readonly home: string;
  /** Extra options from the command line (e.g. --model, --replay FILE, --record FILE). */
  readonly options: Readonly<Record<string, string>>;
  /** Progress events from the backend (the native agent's turns and tool calls), for streaming output. */
  readonly onEvent?: (event: unknown) => void;
  /** Records an informational frame in the task's ledger (e.g. each model request a worker made). */
  readonly note: (kind: string, payload: Readonly<Record<string, unknown>>) => void;
  /** The user's repository: the native agent gets the MCP gateway of the servers allowed for it. */
  readonly repository?: string;
}

interface BackendFactoryModule {
  readonly createBackend?: (name: string, context: never) => Promise<CodingBackend>;
}

/**
 * Workers (Codex, Claude Code) get their model only through the credential
 * proxy. Their token use is charged to the kernel's budgets through the tool
 * gate's model-turn report; each request's worst case is reserved first (see
 * `kernelBudgetBridge`), and once a budget is spent the proxy refuses more.
 */
async function workersContext(name: string, context: PackBackendContext): Promise<Record<string, unknown>> {
  const pricing = await workerPricing(context);
  const apiKey = await vaultKeyFor(name, context);
  // Behind a guarded import, so nano (which refuses pack backends anyway) carries none of it.
  const mcpServers =
    (globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO !== true
      ? await (await import('./worker-mcp.js')).workerMcpServers(context)
      : undefined;
  return {
    ...(mcpServers === undefined ? {} : { mcpServers }),
    ...(pricing === undefined ? {} : { pricing }),
    ...(apiKey === undefined ? {} : { apiKey }),
    workerCap: context.workerCap,
    env: context.env,
    goal: context.goal,
    ...(context.options.model === undefined ? {} : { model: context.options.model }),
    // The CLIs' own default models are often newer than the registry: charge those at its highest price
    // rather than refuse them (pass --model with a priced model, or list it, for exact pricing).
    requestPolicy: { unknownModels: 'highest-price' },
    budget: kernelBudgetBridge(context),
    onModelRequest: (record: unknown) => context.note('model.request', { record }),
  };
}

/**
 * The proxy reserves each request's worst case against `remaining` before
 * forwarding it, so `remaining` must be known at once, not after the
 * kernel's asynchronous answer. `run` gives the kernel only a wall-time
 * limit, so the task's token and cost limits are the kernel's defaults:
 * mirrored here, charged synchronously; the kernel stays the authority
 * (its "stop" ends the worker).
 */
function kernelBudgetBridge(context: PackBackendContext): Record<string, unknown> {
  let stopped = false;
  let tokens = 0;
  let costMicros = 0;
  return {
    mayRequest: () => !stopped,
    remaining: () => ({
      tokens: Math.max(0, DEFAULT_BUDGET.tokens - tokens),
      costUsd: Math.max(0, DEFAULT_BUDGET.costMicros - costMicros) / 1_000_000,
    }),
    charge: (usage: { inputTokens?: number; outputTokens?: number; costUsd?: number }) => {
      const micros = Math.round((usage.costUsd ?? 0) * 1_000_000);
      tokens += (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
      costMicros += micros;
      void context.toolGate
        .modelTurn({ inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0, costMicros: micros })
        .then((answer) => {
          if (answer.stop) stopped = true;
        });
    },
  };
}

/**
 * A worker's provider key from the vault, when the environment does not have
 * it (`OPENAI_API_KEY` for Codex, `ANTHROPIC_API_KEY` for Claude Code, stored
 * under the same name with `crustcore secret set`). Opened only with a key
 * file (no prompt in the middle of a run); otherwise the pack reads the
 * environment and says what to set.
 */
async function vaultKeyFor(name: string, context: PackBackendContext): Promise<unknown> {
  try {
    const workers = await import('@crustcore/workers');
    const spec = (workers.WORKER_CLI_SPECS as Readonly<Record<string, { readonly keyVariable: string }>>)[name];
    if (spec === undefined || (context.env[spec.keyVariable] ?? '') !== '') return undefined;
    const secrets = await import('@crustcore/secrets');
    const { vault } = await secrets.openUnattendedVault(context.home, context.env);
    if (vault === null) return undefined;
    try {
      return (await secrets.vaultSecret(vault, spec.keyVariable)) ?? undefined;
    } finally {
      vault.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Prices for whatever model the worker's CLI ends up using, from the model
 * registry (`--models-config`, else the shipped example): the proxy reads
 * the model each request and response names (exact ids or dated snapshots)
 * and charges its price to the cost budget; a model the registry does not
 * price is charged at the registry's highest price.
 */
async function workerPricing(context: PackBackendContext): Promise<unknown> {
  try {
    const net = await import('@crustcore/net');
    const workers = await import('@crustcore/workers');
    const file = context.options.modelsConfig;
    const registry = file === undefined ? net.defaultRegistry() : await net.readRegistryFile(file);
    if (registry._tag === 'Left') return undefined;
    const entries = registry.right.providers.flatMap((provider) =>
      provider.models.flatMap((model) =>
        model.prices === undefined
          ? []
          : [
              [
                model.id,
                {
                  inputUsdPerMillion: model.prices.inputPerMillion,
                  outputUsdPerMillion: model.prices.outputPerMillion,
                  ...(model.prices.cacheReadPerMillion === undefined
                    ? {}
                    : { cachedInputUsdPerMillion: model.prices.cacheReadPerMillion }),
                },
              ] as const,
            ],
      ),
    );
    return workers.priceTable(entries);
  } catch {
    return undefined;
  }
}

/**
 * The native agent's context: the tool gate, plus the MCP gateway when servers are registered for this
 * repository. The gateway gets the task's gate and worker capability too: code mode's scripts run in a
 * sandbox of the task's kind, and each call they make is a kernel tool call through that gate.
 */
async function nativeContext(context: PackBackendContext): Promise<unknown> {
  // nano refuses pack backends (requireFullBuild); the guard lets its bundler drop the rest.
  if ((globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO === true || context.repository === undefined)
    return context;
  const gateway = await import('@crustcore/mcp-gateway');
  const extraTools = await gateway.registryGatewayFactory({
    home: context.home,
    env: context.env,
    repository: context.repository,
    gate: context.toolGate,
    workerCap: context.workerCap,
  });
  return extraTools === undefined ? context : { ...context, extraTools };
}

export async function loadPackBackend(name: string, context: PackBackendContext): Promise<CodingBackend> {
  requireFullBuild(`the ${name} backend`);
  const pack = name === 'native' ? '@crustcore/agent' : '@crustcore/workers';
  let module: BackendFactoryModule;
  try {
    // Literal specifiers: the bundle carries both packs, so they share the CLI's one kernel.
    module = (await (name === 'native'
      ? import('@crustcore/agent')
      : import('@crustcore/workers'))) as BackendFactoryModule;
  } catch {
    throw new UsageError(`the ${name} backend needs ${pack}, which is not installed here (npm install ${pack})`);
  }
  if (typeof module.createBackend !== 'function')
    throw new UsageError(`${pack} does not provide the ${name} backend yet`);
  const packContext: unknown = name === 'native' ? await nativeContext(context) : await workersContext(name, context);
  try {
    return await module.createBackend(name, packContext as never);
  } catch (error) {
    // A setup problem (missing CLI, missing key) carries its fix; show it as a usage error.
    const fix = (error as { fix?: unknown }).fix;
    if (typeof fix === 'string') throw new UsageError(`${(error as Error).message} — ${fix}`);
    throw error;
  }
}
