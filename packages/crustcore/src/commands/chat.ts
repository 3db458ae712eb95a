/**
 * `crustcore chat`: a REPL with the native agent.
 *
 *   crustcore chat [--dir DIR] [--verify ARGV] [--model PROVIDER/MODEL] [--models-config FILE]
 *                  [--replay FILE] [--resume [ID|latest]] [--approve ask|auto|deny]
 *                  [--thinking off|low|medium|high] [--apply]
 *
 * Each request runs as one task on the same runtime `crustcore run` uses
 * (`runTask`: kernel, ledger, sandboxed verification, approvals): the agent
 * streams its text, thinking and tool calls here, CrustCore verifies the
 * change, and approvals are asked inline. The conversation is one session
 * ($CRUSTCORE_HOME/sessions/<repo-id>/): every request continues it.
 *
 * By default each verified change becomes a commit on a `crustcore/<task>`
 * branch and the next request starts from it (your working tree is never
 * touched); with `--apply` changes are written to the working tree instead,
 * and each request starts again from HEAD.
 *
 * While the agent works: a line starting with `!` steers it (taken before its
 * next pending action); other lines queue as the next request. Ctrl+C once
 * asks for a steering line; Ctrl+C twice exits (cancelling a running task).
 * Commands: /help, /models [PROVIDER/MODEL], /branch [N], /resume [ID|latest],
 * /sessions, /exit.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { AgentEvent, NativeAgentBackend } from '@crustcore/agent';
import type { ApprovalChannel, RunTaskOptions, RunTaskResult } from '@crustcore/runtime';
import { LedgerBusyError, randomIds, runTask, SetupError, sanitizeForTerminal, unguarded } from '@crustcore/runtime';
import { type Argv, detectVerifyCommand, openRepository, splitArgv } from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { requireFullBuild } from '../cli/edition.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { valuesWithConfig } from '../config/load.js';
import { renderApprovalPrompt } from '../render/approval-channel.js';
import { humanNarrator } from '../render/narrator.js';
import { chatSlashCommand } from './chat-commands.js';
import { type AgentPack, CHAT_OPTIONS, type ChatContext, type ChatState } from './chat-context.js';
import { chatSpec } from './pack-specs.js';
import { chatTaskMemory } from './task-memory.js';

/** The flags chat takes from the config files when they are not typed. */
const CHAT_CONFIG_FLAGS = ['verify', 'approve', 'model', 'models-config', 'thinking'] as const;

/** Bound on requests waiting while the agent works. */
const MAX_QUEUED = 20;
const DOUBLE_PRESS_MS = 3_000;
const APPROVAL_TIMEOUT_MS = 10 * 60_000;

const formatTokens = (n: number): string => (n < 1_000 ? String(n) : `${(n / 1_000).toFixed(1)}k`);
const formatCost = (micros: number): string => `$${(micros / 1_000_000).toFixed(4)}`;

/** Renders the agent's progress on the terminal; everything model-made is sanitized first. */
function eventPrinter(io: Io, state: ChatState): (event: AgentEvent) => void {
  const s = io.out;
  let inText = false;
  let inThinking = false;
  const endStream = (): void => {
    if (inText || inThinking) io.stdout.write('\n');
    inText = false;
    inThinking = false;
  };
  return (event) => {
    switch (event.type) {
      case 'text_delta':
        if (inThinking) endStream();
        inText = true;
        io.stdout.write(sanitizeForTerminal(event.text));
        break;
      case 'thinking_delta':
        if (!inThinking) {
          endStream();
          io.stdout.write(s.dim('thinking: '));
        }
        inThinking = true;
        io.stdout.write(s.dim(sanitizeForTerminal(event.text)));
        break;
      case 'tool_call':
        endStream();
        writeLine(
          io.stdout,
          `  ${s.cyan('⚙')} ${event.actor === 'subagent' ? s.dim('[subagent] ') : ''}${sanitizeForTerminal(event.summary)}`,
        );
        break;
      case 'tool_result': {
        endStream();
        const mark =
          event.status === 'ok'
            ? s.green('✓')
            : event.status === 'denied'
              ? s.red('denied')
              : event.status === 'failed'
                ? s.yellow('✗')
                : s.dim(event.status);
        writeLine(io.stdout, `    ${mark} ${s.dim(sanitizeForTerminal(event.summary))}`);
        break;
      }
      case 'usage':
        state.totals.inputTokens += event.inputTokens;
        state.totals.outputTokens += event.outputTokens;
        state.totals.costMicros += event.costMicros;
        break;
      case 'compaction':
        endStream();
        writeLine(
          io.stdout,
          s.dim(
            `  context compacted: ~${formatTokens(event.tokensBefore)} → ~${formatTokens(event.tokensAfter)} tokens`,
          ),
        );
        break;
      case 'steered':
        endStream();
        writeLine(io.stdout, s.yellow(`  steering: ${sanitizeForTerminal(event.text)}`));
        break;
      case 'model_error':
        endStream();
        writeLine(io.stdout, s.red(`  model error (${event.tag}): ${sanitizeForTerminal(event.message)}`));
        break;
      case 'attempt_end':
        endStream();
        writeLine(
          io.stdout,
          s.dim(
            `  tokens ${formatTokens(state.totals.inputTokens)} in / ${formatTokens(state.totals.outputTokens)} out · ${formatCost(state.totals.costMicros)} · ${event.turns} turn(s)${event.selfClaimedDone ? ' · agent says done, verifying' : ''}`,
          ),
        );
        break;
      default:
        break;
    }
  };
}

/** Approvals asked inline: the kernel's description of the operation, then one line of answer. */
function inlineApprovals(io: Io, state: ChatState, mode: 'ask' | 'auto' | 'deny'): ApprovalChannel {
  return {
    async resolve(request, context) {
      if (mode === 'auto' && !request.requiresHuman) return { decision: 'granted', by: 'policy-auto' };
      if (mode === 'deny') return { decision: 'denied', by: 'human' };
      writeLine(io.stdout, renderApprovalPrompt(request, context, io.out));
      io.stdout.write(`${io.out.bold('Approve?')} type "yes" to approve, anything else denies: `);
      const answer = await new Promise<string | null>((resolvePromise) => {
        const timer = setTimeout(() => {
          state.pendingAnswer = null;
          resolvePromise(null);
        }, APPROVAL_TIMEOUT_MS);
        state.pendingAnswer = (line) => {
          clearTimeout(timer);
          state.pendingAnswer = null;
          resolvePromise(line);
        };
      });
      const granted = answer !== null && /^\s*(y|yes)\s*$/i.test(answer);
      return { decision: granted ? 'granted' : 'denied', by: 'human' };
    },
  };
}

function argvOption(name: string, text: string): Argv {
  const split = splitArgv(text);
  if (split._tag === 'Left') throw new UsageError(`--${name}: ${split.left.message}`);
  return split.right;
}

/** The options, the repository and its test command, checked before anything starts. */
async function parseChatOptions(
  args: readonly string[],
  io: Io,
): Promise<
  Pick<ChatContext, 'values' | 'approve' | 'dir' | 'verifyArgv' | 'verifyFromUser'> & { readonly repoId: string }
> {
  const { values: typed, positionals } = parseArgs({
    args: [...args],
    options: CHAT_OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  let dir: string;
  try {
    dir = realpathSync(resolve(io.cwd, typed.dir ?? '.'));
  } catch {
    throw new UsageError(`--dir ${typed.dir}: no such directory`);
  }
  const repo = await openRepository(dir);
  if (repo._tag === 'Left')
    throw new UsageError(`${dir} is not a git repository (run "git init" there, or pass --dir)`);
  // Untyped flags from the config files (CLI > project > user > defaults; the repository's file may only tighten).
  const { values, fromConfig } = await valuesWithConfig(typed, CHAT_CONFIG_FLAGS, dir, io);
  const approve = values.approve ?? 'ask';
  if (approve !== 'auto' && approve !== 'ask' && approve !== 'deny')
    throw new UsageError('--approve takes auto, ask or deny');
  // A verify command from the repository's own config is its suggestion, not the user's approval.
  const verifyFromUser = values.verify !== undefined && fromConfig.get('verify') !== 'project';
  let verifyArgv: Argv;
  if (values.verify !== undefined) verifyArgv = argvOption('verify', values.verify);
  else {
    const detected = await detectVerifyCommand(dir);
    if (detected === null) throw new UsageError('no test command found; pass --verify "<command>"');
    verifyArgv = detected.argv;
  }
  return { values, approve, dir, verifyArgv, verifyFromUser, repoId: repo.right.repoId };
}

const freshState = (model: string | undefined): ChatState => ({
  model,
  sessionId: undefined,
  ref: undefined,
  refAfterEntry: new Map(),
  running: null,
  steerNext: false,
  lastInterruptMs: 0,
  steering: [],
  queue: [],
  pendingAnswer: null,
  totals: { inputTokens: 0, outputTokens: 0, costMicros: 0 },
});

function greet(ctx: ChatContext): void {
  const { io, state, store } = ctx;
  const s = io.out;
  writeLine(
    io.stdout,
    `${s.bold('crustcore chat')} ${s.dim(`in ${ctx.dir} · verify: ${ctx.verifyArgv.join(' ')} · /help for commands`)}`,
  );
  if (state.sessionId !== undefined) writeLine(io.stdout, s.dim(`resuming session ${state.sessionId}`));
  else if (store.latestId() !== null)
    writeLine(io.stdout, s.dim('a previous session exists: /resume latest to continue it'));
}

/** The native agent for one request, continuing the chat's session with the chat's model and options. */
function chatBackend(
  ctx: ChatContext,
  text: string,
  keep: (backend: NativeAgentBackend) => void,
): RunTaskOptions['makeBackend'] {
  const { io, values, state } = ctx;
  return async ({ toolGate, workerCap, workerPathFor }) => {
    const options: Record<string, string> = {};
    if (state.model !== undefined) options.model = state.model;
    if (values['models-config'] !== undefined) options.modelsConfig = resolve(io.cwd, values['models-config']);
    if (values.replay !== undefined) options.replay = resolve(io.cwd, values.replay);
    if (values.thinking !== undefined) options.thinking = values.thinking;
    if (state.sessionId !== undefined) options.resume = state.sessionId;
    // The user's MCP servers for this repository, through the gateway (none registered: no meta-tools).
    const gateway = await import('@crustcore/mcp-gateway');
    const extraTools = await gateway.registryGatewayFactory({
      home: ctx.home,
      env: io.env,
      repository: ctx.dir,
      // Code mode: scripts' calls go through this request's gate, the scripts run in its worker sandbox kind.
      gate: toolGate,
      workerCap,
    });
    const backend = await ctx.agent.createNativeBackend({
      env: io.env,
      goal: text,
      toolGate,
      workerCap,
      workerPathFor,
      home: ctx.home,
      options,
      ...(extraTools === undefined ? {} : { extraTools }),
      onEvent: ctx.printEvent,
      steering: { take: () => state.steering.splice(0, state.steering.length) },
    });
    keep(backend);
    return backend;
  };
}

/** After a request: remember the session, the branch it committed to, and where the code was. */
function afterRequest(ctx: ChatContext, backend: NativeAgentBackend | null, result: RunTaskResult): void {
  const { io, state } = ctx;
  const session = backend?.session ?? null;
  if (session !== null) state.sessionId = session.id;
  const branch = result.outcome.journalId?.match(/ on (crustcore\/\S+)$/)?.[1];
  if (result.outcome.kind === 'completed' && branch !== undefined) {
    state.ref = branch;
    writeLine(
      io.stdout,
      io.out.green(`  committed on ${branch} (the next request starts from it; merge it when you are ready)`),
    );
  }
  const lastEntry = session
    ?.pathTo()
    .filter((e) => e.type === 'message')
    .at(-1);
  if (lastEntry !== undefined) state.refAfterEntry.set(lastEntry.id, state.ref);
}

/** One request: one task on the runtime, streamed here. */
async function runRequest(ctx: ChatContext, text: string): Promise<void> {
  const { io, state, values, approve } = ctx;
  const abort = new AbortController();
  state.running = abort;
  state.totals = { inputTokens: 0, outputTokens: 0, costMicros: 0 };
  let backend: NativeAgentBackend | null = null;
  const taskId = randomIds.taskId();
  // Repository memory: the first request of a session gets the bundle; every request's failures are learned.
  const memory = await chatTaskMemory(io, ctx.dir, text, values, state.sessionId === undefined);
  try {
    const result = await runTask({
      ...memory.taskOptions,
      dir: ctx.dir,
      goal: text,
      home: ctx.home,
      env: io.env,
      verifyArgv: ctx.verifyArgv,
      verifyArgvFromUser: ctx.verifyFromUser,
      makeBackend: chatBackend(ctx, text, (made) => {
        backend = made;
      }),
      approvals: ctx.approvals,
      approvalMode: approve,
      canAsk: ctx.interactive || approve === 'ask',
      narrator: humanNarrator(io.stdout, io.out),
      ids: randomIds,
      taskId,
      commitMode: values.apply !== true,
      signal: abort.signal,
      ...(state.ref === undefined ? {} : { ref: state.ref }),
    });
    afterRequest(ctx, backend, result);
  } catch (error) {
    // A setup problem (no sandbox, bad --replay) or a crash: say so and keep the REPL.
    const known =
      error instanceof SetupError ||
      error instanceof LedgerBusyError ||
      (error as { _tag?: string })._tag === 'AgentSetupError';
    writeLine(io.stdout, `${io.out.red(known ? 'error:' : 'internal error:')} ${(error as Error).message}`);
  } finally {
    await memory.finish(taskId);
    state.running = null;
    state.steerNext = false;
  }
}

async function drain(ctx: ChatContext, first: string): Promise<void> {
  let next: string | undefined = first;
  while (next !== undefined && !ctx.isClosed()) {
    await runRequest(ctx, next);
    next = ctx.state.queue.shift();
    if (next !== undefined)
      writeLine(ctx.io.stdout, ctx.io.out.dim(`next queued request: ${sanitizeForTerminal(next)}`));
  }
  ctx.prompt();
}

/** A line typed while the agent works: a steering line (`!…`, or after Ctrl+C) or the next request. */
function lineWhileRunning(ctx: ChatContext, line: string): void {
  const { io, state } = ctx;
  const s = io.out;
  if (state.steerNext) {
    state.steerNext = false;
    if (line !== '') state.steering.push(line);
    return;
  }
  if (line.startsWith('!')) {
    if (line.length > 1) state.steering.push(line.slice(1).trim());
    writeLine(io.stdout, s.dim('  (steering: taken before the next action)'));
  } else if (line !== '') {
    if (state.queue.length >= MAX_QUEUED) writeLine(io.stdout, s.red('  the queue is full'));
    else {
      state.queue.push(line);
      writeLine(io.stdout, s.dim(`  queued (${state.queue.length})`));
    }
  }
}

function onLine(ctx: ChatContext, raw: string): void {
  const { io, state } = ctx;
  const line = raw.trim();
  if (state.pendingAnswer !== null) {
    state.pendingAnswer(raw);
    return;
  }
  if (state.running !== null) {
    lineWhileRunning(ctx, line);
    return;
  }
  if (line === '') {
    ctx.prompt();
    return;
  }
  void (async () => {
    if (line.startsWith('/')) {
      if (!(await chatSlashCommand(ctx, line)))
        writeLine(io.stdout, io.out.red(`unknown command ${line.split(/\s/)[0]}; /help lists them`));
      ctx.prompt();
      return;
    }
    await drain(ctx, line.startsWith('!') ? line.slice(1).trim() : line);
  })();
}

/** Ctrl+C: once asks for a steering line (or cancels a pending approval); twice exits. */
function interrupt(ctx: ChatContext): void {
  const { io, state } = ctx;
  const s = io.out;
  const now = Date.now();
  if (now - state.lastInterruptMs < DOUBLE_PRESS_MS) {
    writeLine(io.stdout, '');
    ctx.exit(ExitCode.ok);
    return;
  }
  state.lastInterruptMs = now;
  if (state.pendingAnswer !== null) {
    state.pendingAnswer(null);
    return;
  }
  if (state.running !== null) {
    state.steerNext = true;
    writeLine(io.stdout, `\n${s.yellow('steer>')} type an instruction for the agent (Ctrl+C again to exit)`);
  } else {
    writeLine(io.stdout, s.dim('\n(press Ctrl+C again to exit)'));
    ctx.prompt();
  }
}

/** Runs the REPL on `ctx` until /exit, Ctrl+C twice or the end of input. */
async function repl(ctx: ChatContext, rl: Interface, done: Promise<ExitCode>): Promise<ExitCode> {
  rl.on('line', (raw) => onLine(ctx, raw));
  rl.on('SIGINT', () => interrupt(ctx));
  const onProcessSigint = (): void => interrupt(ctx);
  if (!ctx.interactive) process.on('SIGINT', onProcessSigint);
  rl.on('close', () => {
    // End of input: finish the running request, then leave.
    if (ctx.state.running === null) ctx.exit(ExitCode.ok);
    else {
      const wait = setInterval(() => {
        if (ctx.state.running === null) {
          clearInterval(wait);
          ctx.exit(ExitCode.ok);
        }
      }, 100);
    }
  });
  ctx.prompt();
  try {
    return await done;
  } finally {
    process.off('SIGINT', onProcessSigint);
  }
}

/**
 * The model is set up once before the REPL starts: with no key for any provider that could
 * answer (or only the example's local endpoint nobody configured), chat says which provider needs
 * which key and how to store it, and exits 2 — no request is sent anywhere.
 */
async function checkModel(agent: AgentPack, home: string, io: Io, values: ChatContext['values']): Promise<void> {
  const setup = await agent.setupModel({
    home,
    env: io.env,
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.replay === undefined ? {} : { replay: resolve(io.cwd, values.replay) }),
    ...(values['models-config'] === undefined ? {} : { modelsConfig: resolve(io.cwd, values['models-config']) }),
  });
  if (setup._tag === 'Left') {
    const fix = setup.left.fix ?? 'check --replay / --models-config / --model (crustcore models lists the registry)';
    throw new UsageError(`${setup.left.message} — ${fix}`);
  }
}

async function loadAgentPack(): Promise<AgentPack> {
  requireFullBuild('crustcore chat');
  return import('@crustcore/agent').catch(() => {
    throw new UsageError(
      'crustcore chat needs @crustcore/agent, which is not installed here (npm install @crustcore/agent)',
    );
  });
}

export const chatCommand: Command = {
  ...chatSpec,
  async run(args, io) {
    const parsed = await parseChatOptions(args, io);
    const agent = await loadAgentPack();
    const home = crustcoreHome(io.env);
    await checkModel(agent, home, io, parsed.values);
    const store = agent.SessionStore.forRepository(home, parsed.repoId);
    const state = freshState(parsed.values.model);
    const resume = parsed.values.resume;
    if (resume !== undefined) {
      const id = resume === '' || resume === 'latest' ? store.latestId() : resume;
      if (id === null || store.open(id)._tag === 'Left') throw new UsageError(`no session ${resume} to resume`);
      state.sessionId = id;
    }
    const interactive = io.stdin.isTTY === true && io.stdout.isTTY === true;
    // readline draws the prompt with cursor controls of its own: it writes to the stream under the guard.
    const rl: Interface = createInterface({
      input: io.stdin,
      output: unguarded(io.stdout),
      terminal: interactive,
      prompt: '› ',
    });
    let closed = false;
    let finish: (code: ExitCode) => void = () => undefined;
    const done = new Promise<ExitCode>((resolvePromise) => {
      finish = resolvePromise;
    });
    const ctx: ChatContext = {
      ...parsed,
      io,
      home,
      agent,
      store,
      state,
      interactive,
      approvals: inlineApprovals(io, state, parsed.approve),
      printEvent: eventPrinter(io, state),
      isClosed: () => closed,
      prompt: () => {
        if (!closed && state.running === null) rl.prompt();
      },
      exit: (code) => {
        if (closed) return;
        closed = true;
        state.running?.abort();
        state.pendingAnswer?.(null);
        rl.close();
        finish(code);
      },
    };
    greet(ctx);
    return repl(ctx, rl, done);
  },
};
