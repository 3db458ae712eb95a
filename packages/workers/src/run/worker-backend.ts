/**
 * A worker CLI as a `CodingBackend`. One run:
 *
 *  1. a throwaway HOME (host temp dir) with only the config CrustCore writes;
 *  2. the model proxy on the host: a worker-facing Unix socket (metered, no
 *     key) in front of the key-holding credential proxy;
 *  3. the CLI in the sandbox `worker` profile, started by the in-sandbox
 *     bridge (127.0.0.1:PORT → the socket), prompt on stdin;
 *  4. the patch extracted from the worktree with git — never what the
 *     worker says — and its event stream summarized, redacted.
 *
 * The key exists only in the host proxy's request headers. The sandbox has
 * no network; the only way out is the socket, which reaches only the
 * provider's API paths.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  type DroppedEnvVar,
  mintSandboxExecCap,
  runSandboxed,
  SANDBOX_HOME,
  SandboxExecCap,
  type SandboxedResult,
} from '@crustcore/sandbox';
import { Redactor, SecretHandle, type SecretMaterial } from '@crustcore/secrets';
import {
  BACKEND_LIMITS,
  type BackendContext,
  type BackendResult,
  type CodingBackend,
  type CommandRecord,
  decodeWorkerClaim,
  extractPatch,
  type PatchOutcome,
  type Transcript,
  type WorkerInput,
  workerRunHooks,
} from '@crustcore/verify';
import { BRIDGE_SCRIPT_PATH, MCP_BRIDGE_SCRIPT_PATH } from '../bridge-script.js';
import { locateWorkerCli, type WorkerCli } from '../cli/locate-cli.js';
import { bothBudgets, boundedModelBudget, type ModelBudget } from '../proxy/budget.js';
import { type ModelCredentialKind, type ModelRequestRecord, startModelProxy } from '../proxy/model-proxy.js';
import type { RequestPolicy } from '../proxy/request-policy.js';
import type { ModelPricing, ModelUsage, PriceForModel } from '../proxy/usage.js';
import { MODEL_NAME, type WorkerCliSpec, type WorkerMcpCommand, type WorkerSetup } from './cli-specs.js';
import { workerPrompt } from './worker-prompt.js';

/** Where things appear inside the sandbox. */
export const SANDBOX_LAYOUT = Object.freeze({
  /** The bridge script (bound read-only). */
  bridge: '/crustcore/bridge.mjs',
  /** Directory holding the model socket (bound read-only; connecting needs no write access). */
  modelDirectory: '/crustcore/model',
  modelSocket: '/crustcore/model/model.sock',
  /** The CLI's install directory (bound read-only). */
  cli: '/crustcore/cli',
  /** Port the bridge listens on, in the sandbox's own network namespace (nothing else can bind it). */
  bridgePort: 47474,
  /** The MCP bridge script and the directory of the MCP endpoints' sockets (both read-only). */
  mcpBridge: '/crustcore/mcp-bridge.mjs',
  mcpDirectory: '/crustcore/mcp',
});

/**
 * One of the user's MCP servers a worker may use (`crustcore run --mcp NAME`). The worker never
 * gets the server itself: `serve` puts CrustCore's gateway for it on a socket for one run, where
 * each call is a kernel tool call.
 */
export interface WorkerMcpServer {
  readonly name: string;
  readonly serve: (socketPath: string, worktree: string) => Promise<{ close(): Promise<void> }>;
  /** Stops what `serve` started for the task (its server outlives each attempt's endpoint). */
  readonly release?: () => Promise<void>;
}

/** What a Unix socket's path may hold on Linux (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/** Names a worker CLI's config can hold as they are (a TOML bare key, a JSON key, a tool prefix). */
const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface McpEndpoints {
  readonly commands: readonly WorkerMcpCommand[];
  readonly binds: readonly { source: string; target: string; mode: 'read-only' }[];
  close(): Promise<void>;
}

/** Starts the run's MCP endpoints in `directory` (bound read-only into the sandbox); none: nothing bound. */
async function startMcpEndpoints(
  servers: readonly WorkerMcpServer[],
  directory: string,
  worktree: string,
): Promise<McpEndpoints | string> {
  const open: { close(): Promise<void> }[] = [];
  const close = async (): Promise<void> => {
    for (const endpoint of open.splice(0)) await endpoint.close();
  };
  if (servers.length === 0) return { commands: [], binds: [], close };
  mkdirSync(directory, { mode: 0o700 });
  const node = realpathSync(process.execPath);
  const commands: WorkerMcpCommand[] = [];
  for (const [index, server] of servers.entries()) {
    // Sockets named by position: a Unix socket path has ~107 bytes, and a long name must not cut it.
    const socketPath = join(directory, `${index}.sock`);
    const problem = !MCP_SERVER_NAME.test(server.name)
      ? `the MCP server name ${JSON.stringify(server.name.slice(0, 64))} cannot be given to a worker`
      : Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES
        ? `the MCP socket path ${socketPath} is over ${MAX_SOCKET_PATH_BYTES} bytes: set TMPDIR to a shorter directory`
        : null;
    if (problem !== null) {
      await close();
      return problem;
    }
    try {
      open.push(await server.serve(socketPath, worktree));
    } catch (error) {
      await close();
      return (error as Error).message;
    }
    commands.push({
      name: server.name,
      command: node,
      args: [SANDBOX_LAYOUT.mcpBridge, `${SANDBOX_LAYOUT.mcpDirectory}/${index}.sock`],
    });
  }
  const binds = [
    { source: directory, target: SANDBOX_LAYOUT.mcpDirectory, mode: 'read-only' as const },
    { source: MCP_BRIDGE_SCRIPT_PATH, target: SANDBOX_LAYOUT.mcpBridge, mode: 'read-only' as const },
  ];
  return { commands, binds, close };
}

/** Per-run hard cap on model requests, on top of any budget. */
export const DEFAULT_MAX_MODEL_REQUESTS = 500;

/** Everything a worker run used, for the ledger and for tests; handed over before the scratch files go. */
export interface WorkerRunReport {
  readonly backend: string;
  /** The argv given to the sandbox (bridge, then the CLI). */
  readonly argv: readonly string[];
  /** The environment requested for the sandbox (before the sanitizer). */
  readonly env: Readonly<Record<string, string>>;
  /** Variables the sandbox dropped (names and reasons). */
  readonly envDropped: readonly DroppedEnvVar[];
  /** Host path of the throwaway HOME; removed right after the callback returns. */
  readonly homeDirectory: string;
  readonly modelRequests: readonly ModelRequestRecord[];
  readonly usage: ModelUsage;
  readonly budgetExhausted: boolean;
  /** Which credential the host proxy used on the worker's behalf (never the credential itself). */
  readonly credential: ModelCredentialKind;
}

/** How to build a worker backend. Only `workerCap` and `apiKey` are required. */
export interface WorkerBackendOptions {
  /** A `worker`-profile capability on the bubblewrap backend; its limits bound every run. */
  readonly workerCap: SandboxExecCap | (() => SandboxExecCap);
  /** The provider key, read when a run starts. Only the host proxy ever sees it. */
  readonly apiKey: SecretMaterial | (() => SecretMaterial | Promise<SecretMaterial>);
  /** What `apiKey` holds (default an API key; `claude-subscription`: the Claude Code sign-in's token). */
  readonly credential?: ModelCredentialKind;
  /** The installed CLI (default: `locateWorkerCli`). */
  readonly cli?: WorkerCli;
  /** Provider origin (default: the official API). http: only for loopback (tests). */
  readonly upstream?: string;
  /** Model name (default: the CLI's own default). */
  readonly model?: string;
  /** The task budget: each request's worst case is reserved against its `remaining` first, then settled. */
  readonly budget?: ModelBudget;
  /** Prices, to turn tokens into cost for the budget (a table refuses models it does not know; see `requestPolicy`). */
  readonly pricing?: ModelPricing | PriceForModel;
  /** What the proxy lets through and how it caps output (strict by default). */
  readonly requestPolicy?: RequestPolicy;
  /** Hard cap on model requests per run (default 500). */
  readonly maxModelRequests?: number;
  /** Redacts transcript, summary and commands (after the key itself, which is always redacted). */
  readonly redactor?: Redactor;
  /** Each model request as it finishes (method, path, status, bytes, tokens, refusal). */
  readonly onModelRequest?: (record: ModelRequestRecord) => void;
  /** After each run, before its scratch files are removed. */
  readonly onRunReport?: (report: WorkerRunReport) => void | Promise<void>;
  /** Parent of the per-run scratch directory (default: the OS temp dir). */
  readonly scratchDirectory?: string;
  /** The user's MCP servers this worker may use, each through CrustCore's gateway (none by default). */
  readonly mcpServers?: readonly WorkerMcpServer[];
}

/** The fields whose value is defined (exact optional properties take no `undefined`). */
function definedOnly<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

const EMPTY_TRANSCRIPT: Transcript = {
  stdoutText: '',
  stderrText: '',
  stdoutBytes: 0,
  stderrBytes: 0,
  stdoutSha256: '',
  stderrSha256: '',
};

function notRun(backend: string, failure: string): BackendResult {
  return {
    backend,
    summary: '',
    patch: { _tag: 'NoChanges' },
    selfClaimedDone: false,
    commandsRun: [],
    risks: [],
    workerRisks: [],
    exit: { exitCode: null, signal: null, timedOut: false, cancelled: false, durationMs: 0 },
    failure,
    transcript: EMPTY_TRANSCRIPT,
  };
}

/** PATH inside the sandbox: the CLI's helper directories, then the system and Node's directory. */
function sandboxPath(cli: WorkerCli): string {
  const entries = [
    ...cli.pathDirectoriesInMount.map((directory) => `${SANDBOX_LAYOUT.cli}/${directory}`),
    '/usr/local/bin',
    '/usr/bin',
    '/bin',
    '/usr/sbin',
    '/sbin',
  ];
  const nodeDirectory = dirname(realpathSync(process.execPath));
  if (!entries.includes(nodeDirectory)) entries.push(nodeDirectory);
  return entries.join(':');
}

async function extractOutcome(input: WorkerInput, context: BackendContext): Promise<PatchOutcome> {
  const extracted = await extractPatch(context.worktree, {
    allowedRoots: input.allowedRoots,
    forbiddenPaths: input.forbiddenPaths,
    ...(context.home === undefined ? {} : { home: context.home }),
  });
  if (extracted._tag === 'Left') {
    return extracted.left._tag === 'PatchRejected'
      ? { _tag: 'Rejected', rejection: extracted.left }
      : { _tag: 'ExtractFailed', message: extracted.left.message };
  }
  return extracted.right === null ? { _tag: 'NoChanges' } : { _tag: 'Patch', patch: extracted.right };
}

/** A redactor that knows the key (exact forms only: detectors would mangle model traffic). */
function keyRedactor(key: SecretMaterial): Redactor | string {
  const handle = SecretHandle.create('worker-model-api-key', 'model API key');
  if (handle._tag === 'Left') return handle.left.reason;
  const redactor = new Redactor({ detectors: [] });
  const registered = redactor.register(handle.right, key);
  if (registered._tag === 'Left') return `the API key cannot be redacted (${registered.left._tag})`;
  return redactor;
}

/** A running model proxy (what `startModelProxy` gives on success). */
type RunningProxy = Extract<Awaited<ReturnType<typeof startModelProxy>>, { _tag: 'Right' }>['right'];

/** What the CLI's run needs once its endpoints and proxy are up. */
interface LiveRun {
  readonly mcp: McpEndpoints;
  readonly setup: WorkerSetup;
  readonly stop: AbortSignal;
  readonly proxy: RunningProxy;
  readonly budget: { readonly exhausted: boolean };
}

/** What one run has once its CLI, key and sandbox capability are settled. */
interface WorkerRun {
  readonly input: WorkerInput;
  readonly context: BackendContext;
  readonly cap: SandboxExecCap;
  readonly cli: WorkerCli;
  readonly key: SecretMaterial;
  readonly redactor: Redactor;
  readonly model: string | null;
}

export class WorkerCliBackend implements CodingBackend {
  readonly name: string;
  readonly #spec: WorkerCliSpec;
  readonly #options: WorkerBackendOptions;

  constructor(spec: WorkerCliSpec, options: WorkerBackendOptions) {
    this.#spec = spec;
    this.#options = options;
    this.name = spec.name;
  }

  /** The task ended: the MCP servers kept across its attempts stop (each release is idempotent). */
  async close(): Promise<void> {
    for (const server of this.#options.mcpServers ?? []) await server.release?.();
  }

  async run(input: WorkerInput, context: BackendContext): Promise<BackendResult> {
    const options = this.#options;
    let cap: SandboxExecCap;
    try {
      cap = typeof options.workerCap === 'function' ? options.workerCap() : options.workerCap;
    } catch (error) {
      return notRun(this.name, `no worker sandbox: ${(error as Error).message}`);
    }
    if (!SandboxExecCap.isCap(cap) || cap.profileName !== 'worker') {
      return notRun(this.name, 'the worker backend needs a worker-profile SandboxExecCap');
    }
    if (cap.backend !== 'bubblewrap') {
      return notRun(this.name, 'worker CLIs run only under bubblewrap: the process jail has no network isolation');
    }
    const model = options.model ?? null;
    if (model !== null && !MODEL_NAME.test(model)) return notRun(this.name, 'the model name has an unexpected shape');
    let cli = options.cli ?? null;
    if (cli === null) {
      const located = locateWorkerCli(this.#spec.name);
      if (located._tag === 'Left') return notRun(this.name, `${located.left.message}; install it: ${located.left.fix}`);
      cli = located.right;
    }
    let key: SecretMaterial;
    try {
      key = typeof options.apiKey === 'function' ? await options.apiKey() : options.apiKey;
    } catch (error) {
      return notRun(this.name, `no model API key: ${(error as Error).message}`);
    }
    const redactor = keyRedactor(key);
    if (typeof redactor === 'string') return notRun(this.name, redactor);

    const scratch = mkdtempSync(join(options.scratchDirectory ?? tmpdir(), 'crustcore-worker-'));
    try {
      return await this.#runIn(scratch, { input, context, cap, cli, key, redactor, model });
    } finally {
      rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
    }
  }

  async #runIn(scratch: string, run: WorkerRun): Promise<BackendResult> {
    // HOME and the model socket are bound into the sandbox; the key socket never is.
    for (const directory of ['home', 'model', 'key']) mkdirSync(join(scratch, directory), { mode: 0o700 });
    const mcp = await startMcpEndpoints(
      this.#options.mcpServers ?? [],
      join(scratch, 'mcp'),
      run.context.worktree.path,
    );
    if (typeof mcp === 'string') return notRun(this.name, mcp);
    try {
      return await this.#runWithEndpoints(scratch, run, mcp);
    } finally {
      await mcp.close();
    }
  }

  async #runWithEndpoints(scratch: string, run: WorkerRun, mcp: McpEndpoints): Promise<BackendResult> {
    const setup: WorkerSetup = {
      modelOrigin: `http://127.0.0.1:${SANDBOX_LAYOUT.bridgePort}`,
      home: SANDBOX_HOME,
      model: run.model,
      mcpServers: mcp.commands,
    };
    for (const [relative, text] of Object.entries(this.#spec.homeFiles(setup))) {
      const path = join(scratch, 'home', relative);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, text, { mode: 0o600 });
    }
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    const signal = run.context.signal;
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted === true) stop.abort();
    const budget = { exhausted: false };
    const proxy = await this.#startProxy(scratch, run, () => {
      budget.exhausted = true;
      stop.abort();
    });
    if (proxy._tag === 'Left') {
      signal?.removeEventListener('abort', onAbort);
      return notRun(this.name, `model proxy: ${proxy.left.message}`);
    }
    try {
      return await this.#runCli(scratch, run, { mcp, setup, stop: stop.signal, proxy: proxy.right, budget });
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await proxy.right.close();
    }
  }

  /** The model proxy: a worker-facing socket (metered, no key) in front of the key-holding one. */
  #startProxy(scratch: string, run: WorkerRun, onBudgetExhausted: () => void) {
    const options = this.#options;
    const spec = this.#spec;
    const runBudget = boundedModelBudget({ maxRequests: options.maxModelRequests ?? DEFAULT_MAX_MODEL_REQUESTS });
    return startModelProxy({
      wire: spec.wire,
      workerSocketPath: join(scratch, 'model', 'model.sock'),
      keySocketPath: join(scratch, 'key', 'key.sock'),
      upstream: options.upstream ?? spec.defaultUpstream,
      apiKey: run.key,
      credential: options.credential ?? 'api-key',
      allowPaths: spec.allowPaths,
      responseRedactor: run.redactor,
      budget: options.budget === undefined ? runBudget : bothBudgets(runBudget, options.budget),
      maxRequests: options.maxModelRequests ?? DEFAULT_MAX_MODEL_REQUESTS,
      ...definedOnly({ pricing: options.pricing, policy: options.requestPolicy, onRequest: options.onModelRequest }),
      onBudgetExhausted,
    });
  }

  /** The CLI in the worker sandbox, behind the bridge; then the patch from the worktree. */
  async #runCli(scratch: string, run: WorkerRun, live: LiveRun): Promise<BackendResult> {
    const options = this.#options;
    const spec = this.#spec;
    const { input, context, cap, cli } = run;
    const home = join(scratch, 'home');
    const minted = mintSandboxExecCap('worker', {
      backend: 'bubblewrap',
      limits: cap.limits,
      environment: cap.environment,
      extraBinds: [
        { source: home, target: SANDBOX_HOME, mode: 'read-write' },
        { source: join(scratch, 'model'), target: SANDBOX_LAYOUT.modelDirectory, mode: 'read-only' },
        { source: BRIDGE_SCRIPT_PATH, target: SANDBOX_LAYOUT.bridge, mode: 'read-only' },
        { source: cli.mountSource, target: SANDBOX_LAYOUT.cli, mode: 'read-only' },
        ...live.mcp.binds,
      ],
    });
    if (minted._tag === 'Left') return notRun(this.name, `sandbox: ${minted.left.message}`);
    const argv: [string, ...string[]] = [
      realpathSync(process.execPath),
      SANDBOX_LAYOUT.bridge,
      '--listen',
      `127.0.0.1:${SANDBOX_LAYOUT.bridgePort}`,
      '--socket',
      SANDBOX_LAYOUT.modelSocket,
      '--',
      `${SANDBOX_LAYOUT.cli}/${cli.executableInMount}`,
      ...spec.arguments(live.setup),
    ];
    const env = { ...spec.environment(live.setup), PATH: sandboxPath(cli) };
    const profile = minted.right.profile;
    const started = await runSandboxed(minted.right, {
      argv,
      worktreeRoot: context.worktree.path,
      cwd: context.worktree.path,
      env,
      stdin: workerPrompt(input, context.worktree.path),
      timeoutMs: Math.min(profile.maxTimeoutMs, Math.max(1000, Math.floor(input.maxSeconds * 1000))),
      maxOutputBytes: Math.min(profile.maxOutputBytes, Math.max(0, Math.floor(input.maxOutputBytes))),
      ...workerRunHooks(context, live.stop),
    });
    await live.proxy.close();
    if (started._tag === 'Left') return notRun(this.name, `sandbox refused the worker: ${started.left.message}`);
    const cliArgv = argv.slice(argv.indexOf('--') + 1);
    const result = this.#result(cliArgv, started.right, await extractOutcome(input, context), run.redactor);
    await options.onRunReport?.({
      backend: this.name,
      argv,
      env,
      envDropped: started.right.envDropped,
      homeDirectory: home,
      modelRequests: live.proxy.requests(),
      usage: live.proxy.usage(),
      budgetExhausted: live.budget.exhausted,
      credential: options.credential ?? 'api-key',
    });
    return live.budget.exhausted ? { ...result, failure: 'model budget exhausted: the worker was stopped' } : result;
  }

  #result(cliArgv: readonly string[], run: SandboxedResult, patch: PatchOutcome, keyRedactor: Redactor): BackendResult {
    const redact = (text: string): string => {
      const withoutKey = keyRedactor.redactText(text);
      return this.#options.redactor === undefined ? withoutKey : this.#options.redactor.redactText(withoutKey);
    };
    const activity = this.#spec.readEvents(run.stdout.text);
    const claim = activity.lastMessage === null ? null : decodeWorkerClaim(activity.lastMessage);
    const summary =
      activity.lastMessage ??
      (activity.errors.length > 0 ? `the worker reported: ${activity.errors.join('; ')}` : (claim?.summary ?? ''));
    const claimed: CommandRecord[] = activity.commands.slice(0, BACKEND_LIMITS.commands - 1).map((command) => ({
      argv: [redact(clip(command.command, BACKEND_LIMITS.wordChars))],
      exitCode: command.exitCode,
      source: 'worker-claim' as const,
    }));
    // What CrustCore itself ran (the CLI, as the sandbox saw it) with the exit status it observed.
    const hostCommand: CommandRecord = { argv: [...cliArgv], exitCode: run.exitCode, source: 'host' };
    return {
      backend: this.name,
      summary: redact(clip(summary, BACKEND_LIMITS.summaryChars)),
      patch,
      selfClaimedDone: claim?.done ?? activity.finishedCleanly,
      commandsRun: [hostCommand, ...claimed],
      risks: patch._tag === 'Patch' ? patch.patch.risks : [],
      workerRisks: (claim?.risks ?? [])
        .slice(0, BACKEND_LIMITS.workerRisks)
        .map((risk) => redact(clip(risk, BACKEND_LIMITS.riskChars))),
      exit: {
        exitCode: run.exitCode,
        signal: run.signal,
        timedOut: run.timedOut,
        cancelled: run.cancelled,
        durationMs: run.durationMs,
      },
      failure: run.startError === null ? null : `worker did not start: ${run.startError.message}`,
      transcript: {
        stdoutText: redact(run.stdout.text),
        stderrText: redact(run.stderr.text),
        stdoutBytes: run.stdout.totalBytes,
        stderrBytes: run.stderr.totalBytes,
        stdoutSha256: run.stdout.sha256,
        stderrSha256: run.stderr.sha256,
      },
    };
  }
}
