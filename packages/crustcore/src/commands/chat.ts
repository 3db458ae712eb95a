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
import type { ApprovalChannel } from '@crustcore/runtime';
import { randomIds, runTask, SetupError, sanitizeForTerminal } from '@crustcore/runtime';
import { type Argv, detectVerifyCommand, openRepository, splitArgv } from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { requireFullBuild } from '../cli/edition.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { renderApprovalPrompt } from '../render/approval-channel.js';
import { humanNarrator } from '../render/narrator.js';

const USAGE =
  'crustcore chat [--dir DIR] [--verify ARGV] [--model PROVIDER/MODEL] [--models-config FILE] [--replay FILE] [--resume [ID|latest]] [--approve ask|auto|deny] [--thinking LEVEL] [--apply]';

const HELP = [
  'Type a request and press Enter. While the agent works:',
  '  !text        steer it now (before its next pending action)',
  '  text         queue the next request',
  '  Ctrl+C       type a steering line; Ctrl+C twice exits',
  'Commands:',
  '  /models [PROVIDER/MODEL]   list models, or switch for the next request',
  '  /branch [N]                show the conversation, or rewind it to entry N',
  '  /resume [ID|latest]        list sessions, or continue one',
  '  /sessions                  list sessions of this repository',
  '  /exit                      quit',
].join('\n');

/** Bound on requests waiting while the agent works. */
const MAX_QUEUED = 20;
const DOUBLE_PRESS_MS = 3_000;
const APPROVAL_TIMEOUT_MS = 10 * 60_000;

type AgentPack = typeof import('@crustcore/agent');

interface ChatState {
  model: string | undefined;
  sessionId: string | undefined;
  /** Commit mode: the branch the next request starts from. */
  ref: string | undefined;
  /**
   * Commit mode: which branch the code was on after each request, by the id of
   * the request's last session entry, so rewinding the conversation rewinds
   * the code the next request starts from too.
   */
  readonly refAfterEntry: Map<string, string | undefined>;
  running: AbortController | null;
  steerNext: boolean;
  lastInterruptMs: number;
  readonly steering: string[];
  readonly queue: string[];
  pendingAnswer: ((line: string | null) => void) | null;
  totals: { inputTokens: number; outputTokens: number; costMicros: number };
}

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

export const chatCommand: Command = {
  name: 'chat',
  summary: 'talk with the native coding agent; every change is verified in a sandbox before it lands',
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        dir: { type: 'string' },
        verify: { type: 'string' },
        model: { type: 'string' },
        'models-config': { type: 'string' },
        replay: { type: 'string' },
        resume: { type: 'string' },
        approve: { type: 'string' },
        thinking: { type: 'string' },
        apply: { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const approve = values.approve ?? 'ask';
    if (approve !== 'auto' && approve !== 'ask' && approve !== 'deny')
      throw new UsageError('--approve takes auto, ask or deny');
    let dir: string;
    try {
      dir = realpathSync(resolve(io.cwd, values.dir ?? '.'));
    } catch {
      throw new UsageError(`--dir ${values.dir}: no such directory`);
    }
    const repo = await openRepository(dir);
    if (repo._tag === 'Left')
      throw new UsageError(`${dir} is not a git repository (run "git init" there, or pass --dir)`);
    let verifyArgv: Argv;
    if (values.verify !== undefined) verifyArgv = argvOption('verify', values.verify);
    else {
      const detected = await detectVerifyCommand(dir);
      if (detected === null) throw new UsageError('no test command found; pass --verify "<command>"');
      verifyArgv = detected.argv;
    }
    requireFullBuild('crustcore chat');
    const agent: AgentPack = await import('@crustcore/agent').catch(() => {
      throw new UsageError(
        'crustcore chat needs @crustcore/agent, which is not installed here (npm install @crustcore/agent)',
      );
    });
    const home = crustcoreHome(io.env);
    const store = agent.SessionStore.forRepository(home, repo.right.repoId);
    const state: ChatState = {
      model: values.model,
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
    };
    if (values.resume !== undefined) {
      const id = values.resume === '' || values.resume === 'latest' ? store.latestId() : values.resume;
      if (id === null || store.open(id)._tag === 'Left') throw new UsageError(`no session ${values.resume} to resume`);
      state.sessionId = id;
    }
    const s = io.out;
    const interactive = io.stdin.isTTY === true && io.stdout.isTTY === true;
    writeLine(
      io.stdout,
      `${s.bold('crustcore chat')} ${s.dim(`in ${dir} · verify: ${verifyArgv.join(' ')} · /help for commands`)}`,
    );
    if (state.sessionId !== undefined) writeLine(io.stdout, s.dim(`resuming session ${state.sessionId}`));
    else if (store.latestId() !== null)
      writeLine(io.stdout, s.dim('a previous session exists: /resume latest to continue it'));

    const rl: Interface = createInterface({ input: io.stdin, output: io.stdout, terminal: interactive, prompt: '› ' });
    const printEvent = eventPrinter(io, state);
    const approvals = inlineApprovals(io, state, approve);
    let closed = false;
    let finish: (code: ExitCode) => void = () => undefined;
    const done = new Promise<ExitCode>((resolvePromise) => {
      finish = resolvePromise;
    });
    const prompt = (): void => {
      if (!closed && state.running === null) rl.prompt();
    };
    const exit = (code: ExitCode): void => {
      if (closed) return;
      closed = true;
      state.running?.abort();
      state.pendingAnswer?.(null);
      rl.close();
      finish(code);
    };

    const runRequest = async (text: string): Promise<void> => {
      const abort = new AbortController();
      state.running = abort;
      state.totals = { inputTokens: 0, outputTokens: 0, costMicros: 0 };
      let backend: NativeAgentBackend | null = null;
      const taskId = randomIds.taskId();
      try {
        const result = await runTask({
          dir,
          goal: text,
          home,
          env: io.env,
          verifyArgv,
          verifyArgvFromUser: values.verify !== undefined,
          makeBackend: async ({ toolGate }) => {
            const options: Record<string, string> = {};
            if (state.model !== undefined) options.model = state.model;
            if (values['models-config'] !== undefined) options.modelsConfig = resolve(io.cwd, values['models-config']);
            if (values.replay !== undefined) options.replay = resolve(io.cwd, values.replay);
            if (values.thinking !== undefined) options.thinking = values.thinking;
            if (state.sessionId !== undefined) options.resume = state.sessionId;
            backend = await agent.createNativeBackend({
              env: io.env,
              goal: text,
              toolGate,
              home,
              options,
              onEvent: printEvent,
              steering: { take: () => state.steering.splice(0, state.steering.length) },
            });
            return backend;
          },
          approvals,
          approvalMode: approve,
          canAsk: interactive || approve === 'ask',
          narrator: humanNarrator(io.stdout, s),
          ids: randomIds,
          taskId,
          commitMode: values.apply !== true,
          signal: abort.signal,
          ...(state.ref === undefined ? {} : { ref: state.ref }),
        });
        const session = (backend as NativeAgentBackend | null)?.session ?? null;
        if (session !== null) state.sessionId = session.id;
        const applied = result.outcome.journalId;
        const branch = applied?.match(/ on (crustcore\/\S+)$/)?.[1];
        if (result.outcome.kind === 'completed' && branch !== undefined) {
          state.ref = branch;
          writeLine(
            io.stdout,
            s.green(`  committed on ${branch} (the next request starts from it; merge it when you are ready)`),
          );
        }
        const lastEntry = session
          ?.pathTo()
          .filter((e) => e.type === 'message')
          .at(-1);
        if (lastEntry !== undefined) state.refAfterEntry.set(lastEntry.id, state.ref);
      } catch (error) {
        // A setup problem (no sandbox, bad --replay) or a crash: say so and keep the REPL.
        const known = error instanceof SetupError || (error as { _tag?: string })._tag === 'AgentSetupError';
        writeLine(io.stdout, `${s.red(known ? 'error:' : 'internal error:')} ${(error as Error).message}`);
      } finally {
        state.running = null;
        state.steerNext = false;
      }
    };

    const commands = async (line: string): Promise<boolean> => {
      const [name, argument] = line.trim().split(/\s+/, 2);
      switch (name) {
        case '/help':
          writeLine(io.stdout, HELP);
          return true;
        case '/exit':
        case '/quit':
          exit(ExitCode.ok);
          return true;
        case '/models': {
          if (argument !== undefined) {
            state.model = argument;
            writeLine(io.stdout, `model for the next request: ${s.cyan(argument)}`);
            return true;
          }
          const net = await import('@crustcore/net');
          const loaded =
            values['models-config'] === undefined
              ? net.defaultRegistry()
              : await net.readRegistryFile(resolve(io.cwd, values['models-config']));
          if (loaded._tag === 'Left') {
            writeLine(io.stdout, s.red(`model registry: ${loaded.left.problems.join('; ')}`));
            return true;
          }
          for (const provider of loaded.right.providers) {
            for (const model of provider.models) {
              const id = `${provider.id}/${model.id}`;
              const current = state.model === id || state.model === model.id;
              writeLine(
                io.stdout,
                `${current ? s.green('●') : ' '} ${id}${model.roles.length ? s.dim(`  (${model.roles.join(', ')})`) : ''}`,
              );
            }
          }
          writeLine(io.stdout, s.dim('/models PROVIDER/MODEL switches for the next request'));
          return true;
        }
        case '/sessions':
        case '/resume': {
          if (name === '/resume' && argument !== undefined) {
            const id = argument === 'latest' ? store.latestId() : argument;
            const opened = id === null ? null : store.open(id);
            if (opened === null || opened._tag === 'Left') writeLine(io.stdout, s.red(`no session ${argument}`));
            else {
              state.sessionId = opened.right.session.id;
              writeLine(
                io.stdout,
                `resumed ${s.cyan(state.sessionId)} (${opened.right.session.entries().length} entries)`,
              );
            }
            return true;
          }
          const list = store.list(20);
          if (list.length === 0) writeLine(io.stdout, s.dim('no sessions yet'));
          for (const item of list)
            writeLine(
              io.stdout,
              `${item.id === state.sessionId ? s.green('●') : ' '} ${item.id}  ${s.dim(new Date(item.modifiedMs).toISOString())}`,
            );
          return true;
        }
        case '/branch': {
          if (state.sessionId === undefined) {
            writeLine(io.stdout, s.dim('no conversation yet'));
            return true;
          }
          const opened = store.open(state.sessionId);
          if (opened._tag === 'Left') {
            writeLine(io.stdout, s.red(opened.left.message));
            return true;
          }
          const session = opened.right.session;
          const messages = session.pathTo().filter((e) => e.type === 'message');
          if (argument === undefined) {
            messages.slice(-30).forEach((entry) => {
              if (entry.type !== 'message') return;
              const index = messages.indexOf(entry);
              const m = entry.message;
              const text =
                m.role === 'user'
                  ? m.content
                  : m.role === 'tool'
                    ? `[${m.toolName}] ${m.content}`
                    : m.content
                        .map((p) => (p.type === 'text' ? p.text : p.type === 'tool_call' ? `[${p.name}]` : ''))
                        .join(' ');
              writeLine(
                io.stdout,
                `${String(index).padStart(4)} ${s.dim(m.role.padEnd(9))} ${sanitizeForTerminal(text.replace(/\s+/g, ' ').slice(0, 100))}`,
              );
            });
            writeLine(
              io.stdout,
              s.dim(
                '/branch N rewinds the conversation to after entry N (later entries stay in the file, on their own branch)',
              ),
            );
            return true;
          }
          const index = Number(argument);
          const target = Number.isInteger(index) ? messages[index] : undefined;
          if (target === undefined) {
            writeLine(io.stdout, s.red(`no entry ${argument}`));
            return true;
          }
          const branched = session.branchWithSummary(target.id, 'the user rewound the conversation here');
          session.close();
          if (branched._tag === 'Left') writeLine(io.stdout, s.red(branched.left.message));
          else {
            const snapshot = agent.rebuildContext(session.pathTo()).snapshot;
            writeLine(
              io.stdout,
              `rewound to entry ${index}${snapshot === null ? '' : s.dim(` (worktree snapshot ${snapshot.commit.slice(0, 12)} kept in the session)`)}`,
            );
            if (values.apply === true) {
              writeLine(
                io.stdout,
                s.dim('  --apply: changes already written to your working tree stay; use git to undo them'),
              );
            } else {
              // The code rewinds with the conversation: the branch as it was after the last request at or before N.
              const earlier = messages.slice(0, index + 1).reverse();
              const known = earlier.find((entry) => state.refAfterEntry.has(entry.id));
              state.ref = known === undefined ? undefined : state.refAfterEntry.get(known.id);
              writeLine(io.stdout, `  the next request starts from ${state.ref ?? 'HEAD'}`);
            }
          }
          return true;
        }
        default:
          return false;
      }
    };

    const drain = async (first: string): Promise<void> => {
      let next: string | undefined = first;
      while (next !== undefined && !closed) {
        await runRequest(next);
        next = state.queue.shift();
        if (next !== undefined) writeLine(io.stdout, s.dim(`next queued request: ${sanitizeForTerminal(next)}`));
      }
      prompt();
    };

    rl.on('line', (raw) => {
      const line = raw.trim();
      if (state.pendingAnswer !== null) {
        state.pendingAnswer(raw);
        return;
      }
      if (state.running !== null) {
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
        return;
      }
      if (line === '') {
        prompt();
        return;
      }
      void (async () => {
        if (line.startsWith('/')) {
          if (!(await commands(line)))
            writeLine(io.stdout, s.red(`unknown command ${line.split(/\s/)[0]}; /help lists them`));
          prompt();
          return;
        }
        await drain(line.startsWith('!') ? line.slice(1).trim() : line);
      })();
    });

    const interrupt = (): void => {
      const now = Date.now();
      if (now - state.lastInterruptMs < DOUBLE_PRESS_MS) {
        writeLine(io.stdout, '');
        exit(ExitCode.ok);
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
        prompt();
      }
    };
    rl.on('SIGINT', interrupt);
    const onProcessSigint = (): void => interrupt();
    if (!interactive) process.on('SIGINT', onProcessSigint);
    rl.on('close', () => {
      // End of input: finish the running request, then leave.
      if (state.running === null) exit(ExitCode.ok);
      else {
        const wait = setInterval(() => {
          if (state.running === null) {
            clearInterval(wait);
            exit(ExitCode.ok);
          }
        }, 100);
      }
    });
    prompt();
    try {
      return await done;
    } finally {
      process.off('SIGINT', onProcessSigint);
    }
  },
};
