/**
 * The slash commands of `crustcore chat`: /help, /exit, /models, /sessions,
 * /resume and /branch. Each answers on the terminal and returns; none runs a
 * task. Everything model-made is sanitized before it is printed.
 */
import { resolve } from 'node:path';
import { sanitizeForTerminal } from '@crustcore/runtime';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { type ChatContext, HELP } from './chat-context.js';

/** Runs one slash command; false when there is no such command. */
export async function chatSlashCommand(ctx: ChatContext, line: string): Promise<boolean> {
  const [name, argument] = line.trim().split(/\s+/, 2);
  switch (name) {
    case '/help':
      writeLine(ctx.io.stdout, HELP);
      return true;
    case '/exit':
    case '/quit':
      ctx.exit(ExitCode.ok);
      return true;
    case '/models':
      await modelsCommand(ctx, argument);
      return true;
    case '/sessions':
    case '/resume':
      if (name === '/resume' && argument !== undefined) resumeSession(ctx, argument);
      else listSessions(ctx);
      return true;
    case '/branch':
      branchCommand(ctx, argument);
      return true;
    default:
      return false;
  }
}

/** `/models`: list the registry's models, or `/models ID` to switch for the next request. */
async function modelsCommand(ctx: ChatContext, argument: string | undefined): Promise<void> {
  const { io, state, values } = ctx;
  const s = io.out;
  if (argument !== undefined) {
    state.model = argument;
    writeLine(io.stdout, `model for the next request: ${s.cyan(argument)}`);
    return;
  }
  const net = await import('@crustcore/net');
  const loaded =
    values['models-config'] === undefined
      ? net.defaultRegistry()
      : await net.readRegistryFile(resolve(io.cwd, values['models-config']));
  if (loaded._tag === 'Left') {
    writeLine(io.stdout, s.red(`model registry: ${loaded.left.problems.join('; ')}`));
    return;
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
}

function resumeSession(ctx: ChatContext, argument: string): void {
  const { io, state, store } = ctx;
  const id = argument === 'latest' ? store.latestId() : argument;
  const opened = id === null ? null : store.open(id);
  if (opened === null || opened._tag === 'Left') {
    writeLine(io.stdout, io.out.red(`no session ${argument}`));
    return;
  }
  state.sessionId = opened.right.session.id;
  writeLine(io.stdout, `resumed ${io.out.cyan(state.sessionId)} (${opened.right.session.entries().length} entries)`);
}

function listSessions(ctx: ChatContext): void {
  const { io, state, store } = ctx;
  const s = io.out;
  const list = store.list(20);
  if (list.length === 0) writeLine(io.stdout, s.dim('no sessions yet'));
  for (const item of list)
    writeLine(
      io.stdout,
      `${item.id === state.sessionId ? s.green('●') : ' '} ${item.id}  ${s.dim(new Date(item.modifiedMs).toISOString())}`,
    );
}

type Session = Extract<ReturnType<ChatContext['store']['open']>, { _tag: 'Right' }>['right']['session'];
type MessageEntry = Extract<ReturnType<Session['pathTo']>[number], { type: 'message' }>;

/** `/branch`: show the conversation, or `/branch N` to rewind it (and, in commit mode, the code) to entry N. */
function branchCommand(ctx: ChatContext, argument: string | undefined): void {
  const { io, state, store } = ctx;
  const s = io.out;
  if (state.sessionId === undefined) {
    writeLine(io.stdout, s.dim('no conversation yet'));
    return;
  }
  const opened = store.open(state.sessionId);
  if (opened._tag === 'Left') {
    writeLine(io.stdout, s.red(opened.left.message));
    return;
  }
  const session = opened.right.session;
  const messages = session.pathTo().filter((e): e is MessageEntry => e.type === 'message');
  if (argument === undefined) {
    showConversation(ctx, messages);
    return;
  }
  const index = Number(argument);
  const target = Number.isInteger(index) ? messages[index] : undefined;
  if (target === undefined) {
    writeLine(io.stdout, s.red(`no entry ${argument}`));
    return;
  }
  const branched = session.branchWithSummary(target.id, 'the user rewound the conversation here');
  session.close();
  if (branched._tag === 'Left') writeLine(io.stdout, s.red(branched.left.message));
  else rewound(ctx, session, messages, index);
}

function showConversation(ctx: ChatContext, messages: readonly MessageEntry[]): void {
  const { io } = ctx;
  const s = io.out;
  for (const entry of messages.slice(-30)) {
    const index = messages.indexOf(entry);
    const m = entry.message;
    const text =
      m.role === 'user'
        ? m.content
        : m.role === 'tool'
          ? `[${m.toolName}] ${m.content}`
          : m.content.map((p) => (p.type === 'text' ? p.text : p.type === 'tool_call' ? `[${p.name}]` : '')).join(' ');
    writeLine(
      io.stdout,
      `${String(index).padStart(4)} ${s.dim(m.role.padEnd(9))} ${sanitizeForTerminal(text.replace(/\s+/g, ' ').slice(0, 100))}`,
    );
  }
  writeLine(
    io.stdout,
    s.dim('/branch N rewinds the conversation to after entry N (later entries stay in the file, on their own branch)'),
  );
}

/** After a rewind: say where the conversation (and the code the next request starts from) went. */
function rewound(ctx: ChatContext, session: Session, messages: readonly MessageEntry[], index: number): void {
  const { io, state, values } = ctx;
  const s = io.out;
  const snapshot = ctx.agent.rebuildContext(session.pathTo()).snapshot;
  writeLine(
    io.stdout,
    `rewound to entry ${index}${snapshot === null ? '' : s.dim(` (worktree snapshot ${snapshot.commit.slice(0, 12)} kept in the session)`)}`,
  );
  if (values.apply === true) {
    writeLine(io.stdout, s.dim('  --apply: changes already written to your working tree stay; use git to undo them'));
    return;
  }
  // The code rewinds with the conversation: the branch as it was after the last request at or before N.
  const earlier = messages.slice(0, index + 1).reverse();
  const known = earlier.find((entry) => state.refAfterEntry.has(entry.id));
  state.ref = known === undefined ? undefined : state.refAfterEntry.get(known.id);
  writeLine(io.stdout, `  the next request starts from ${state.ref ?? 'HEAD'}`);
}
